/**
 * Import sources and catalog sync. Sources are a small admin list, answered as a plain array.
 * Sync answers JSON, or Server-Sent Events for `POST /import/sources/{id}/sync` (each event
 * carries `status` and `count`).
 */
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../../services/context.js';
import type { ImportService } from '../../services/imports/index.js';
import type { SyncEvent } from '../../services/imports/sync.js';
import { actorOf, principalOf } from '../auth-hook.js';
import { toErrorAnswer } from '../errors.js';
import { answering, errorResponses, Nullable } from '../schemas.js';
import type { App } from '../types.js';

const Words = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 20 });
const SourceFields = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  type: Type.Union([Type.Literal('apt'), Type.Literal('rpm')]),
  url: Type.Union([Type.String({ maxLength: 2000 }), Type.Null()]),
  suite: Type.Union([Type.String({ maxLength: 100 }), Type.Null()]),
  components: Type.Union([Words, Type.Null()]),
  architectures: Type.Union([Words, Type.Null()]),
  baseurl: Type.Union([Type.String({ maxLength: 2000 }), Type.Null()]),
  key: Type.Union([Type.String({ maxLength: 1024 * 1024 }), Type.Null()]),
  allow_unsigned: Type.Boolean(),
  distribution: Type.String({ minLength: 1, maxLength: 50 }),
};
const optional = {
  url: Type.Optional(SourceFields.url), suite: Type.Optional(SourceFields.suite), components: Type.Optional(SourceFields.components),
  architectures: Type.Optional(SourceFields.architectures), baseurl: Type.Optional(SourceFields.baseurl), key: Type.Optional(SourceFields.key),
  allow_unsigned: Type.Optional(SourceFields.allow_unsigned),
};
const SourceCreate = Type.Object({ ...optional, name: SourceFields.name, type: SourceFields.type, distribution: SourceFields.distribution }, { additionalProperties: false });
const SourcePatch = Type.Object(
  { ...optional, name: Type.Optional(SourceFields.name), type: Type.Optional(SourceFields.type), distribution: Type.Optional(SourceFields.distribution) },
  { additionalProperties: false, minProperties: 1 },
);
const SyncState = Type.Object({
  status: Type.String(), count: Type.Integer(), last_sync: Type.Union([Type.String(), Type.Null()]),
  last_success: Type.Union([Type.String(), Type.Null()]), last_error: Type.Union([Type.String(), Type.Null()]),
});
const SourceOut = answering<Awaited<ReturnType<ImportService['sources']['view']>>>()(Type.Object({
  id: Type.String(), name: Type.String(), type: Type.String(), url: Type.Union([Type.String(), Type.Null()]),
  suite: Type.Union([Type.String(), Type.Null()]), components: Type.Array(Type.String()), architectures: Type.Array(Type.String()),
  baseurl: Type.Union([Type.String(), Type.Null()]), distribution: Type.String(), allow_unsigned: Type.Boolean(),
  key_fingerprints: Type.Array(Type.String()), created_by: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(), updated_at: Type.String(), sync: SyncState,
}));
const SyncResultOut = answering<Awaited<ReturnType<ImportService['syncs']['sync']>>>()(Type.Object({
  source_id: Type.String(), source: Type.String(), status: Type.String(), count: Type.Integer(),
  detail: Type.Union([Type.String(), Type.Null()]), code: Type.Union([Type.String(), Type.Null()]),
}));
const SourceSyncStatusOut = answering<Awaited<ReturnType<ImportService['syncStatus']>>[number]>()(Type.Object({
  source_id: Type.String(), name: Type.String(), type: Type.String(), distribution: Type.String(), ...SyncState.properties,
}));
const SyncScheduleOut = answering<Awaited<ReturnType<ImportService['schedule']>>>()(Type.Object({
  /** False on the Community edition, where scheduled jobs other than expiry do not run. */
  enabled: Type.Boolean(),
  time: Type.String(),
  timezone: Type.String(),
  /** The setting that holds `time` (HH:MM). */
  setting: Type.String(),
  next_run: Nullable(Type.String()),
  last_run: Nullable(Type.String()),
  last_result: Nullable(Type.String()),
  /** How many sources the run would synchronise. */
  sources: Type.Integer(),
}));
const SourceParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

