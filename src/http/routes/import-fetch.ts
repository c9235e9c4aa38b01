/**
 * Importing catalog packages through the upload pipeline (POST /import/fetch, /import/batch,
 * /import/packages) and import groups. With `Accept: text/event-stream` an import answers as
 * Server-Sent Events: `resolved`, one `package` event per package with its pipeline outcome,
 * then `result` with the summary.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { DomainError } from '../../domain/errors.js';
import { UploadResultSchema } from '../../domain/pipeline/upload-result.js';
import type { AppContext } from '../../services/context.js';
import type { GroupView } from '../../services/imports/groups.js';
import type { ImportEvent, ImportOptions, ImportReport, ImportRequest } from '../../services/imports/importer.js';
import { principalOf } from '../auth-hook.js';
import { HttpError, toErrorAnswer, unprocessable } from '../errors.js';
import { answering, ErrorBody, errorResponses, Nullable } from '../schemas.js';
import type { App } from '../types.js';

const responses = { ...errorResponses, 424: ErrorBody };
const Name = Type.String({ minLength: 1, maxLength: 200 });
const PackageRef = {
  name: Type.Optional(Name),
  package: Type.Optional(Name),
  version: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  arch: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
  distribution: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
};
const Options = {
  with_dependencies: Type.Optional(Type.Boolean()),
  group: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
};
const PackageRefBody = Type.Object(PackageRef, { additionalProperties: false });
const FetchBody = Type.Object({ ...PackageRef, ...Options }, { additionalProperties: false });
const BatchBody = Type.Object({
  packages: Type.Array(PackageRefBody, { minItems: 1, maxItems: 500 }),
  ...Options,
  distribution: PackageRef.distribution,
}, { additionalProperties: false });
const PackagesBody = Type.Object({
  ...PackageRef,
  ...Options,
  packages: Type.Optional(Type.Array(PackageRefBody, { minItems: 1, maxItems: 500 })),
}, { additionalProperties: false });

const ImportReportOut = answering<ImportReport>()(Type.Object({
  group: Type.String(),
  /** Deepest dependency first, each with the requirement that pulled it in. */
  packages: Type.Array(Type.Object({
    name: Type.String(),
    version: Type.String(),
    arch: Type.String(),
    distribution: Type.String(),
    source_id: Type.String(),
    required_by: Nullable(Type.String()),
    relation: Nullable(Type.String()),
    /** The pipeline's outcome, `already_present` when the same file was stored before, or `failed`. */
    status: Type.String(),
    provenance: Nullable(Type.String()),
    detail: Nullable(Type.String()),
    code: Nullable(Type.String()),
    /** The upload answer, when the file went through the pipeline. */
    result: Nullable(UploadResultSchema),
  })),
  /** Requirements no package of the distribution's sources satisfies (nothing was imported for them). */
  unsatisfiable: Type.Array(Type.Object({ required_by: Type.String(), relation: Type.String(), reason: Type.String() })),
  summary: Type.Object({
    published: Type.Integer(), pending_review: Type.Integer(), quarantined: Type.Integer(), rejected: Type.Integer(), failed: Type.Integer(), already_present: Type.Integer(),
  }),
}));

const GroupOut = answering<GroupView>()(Type.Object({
  name: Type.String(),
  /** The codenames it imported into, comma-separated. */
  distribution: Type.String(),
  created_by: Nullable(Type.String()),
  created_at: Type.String(),
  count: Type.Integer(),
  packages: Type.Array(Type.Object({ name: Type.String(), version: Type.String(), arch: Type.String(), status: Type.String(), package_id: Type.String() })),
}));

function requestOf(ref: Static<typeof PackageRefBody>, fallbackDistribution: string | undefined, at: string[]): ImportRequest {
  const name = ref.name ?? ref.package;
  if (!name) throw unprocessable('validation_error', `${at.join('.')}: name (or package) is required`, [{ loc: [...at, 'name'], msg: 'name or package is required' }]);
  return { name, version: ref.version, arch: ref.arch, distribution: ref.distribution ?? fallbackDistribution };
}

