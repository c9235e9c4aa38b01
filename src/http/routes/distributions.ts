import { Type } from 'typebox';
import { findDistribution } from '../../domain/distributions.js';
import type { AppContext } from '../../services/context.js';
import { Catalog, latestRow } from '../../services/packages/catalog.js';
import { actorOf } from '../auth-hook.js';
import { notFound, unprocessable } from '../errors.js';
import { PackageFormatOut, PackageListItemOut } from '../package-schemas.js';
import { answering, errorResponses, Nullable, Page, pageOf, PageQuery } from '../schemas.js';
import type { App } from '../types.js';

const Codename = Type.String({ minLength: 1, maxLength: 50 });
const Result = answering<Awaited<ReturnType<AppContext['repo']['lifecycle']['promote']>>[number]>()(Type.Object({
  package: Type.String(), version: Type.String(), arch: Type.String(), from: Type.String(), to: Type.String(), status: Type.String(), result: Type.String(),
}));

const DistributionOut = answering<Awaited<ReturnType<Catalog['distributions']>>[number]>()(Type.Object({
  codename: Type.String(),
  description: Type.String(),
  format: PackageFormatOut,
  architecture: Type.String(),
  /** What uploads may carry: the architecture and the architecture-independent one (`all`, `noarch`). */
  architectures: Type.Array(Type.String()),
  component: Nullable(Type.String()),
  /** Packages in the signed index. */
  package_count: Type.Integer(),
  osv_ecosystem: Type.String(),
  scanner_distro: Type.String(),
  published_at: Nullable(Type.String()),
  /** False until the signed index reflects the distribution's last change. */
  up_to_date: Type.Boolean(),
}));

export async function distributionRoutes(app: App, ctx: AppContext): Promise<void> {
  const catalog = new Catalog(ctx.db);
  const lifecycle = ctx.repo.lifecycle;

  app.get('/distributions', {
    schema: { tags: ['distributions'], summary: 'Every distribution with its format, architecture, component and package count', response: { ...errorResponses, 200: Type.Array(DistributionOut) } },
  }, async () => catalog.distributions());

  app.get('/distributions/:codename/packages', {
    schema: {
      tags: ['distributions'],
      summary: 'Packages in one distribution',
      params: Type.Object({ codename: Codename }),
      querystring: Type.Object({ ...PageQuery, q: Type.Optional(Type.String({ maxLength: 200 })) }, { additionalProperties: false }),
      response: { ...errorResponses, 200: Page(PackageListItemOut) },
    },
  }, async (request) => {
    if (!findDistribution(request.params.codename)) throw notFound(`Distribution ${request.params.codename}`, 'unknown_distribution');
    const { page = 1, per_page = 100, q } = request.query;
    const { total, items } = await catalog.packages({ q, distribution: request.params.codename }, { page, perPage: per_page });
    return pageOf(items, total, page, per_page);
  });

  app.post('/distributions/promote', {
    schema: {
      tags: ['distributions'],
      summary: 'Copy a package into another distribution of the same format (form 1: name/version/arch/from_distribution/to_distribution; form 2: package/from_dist/to_dist)',
      body: Type.Object({
        name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        package: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        version: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        arch: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
        from_distribution: Type.Optional(Codename),
        to_distribution: Type.Optional(Codename),
        from_dist: Type.Optional(Codename),
        to_dist: Type.Optional(Codename),
      }, { additionalProperties: false }),
      response: { ...errorResponses, 200: Type.Object({ promoted: Type.Array(Result) }) },
    },
  }, async (request) => {
    const b = request.body;
    const name = b.name ?? b.package;
    const from = b.from_distribution ?? b.from_dist;
    const to = b.to_distribution ?? b.to_dist;
    const missing = [!name && 'name (or package)', !from && 'from_distribution (or from_dist)', !to && 'to_distribution (or to_dist)'].filter(Boolean) as string[];
    if (missing.length) throw unprocessable('validation_error', `required: ${missing.join(', ')}`, missing.map((m) => ({ loc: ['body', m.split(' ')[0]!], msg: 'required' })));
    let version = b.version;
    if (!version) {
      // Form 2 names no version: the highest one in the source distribution.
      const rows = await lifecycle.rows(name!, { distribution: from!, arch: b.arch });
      if (rows.length === 0) throw notFound(`Package ${name} in ${from}`, 'package_not_found');
      version = latestRow(rows).version;
    }
    return { promoted: await lifecycle.promote(name!, version, b.arch, from!, to!, actorOf(request)) };
  });

  app.post('/distributions/migrate', {
    schema: {
      tags: ['distributions'],
      summary: 'Copy packages (all, or the named ones) between distributions; the source keeps them',
      body: Type.Object({
        from_distribution: Type.Optional(Codename),
        to_distribution: Type.Optional(Codename),
        from_dist: Type.Optional(Codename),
        to_dist: Type.Optional(Codename),
        packages: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 10000 })),
      }, { additionalProperties: false }),
      response: { ...errorResponses, 200: Type.Object({ migrated: Type.Integer(), items: Type.Array(Result) }) },
    },
  }, async (request) => {
    const b = request.body;
    const from = b.from_distribution ?? b.from_dist;
    const to = b.to_distribution ?? b.to_dist;
    if (!from || !to) throw unprocessable('validation_error', 'required: from_distribution and to_distribution (or from_dist and to_dist)');
    const items = await lifecycle.migrate(from, to, b.packages ?? null, actorOf(request));
    return { migrated: items.filter((i) => i.result === 'copied').length, items };
  });

  app.post('/distributions/init', {
    // Form 2 sends no body at all; the schema validates an object, so an absent body is an empty one.
    preValidation: async (request) => {
      if (request.body === undefined || request.body === null) request.body = {};
    },
    schema: {
      tags: ['distributions'],
      summary: 'Initialise (form 1: one codename with a description) or re-initialise every distribution (form 2: no body) and export signed indexes',
      body: Type.Object({ codename: Type.Optional(Codename), description: Type.Optional(Type.String({ maxLength: 200 })) }, { additionalProperties: false }),
      response: { ...errorResponses, 200: Type.Object({ initialized: Type.Array(Type.String()) }) },
    },
  }, async (request) => {
    const { codename, description } = request.body;
    return { initialized: await lifecycle.initialise(codename ? [codename] : null, description ?? null, actorOf(request)) };
  });
}
