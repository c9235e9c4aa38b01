import type { FastifyInstance } from 'fastify';
import { ROUTE_ACCESS, type Access } from './permissions.js';
import { limitFor } from './rate-limits.js';

export const API_PREFIXES = ['', '/api', '/api/v1'] as const;

/** `/api/v1/upload/` → `/upload`; the key under which a route is listed in ROUTE_ACCESS. */
export function routeTemplate(url: string, prefix: string): string {
  const apiPrefix = (API_PREFIXES as readonly string[]).includes(prefix) ? prefix : '';
  let path = apiPrefix && url.startsWith(apiPrefix) ? url.slice(apiPrefix.length) : url;
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  return path || '/';
}

export interface RegisteredRoute {
  method: string;
  template: string;
  url: string;
  access: Access;
}

/**
 * Every route passes through here at registration: it must have an entry in the permission table,
 * or start-up fails. The entry and the route's rate limit are attached to the route's config.
 */
export function installRouteGuard(app: FastifyInstance, registered: RegisteredRoute[]): void {
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const template = routeTemplate(route.url ?? route.path ?? '', route.prefix ?? '');
    for (const raw of methods) {
      const method = raw === 'HEAD' ? 'GET' : raw;
      const access = ROUTE_ACCESS[`${method} ${template}`];
      if (access === undefined) {
        throw new Error(`route ${method} ${template} has no entry in the permission table (src/http/permissions.ts)`);
      }
      route.config = { ...(route.config as object), access, template, limit: limitFor(method, template) };
      if (raw !== 'HEAD') registered.push({ method, template, url: route.url ?? '', access });
    }
  });
}
