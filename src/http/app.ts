import { randomUUID } from 'node:crypto';
import cors from '@fastify/cors';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import multipart from '@fastify/multipart';
import { MAX_SOURCE_FILES } from './routes/upload.js';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { AppContext } from '../services/context.js';
import { installAuth } from './auth-hook.js';
import { clientErrorAnswer, frameworkErrorAnswer, installErrorHandlers, tooManyRequests } from './errors.js';
import { installInputGuard } from './input-guard.js';
import { sharedRateLimitStore } from './rate-limit-store.js';
import { PER_IP_LIMITS, RATE_LIMITS } from './rate-limits.js';
import { API_PREFIXES, installRouteGuard, type RegisteredRoute } from './route-guard.js';
import { validatorCompiler } from './validation.js';
import { lazySerializerFactory } from './lazy-serializers.js';
import { DeferredCompilations } from './deferred-compilations.js';
import { apiRoutes } from './routes/index.js';
import { countDownloads } from './download-counter.js';
import { repositoryRoutes } from './routes/repository.js';
import { uiRoutes } from './routes/ui.js';
import type { App } from './types.js';
import { changesState } from './session-cookie.js';

const JSON_BODY_LIMIT = 1024 * 1024;

export interface BuiltApp {
  app: App;
  routes: RegisteredRoute[];
}

function installMetrics(app: FastifyInstance, ctx: AppContext): void {
  app.addHook('onResponse', async (request, reply) => {
    const path = request.routeOptions.config?.template ?? 'unmatched';
    ctx.metrics.httpRequests.inc({ method: request.method, path, status: String(reply.statusCode) });
    ctx.metrics.httpDuration.observe({ method: request.method, path }, reply.elapsedTime / 1000);
  });
}

async function installRateLimits(app: FastifyInstance, ctx: AppContext): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    hook: 'preHandler',
    store: sharedRateLimitStore(ctx.rateCounters),
    // Per route template, whichever prefix (/, /api, /api/v1) served the request.
    keyGenerator: (request) => {
      const { limit, template } = request.routeOptions.config ?? {};
      const principal = request.principal;
      return limit && !PER_IP_LIMITS.has(limit) && principal ? `${template}:u:${principal.user.id}` : `${template}:ip:${request.ip}`;
    },
    errorResponseBuilder: (_request, context) => tooManyRequests(Math.max(1, Math.ceil(context.ttl / 1000))),
  });
}

/** Attaches each route's limit from the Limits table; the `rate_limits` setting overrides, 0 = off. */
function applyRouteLimits(app: FastifyInstance, ctx: AppContext): void {
  app.addHook('onRoute', (route) => {
    const limit = route.config?.limit;
    if (!limit || ctx.config.rateLimitsOff) return;
    const configured = async () => {
      const overrides = (await ctx.settings.get('rate_limits')) as Record<string, number>;
      return overrides[limit] ?? RATE_LIMITS[limit];
    };
    route.config = {
      ...route.config,
      rateLimit: {
        timeWindow: 60_000,
        max: async () => Math.max(1, await configured()),
        allowList: async () => (await configured()) === 0,
      },
    };
  });
}

async function installDocs(app: FastifyInstance, ctx: AppContext): Promise<void> {
  await app.register(swagger, {
    openapi: {
      info: { title: 'Tollgate', description: 'Private APT and RPM repository manager', version: ctx.config.appVersion },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
  });
  if (ctx.config.env === 'production') return;
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

export async function buildApp(ctx: AppContext): Promise<BuiltApp> {
  const deferred = new DeferredCompilations();
  const app = Fastify({
    loggerInstance: ctx.log as FastifyBaseLogger,
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,100}$/.test(given) ? given : randomUUID();
    },
    trustProxy: ctx.config.trustedProxies.length ? ctx.config.trustedProxies : false,
    bodyLimit: JSON_BODY_LIMIT,
    // Slow or stalled clients cannot hold connections: headers and the whole request (body
    // included) each have a deadline, checked every second; past it the client gets a 408.
    requestTimeout: ctx.config.httpRequestTimeoutMs,
    http: { headersTimeout: ctx.config.httpHeadersTimeoutMs, requestTimeout: ctx.config.httpRequestTimeoutMs, connectionsCheckingInterval: 1000 },
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, maxParamLength: 500 },
    ajv: { customOptions: { removeAdditional: false } },
    // Response serializers are built at a route's first answer, not for every route at start-up.
    schemaController: { compilersFactory: { buildSerializer: lazySerializerFactory(deferred) } },
    frameworkErrors: frameworkErrorAnswer,
    clientErrorHandler: clientErrorAnswer,
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(validatorCompiler(deferred));
  app.decorate('compileAhead', (method: string, path: string) => deferred.compileNow(method, path));

  const routes: RegisteredRoute[] = [];
  installRouteGuard(app, routes);
  applyRouteLimits(app, ctx);
  installErrorHandlers(app);
  installMetrics(app, ctx);
  installInputGuard(app);
  app.addHook('onSend', async (request, reply) => {
    void reply.header('x-request-id', request.id);
    // A change is reported once its commits would survive a power loss (adapters/db/durability.ts).
    if (changesState(request.method) && reply.statusCode < 400) await ctx.durable();
  });

  await app.register(helmet, { contentSecurityPolicy: false, crossOriginResourcePolicy: { policy: 'same-site' } });
  await app.register(cors, {
    origin: ctx.config.corsOrigins.length ? ctx.config.corsOrigins : false,
    credentials: true,
  });
  await app.register(formbody, { bodyLimit: JSON_BODY_LIMIT });
  await app.register(multipart, {
    // files: the package, or a source package's .dsc (or .changes) and up to MAX_SOURCE_FILES files it names.
    limits: { fileSize: ctx.config.maxUploadBytes, files: 1 + MAX_SOURCE_FILES, fields: 20, fieldSize: 64 * 1024, parts: 25 + MAX_SOURCE_FILES },
    throwFileSizeLimit: true,
  });
  installAuth(app, ctx);
  await installRateLimits(app, ctx);
  await installDocs(app, ctx);

  await repositoryRoutes(app, ctx);
  await uiRoutes(app, ctx);
  countDownloads(app, ctx);
  for (const prefix of API_PREFIXES) {
    await app.register(async (scope) => {
      if (prefix) {
        // The prefixed copies are aliases: keep the generated documentation to the base paths.
        scope.addHook('onRoute', (route) => {
          route.schema = { ...(route.schema ?? {}), hide: true };
        });
      }
      await apiRoutes(scope.withTypeProvider<TypeBoxTypeProvider>(), ctx);
    }, { prefix });
  }
  // A large catalog's first resolution is what the warm-up prepares; its route's schemas too.
  ctx.imports.afterResolverWarmUp(() => app.compileAhead('GET', '/import/resolve/:package_name'));
  return { app, routes };
}