function sse(reply: FastifyReply, event: string, data: unknown): void {
  reply.raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

export async function importSourceRoutes(app: App, ctx: AppContext): Promise<void> {
  const { sources, syncs } = ctx.imports;

  app.get('/import/sources', {
    schema: { tags: ['import'], summary: 'Configured upstream sources with their sync state (keys given by fingerprint)', response: { ...errorResponses, 200: Type.Array(SourceOut) } },
  }, async () => Promise.all((await sources.list()).map((s) => sources.view(s))));

  app.post('/import/sources', {
    schema: {
      tags: ['import'],
      summary: 'Add a source: APT {name, type: "apt", url, suite, components, architectures, key, distribution} or RPM {name, type: "rpm", baseurl, key, distribution}; key required unless allow_unsigned',
      body: SourceCreate,
      response: { ...errorResponses, 201: SourceOut },
    },
  }, async (request, reply) => {
    const created = await sources.create(request.body, actorOf(request));
    return reply.status(201).send(await sources.view(created));
  });

  app.patch('/import/sources/:id', {
    schema: { tags: ['import'], summary: 'Change a source; a new key or location makes the next sync verify everything again', params: SourceParams, body: SourcePatch, response: { ...errorResponses, 200: SourceOut } },
  }, async (request) => sources.view(await sources.update(request.params.id, request.body, actorOf(request))));

  app.delete('/import/sources/:id', {
    schema: { tags: ['import'], summary: 'Remove a source and its catalog (imported packages stay)', params: SourceParams, response: { ...errorResponses, 204: Type.Null() } },
  }, async (request, reply) => {
    await sources.delete(request.params.id, actorOf(request));
    return reply.status(204).send(null);
  });

  app.post('/import/sources/:id/sync', {
    schema: { tags: ['import'], summary: 'Synchronise one source\'s catalog, answered as Server-Sent Events ({status, count} each); downloads no package', params: SourceParams },
  }, async (request, reply) => {
    const user = principalOf(request).user.username;
    // Unknown sources answer a plain 404 before the stream starts.
    await sources.get(request.params.id);
    reply.hijack();
    reply.raw.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-request-id': request.id });
    try {
      const result = await syncs.sync(request.params.id, user, (event: SyncEvent) => sse(reply, 'progress', event));
      sse(reply, 'result', result);
    } catch (error) {
      const answer = toErrorAnswer(error);
      if (answer.status >= 500) request.log.error({ err: error }, 'streamed sync failed');
      sse(reply, 'error', { status: 'failed', count: 0, http_status: answer.status, ...answer.body });
    }
    reply.raw.end();
  });

  app.post('/import/sync', {
    schema: { tags: ['import'], summary: 'Synchronise every source\'s catalog', response: { ...errorResponses, 200: Type.Object({ results: Type.Array(SyncResultOut) }) } },
  }, async (request) => ({ results: await syncs.syncAll(principalOf(request).user.username) }));

  app.post('/import/sync/:source_id', {
    schema: { tags: ['import'], summary: 'Synchronise one source\'s catalog', params: Type.Object({ source_id: Type.String({ minLength: 1, maxLength: 100 }) }), response: { ...errorResponses, 200: SyncResultOut } },
  }, async (request) => syncs.sync(request.params.source_id, principalOf(request).user.username));

  app.get('/import/sync-status', {
    schema: { tags: ['import'], summary: 'Sync state of every source', response: { ...errorResponses, 200: Type.Array(SourceSyncStatusOut) } },
  }, async () => ctx.imports.syncStatus());

  app.get('/import/sync-schedule', {
    schema: { tags: ['import'], summary: 'When the daily catalog sync of all sources runs next (UTC)', response: { ...errorResponses, 200: SyncScheduleOut } },
  }, async () => ctx.imports.schedule());
}
