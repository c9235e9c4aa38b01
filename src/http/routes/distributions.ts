import { Type } from 'typebox';
import { findDistribution } from '../../domain/distributions.js';
import type { AppContext } from '../../services/context.js';
import { Catalog, latestRow } from '../../services/packages/catalog.js';
import { actorOf } from '../auth-hook.js';
import { notFound, unprocessable } from '../errors.js';
import { keptAnswers } from '../kept-answers.js';
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
  /** The first index architecture (the only one of a built-in distribution). */
  architecture: Type.String(),
  /** What uploads may carry: the index architectures and the architecture-independent one (`all`, `noarch`). */
  architectures: Type.Array(Type.String()),
  /** The architectures an index is published for. */
  index_architectures: Type.Array(Type.String()),
  /** The default component of uploads (APT), null for RPM. */
  component: Nullable(Type.String()),
  components: Type.Array(Type.String()),
  suite: Type.String(),
  origin: Type.String(),
  label: Type.String(),
  /** Reading its files under /repo/ needs credentials. */
  private: Type.Boolean(),
  built_in: Type.Boolean(),
  /** Packages in the signed index. */
  package_count: Type.Integer(),
  osv_ecosystem: Type.String(),
  scanner_distro: Type.String(),
  published_at: Nullable(Type.String()),
  /** False until the signed index reflects the distribution's last change. */
  up_to_date: Type.Boolean(),
}));

const NameList = Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { minItems: 1, maxItems: 16 });
/** A definition: every field optional in a change; `codename` and `format` required to create (checked in the domain). */
const DefinitionFields = {
  description: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  suite: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
  origin: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  label: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  components: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { maxItems: 16 })),
  architectures: Type.Optional(NameList),
  osv_ecosystem: Type.Optional(Type.String({ maxLength: 100 })),
  scanner_distro: Type.Optional(Type.String({ maxLength: 100 })),
  private: Type.Optional(Type.Boolean()),
};

export async function distributionRoutes(app: App, ctx: AppContext): Promise<void> {
  const catalog = new Catalog(ctx.db);
  const sendPackages = keptAnswers();
  const lifecycle = ctx.repo.lifecycle;
  const distributions = ctx.repo.distributions;
  const shown = async (codename: string) => (await catalog.distributions()).find((d) => d.codename === codename)!;

  app.post('/distributions', {
    schema: {
      tags: ['distributions'],
      summary: 'Add a distribution (or revive a retired one): its empty index is published and signed at once',
      body: Type.Object({ codename: Codename, format: Type.Union([Type.Literal('deb'), Type.Literal('rpm')]), ...DefinitionFields }, { additionalProperties: false }),
      response: { ...errorResponses, 201: DistributionOut },
    },
  }, async (request, reply) => {
    const dist = await distributions.create(request.body, actorOf(request));
    return reply.code(201).send(await shown(dist.codename));
  });

  app.patch('/distributions/:codename', {
    schema: {
      tags: ['distributions'],
      summary: 'Change a distribution: Release fields, components, architectures, scanner ecosystem, private read access',
      params: Type.Object({ codename: Codename }),
      body: Type.Object(DefinitionFields, { additionalProperties: false }),
      response: { ...errorResponses, 200: DistributionOut },
    },
  }, async (request) => {
    const dist = await distributions.update(request.params.codename, request.body, actorOf(request));
    return shown(dist.codename);
  });

  app.delete('/distributions/:codename', {
    schema: {
      tags: ['distributions'],
      summary: 'Retire a distribution: its published tree is removed, its packages are kept until deleted',
      params: Type.Object({ codename: Codename }),
      response: { ...errorResponses, 200: Type.Object({ retired: Type.String() }) },
    },
  }, async (request) => {
    await distributions.retire(request.params.codename, actorOf(request));
    return { retired: request.params.codename };
  });

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
  }, async (request, reply) => {
    if (!findDistribution(request.params.codename)) throw notFound(`Distribution ${request.params.codename}`, 'unknown_distribution');
    const { page = 1, per_page = 100, q } = request.query;
    const kept = await catalog.packages({ q, distribution: request.params.codename }, { page, perPage: per_page });
    return sendPackages(reply, kept, () => pageOf(kept.items, kept.total, page, per_page));
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