function sse(reply: FastifyReply, event: string, data: unknown): void {
  reply.raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

const wantsStream = (request: FastifyRequest) => String(request.headers.accept ?? '').includes('text/event-stream');

/** Resolution errors before anything is imported (404 unknown package, 424 no catalog). */
function asHttp(error: unknown): unknown {
  if (error instanceof DomainError && error.code === 'catalog_empty') return new HttpError(424, error.code, error.message);
  return error;
}

export async function importFetchRoutes(app: App, ctx: AppContext): Promise<void> {
  const { importer, groups } = ctx.imports;

  const run = async (request: FastifyRequest, reply: FastifyReply, requests: ImportRequest[], body: { with_dependencies?: boolean; group?: string }) => {
    const principal = principalOf(request);
    const options: ImportOptions = { withDependencies: body.with_dependencies ?? true, group: body.group, user: principal.user.username, ip: request.ip };
    if (!wantsStream(request)) {
      try {
        return reply.status(200).send(await importer.run(requests, options));
      } catch (error) {
        throw asHttp(error);
      }
    }
    reply.hijack();
    reply.raw.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-request-id': request.id });
    try {
      const report: ImportReport = await importer.run(requests, options, (event: ImportEvent) => sse(reply, event.event, event));
      await ctx.durable();
      sse(reply, 'result', report);
    } catch (error) {
      const answer = toErrorAnswer(asHttp(error));
      if (answer.status >= 500) request.log.error({ err: error }, 'streamed import failed');
      sse(reply, 'error', { http_status: answer.status, ...answer.body });
    }
    reply.raw.end();
    return reply;
  };

  app.post('/import/fetch', {
    schema: {
      tags: ['import'],
      summary: 'Import one catalog package (name or package; version, arch, distribution optional) with its dependencies unless with_dependencies is false; SSE with Accept: text/event-stream',
      body: FetchBody,
      response: { ...responses, 200: ImportReportOut },
    },
  }, async (request, reply) => run(request, reply, [requestOf(request.body, undefined, ['body'])], request.body));

  app.post('/import/batch', {
    schema: {
      tags: ['import'],
      summary: 'Import several catalog packages as one group; SSE progress with Accept: text/event-stream',
      body: BatchBody,
      response: { ...responses, 200: ImportReportOut },
    },
  }, async (request, reply) => run(request, reply, request.body.packages.map((p, i) => requestOf(p, request.body.distribution, ['body', 'packages', String(i)])), request.body));

  app.post('/import/packages', {
    schema: {
      tags: ['import'],
      summary: 'Download and validate packages from a synced source: one (name/package) or several (packages); maintainer+',
      body: PackagesBody,
      response: { ...responses, 200: ImportReportOut },
    },
  }, async (request, reply) => {
    const body = request.body;
    const requests = body.packages
      ? body.packages.map((p, i) => requestOf(p, body.distribution, ['body', 'packages', String(i)]))
      : [requestOf(body, undefined, ['body'])];
    return run(request, reply, requests, body);
  });

  app.get('/import/groups', {
    schema: { tags: ['import'], summary: 'Import groups, newest first, with the packages each brought in', response: { ...responses, 200: Type.Array(GroupOut) } },
  }, async () => groups.list());

  app.delete('/import/groups/:group_name', {
    schema: {
      tags: ['import'],
      summary: 'Delete an import group; delete_packages=true also removes the packages it imported that no other group holds; audit IMPORT_GROUP_DELETE',
      params: Type.Object({ group_name: Type.String({ minLength: 1, maxLength: 100 }) }),
      querystring: Type.Object({ delete_packages: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
      response: { ...responses, 200: Type.Object({ group: Type.String(), deleted_packages: Type.Integer(), kept_packages: Type.Integer() }) },
    },
  }, async (request) => {
    const principal = principalOf(request);
    return groups.delete(request.params.group_name, request.query.delete_packages ?? false, { username: principal.user.username, ip: request.ip });
  });
}
