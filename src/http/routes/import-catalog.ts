/**
 * Reading the import catalogs: search (paged like every large collection) and dependency
 * resolution. Both answer 424 `catalog_empty` until a source has been synchronised.
 */
import { Type } from 'typebox';
import { DomainError } from '../../domain/errors.js';
import type { AppContext } from '../../services/context.js';
import type { CatalogItem } from '../../services/imports/catalog-query.js';
import { HttpError } from '../errors.js';
import { answering, ErrorBody, errorResponses, Nullable, Page, pageOf } from '../schemas.js';
import type { App } from '../types.js';

const responses = { ...errorResponses, 424: ErrorBody };

const Item = answering<CatalogItem>()(Type.Object({
  name: Type.String(), package: Type.String(), version: Type.String(), arch: Type.String(), format: Type.String(),
  summary: Type.String(), size: Type.Integer(), sha256: Type.String(), filename: Type.String(),
  source_id: Type.String(), source: Type.String(), distribution: Type.String(),
}));
const Pulled = Type.Object({
  name: Type.String(), version: Type.String(), arch: Type.String(), source_id: Type.String(), source: Type.String(),
  filename: Type.String(), size: Type.Integer(), sha256: Type.String(),
  reason: Type.String(), required_by: Nullable(Type.String()), relation: Nullable(Type.String()), depth: Type.Integer(),
});
const Resolution = Type.Object({
  package: Type.String(), version: Type.String(), arch: Type.String(), distribution: Type.String(),
  packages: Type.Array(Pulled),
  already_present: Type.Array(Type.Object({ required_by: Type.String(), relation: Type.String() })),
  unsatisfiable: Type.Array(Type.Object({ required_by: Type.String(), relation: Type.String(), reason: Type.String() })),
  total: Type.Integer(),
  resolvable: Type.Boolean(),
});

/** DomainError kinds have no 424; the catalog-empty refusal is mapped here. */
async function catalogCall<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof DomainError && error.code === 'catalog_empty') throw new HttpError(424, error.code, error.message);
    throw error;
  }
}

export async function importCatalogRoutes(app: App, ctx: AppContext): Promise<void> {
  const catalog = ctx.imports.catalog;

  app.get('/import/search', {
    schema: {
      tags: ['import'],
      summary: 'Search the synced catalogs by package name (`limit` is an alias of per_page); 424 until a catalog exists',
      querystring: Type.Object({
        q: Type.Optional(Type.String({ maxLength: 200 })),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
        source_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
        page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
        per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
      }, { additionalProperties: false }),
      response: { ...responses, 200: Page(Item) },
    },
  }, async (request) => {
    const { q = '', limit, source_id, page = 1 } = request.query;
    const perPage = request.query.per_page ?? limit ?? 100;
    const { items, total } = await catalogCall(() => catalog.search(q, page, perPage, source_id));
    return pageOf(items, total, page, perPage);
  });

  app.get('/import/resolve/:package_name', {
    schema: {
      tags: ['import'],
      summary: 'Dependency closure of a catalog package for a distribution: each package with the requirement that pulled it in, what the distribution already has, and what nothing satisfies',
      params: Type.Object({ package_name: Type.String({ minLength: 1, maxLength: 200 }) }),
      querystring: Type.Object({
        distribution: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
        arch: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
        version: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      }, { additionalProperties: false }),
      response: { ...responses, 200: Resolution },
    },
  }, async (request) => {
    const { distribution, root, closure, sources } = await catalogCall(() => catalog.resolve(request.params.package_name, request.query));
    return {
      package: root.name, version: root.version, arch: root.arch, distribution,
      packages: closure.selected.map((s) => ({
        name: s.pkg.name, version: s.pkg.version, arch: s.pkg.arch, source_id: s.pkg.sourceId, source: sources.get(s.pkg.sourceId)?.name ?? '',
        filename: s.pkg.location, size: s.pkg.size, sha256: s.pkg.sha256,
        reason: s.requiredBy === null ? 'requested' : `${s.requiredBy} requires ${s.relation}`,
        required_by: s.requiredBy, relation: s.relation, depth: s.depth,
      })),
      already_present: closure.present.map((p) => ({ required_by: p.requiredBy, relation: p.relation })),
      unsatisfiable: closure.unsatisfiable.map((u) => ({ required_by: u.requiredBy, relation: u.relation, reason: u.reason })),
      total: closure.selected.length,
      resolvable: closure.unsatisfiable.length === 0,
    };
  });
}
