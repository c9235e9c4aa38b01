/**
 * SBOMs: per package, per distribution (streamed), a preview, and SARIF (who may call which is
 * in permissions.ts). Enterprise-only: Community answers 402 after authentication and roles.
 */
import { Readable } from 'node:stream';
import { Type } from 'typebox';
import type { AppContext } from '../../services/context.js';
import { SbomService, type SbomDocument } from '../../services/sbom/index.js';
import { requireEnterprise } from '../edition.js';
import { ErrorBody, errorResponses } from '../schemas.js';
import type { App } from '../types.js';

const Format = Type.Union([Type.Literal('cyclonedx'), Type.Literal('spdx')], { default: 'cyclonedx' });
const Codename = Type.String({ minLength: 1, maxLength: 50 });
const Severity = Type.Union([Type.Literal('critical'), Type.Literal('high'), Type.Literal('medium'), Type.Literal('low'), Type.Literal('negligible')]);
// The SBOM and SARIF documents follow their standards' own JSON schemas, which these open objects
// do not restate; the SBOMs are streamed as text, and the SARIF log is serialised with every field
// it carries.
const Document = Type.Object({}, { additionalProperties: true, description: 'CycloneDX 1.5 or SPDX 2.3 JSON, sent as an attachment' });
const SarifLog = Type.Object({}, { additionalProperties: true, description: 'SARIF 2.1.0 log, sent as an attachment' });
const responses = { ...errorResponses, 402: ErrorBody };

/** The part of a Fastify reply these handlers use. */
interface Reply {
  header(name: string, value: string): unknown;
  send(body: unknown): unknown;
}

function attachment(reply: Reply, filename: string, type: string): void {
  reply.header('content-type', type);
  reply.header('content-disposition', `attachment; filename="${filename}"`);
  reply.header('cache-control', 'no-store');
}

export async function sbomRoutes(app: App, ctx: AppContext): Promise<void> {
  // Built here rather than in the context: it holds no state beyond the database and the file store.
  const sbom = new SbomService(ctx.db, ctx.repo.files, { toolVersion: ctx.config.appVersion, appUrl: ctx.config.appUrl });
  const send = (reply: Reply, doc: SbomDocument) => {
    attachment(reply, doc.filename, 'application/json; charset=utf-8');
    // Text pieces of the document as they are produced: the whole export is never in memory.
    return reply.send(Readable.from(doc.body, { objectMode: false }));
  };

  app.get('/sbom/export', {
    schema: {
      tags: ['sbom'],
      summary: 'SBOM of every package the distribution publishes, streamed (CycloneDX 1.5 or SPDX 2.3)',
      querystring: Type.Object({ format: Type.Optional(Format), distribution: Codename }, { additionalProperties: false }),
      response: { ...responses, 200: Document },
    },
  }, async (request, reply) => {
    requireEnterprise(ctx, 'sbom');
    return send(reply, await sbom.distributionDocument(request.query.format ?? 'cyclonedx', request.query.distribution));
  });

  app.get('/sbom/preview', {
    schema: {
      tags: ['sbom'],
      summary: 'The first packages of a distribution SBOM',
      querystring: Type.Object({
        format: Type.Optional(Format),
        distribution: Codename,
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 10 })),
      }, { additionalProperties: false }),
      response: { ...responses, 200: Document },
    },
  }, async (request, reply) => {
    requireEnterprise(ctx, 'sbom');
    return send(reply, await sbom.distributionDocument(request.query.format ?? 'cyclonedx', request.query.distribution, request.query.limit ?? 10));
  });

  app.get('/sbom/sarif', {
    schema: {
      tags: ['sbom'],
      summary: "The distribution's findings as a SARIF 2.1.0 log (GitHub and GitLab code scanning)",
      querystring: Type.Object({ distribution: Codename, min_severity: Type.Optional(Severity) }, { additionalProperties: false }),
      response: { ...responses, 200: SarifLog },
    },
  }, async (request, reply) => {
    requireEnterprise(ctx, 'sbom');
    const { filename, log } = await sbom.sarif(request.query.distribution, request.query.min_severity ?? null);
    attachment(reply, filename, 'application/sarif+json');
    return log;
  });

  app.get('/sbom/:name/:version', {
    schema: {
      tags: ['sbom'],
      summary: 'SBOM of one package version: the package, what it embeds, its dependencies and vulnerabilities',
      params: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }), version: Type.String({ minLength: 1, maxLength: 200 }) }),
      querystring: Type.Object({
        format: Type.Optional(Format),
        arch: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
        distribution: Type.Optional(Codename),
      }, { additionalProperties: false }),
      response: { ...responses, 200: Document },
    },
  }, async (request, reply) => {
    requireEnterprise(ctx, 'sbom');
    const { format, arch, distribution } = request.query;
    return send(reply, await sbom.packageDocument(format ?? 'cyclonedx', request.params.name, request.params.version, { arch, distribution }));
  });
}
