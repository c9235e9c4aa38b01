import { Type } from 'typebox';
import type { App } from '../types.js';
import type { AppContext } from '../../services/context.js';

const Component = Type.Object({ ok: Type.Boolean(), configured: Type.Boolean() }, { additionalProperties: true });

export async function healthRoutes(app: App, ctx: AppContext): Promise<void> {
  const startedAt = Date.now();

  app.get('/health/live', {
    schema: { tags: ['health'], summary: 'The process runs', response: { 200: Type.Object({ status: Type.String() }) } },
  }, async () => ({ status: 'ok' }));

  app.get('/health/ready', {
    schema: {
      tags: ['health'],
      summary: 'Ready to accept work (database and critical dependencies answer)',
      response: {
        200: Type.Object({ status: Type.String(), ready: Type.Boolean() }),
        503: Type.Object({ status: Type.String(), ready: Type.Boolean(), failing: Type.Array(Type.String()), detail: Type.String(), code: Type.String() }),
      },
    },
  }, async (_request, reply) => {
    const { ready, failing } = await ctx.health.readiness();
    if (ready) return { status: 'ok', ready: true };
    return reply.status(503).send({ status: 'unavailable', ready: false, failing, detail: `not ready: ${failing.join(', ')}`, code: 'not_ready' });
  });

  app.get('/health', {
    schema: {
      tags: ['health'],
      summary: 'Health report with every component',
      response: {
        200: Type.Object({
          status: Type.String(),
          version: Type.String(),
          uptime_seconds: Type.Number(),
          edition: Type.String(),
          components: Type.Object({ database: Component, clamav: Component, grype: Component, gpg: Component, redis: Component }),
        }),
      },
    },
  }, async () => {
    const components = await ctx.health.report();
    const { ready } = await ctx.health.readiness(components);
    return {
      status: ready ? 'ok' : 'degraded',
      version: ctx.config.appVersion,
      uptime_seconds: Math.round((Date.now() - startedAt) / 10) / 100,
      edition: ctx.config.edition,
      components,
    };
  });

  app.get('/metrics', { schema: { tags: ['health'], summary: 'Prometheus metrics', hide: false } }, async (_request, reply) => {
    const body = await ctx.metrics.registry.metrics();
    return reply.type(ctx.metrics.registry.contentType).send(body);
  });
}
