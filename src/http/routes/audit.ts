import { Type } from 'typebox';
import type { App } from '../types.js';
import { AuditQueries, type AuditFilter, type AuditIndexEntry } from '../../services/audit-queries.js';
import type { AppContext } from '../../services/context.js';
import { answering, errorResponses, Page, PageQuery, pageOf } from '../schemas.js';

const EntryOut = answering<AuditIndexEntry>()(Type.Object({
  seq: Type.Integer(),
  timestamp: Type.String(),
  action: Type.String(),
  user: Type.Union([Type.String(), Type.Null()]),
  result: Type.String(),
  package: Type.Union([Type.String(), Type.Null()]),
  version: Type.Union([Type.String(), Type.Null()]),
  detail: Type.Union([Type.String(), Type.Null()]),
  ip: Type.Union([Type.String(), Type.Null()]),
  hash: Type.String(),
}));

const AuditQuery = Type.Object({
  ...PageQuery,
  package: Type.Optional(Type.String({ maxLength: 200 })),
  action: Type.Optional(Type.String({ maxLength: 50 })),
  result: Type.Optional(Type.Union([Type.Literal('SUCCESS'), Type.Literal('FAILURE'), Type.Literal('WARNING')])),
  user: Type.Optional(Type.String({ maxLength: 200 })),
  q: Type.Optional(Type.String({ maxLength: 200 })),
}, { additionalProperties: false });

export async function auditRoutes(app: App, ctx: AppContext): Promise<void> {
  const entries = new AuditQueries(ctx.db);
  async function query(filter: AuditFilter, page: number, perPage: number) {
    const { items, total } = await entries.page(filter, page, perPage);
    return pageOf(items, total, page, perPage);
  }

  const listSchema = (summary: string) => ({
    tags: ['audit'], summary, querystring: AuditQuery, response: { 200: Page(EntryOut), ...errorResponses },
  });

  app.get('/artifacts/audit/logs', { schema: listSchema('Audit entries, newest first, filtered') }, async (request) => {
    const { page = 1, per_page = 100, ...filter } = request.query;
    return query(filter, page, per_page);
  });

  app.get('/audit/logs', { schema: listSchema('Recent audit entries, newest first') }, async (request) => {
    const { page = 1, per_page = 100, ...filter } = request.query;
    return query(filter, page, per_page);
  });

  app.get('/audit/package/:name', {
    schema: {
      tags: ['audit'],
      summary: 'Full history of one package',
      params: Type.Object({ name: Type.String({ maxLength: 200 }) }),
      querystring: Type.Object(PageQuery),
      response: { 200: Page(EntryOut), ...errorResponses },
    },
  }, async (request) => {
    const { page = 1, per_page = 100 } = request.query;
    return query({ package: request.params.name }, page, per_page);
  });

  app.get('/audit/verify', {
    schema: {
      tags: ['audit'],
      summary: 'Check the hash chain of every audit file',
      response: {
        200: Type.Object({
          ok: Type.Boolean(),
          entries: Type.Integer(),
          files: Type.Integer(),
          first_broken: Type.Union([
            Type.Object({ file: Type.String(), line: Type.Integer(), seq: Type.Union([Type.Integer(), Type.Null()]), reason: Type.String() }),
            Type.Null(),
          ]),
        }),
        ...errorResponses,
      },
    },
  }, async () => ctx.audit.verify());
}
