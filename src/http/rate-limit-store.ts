import type { WindowCounters } from '../adapters/counters/window-counters.js';

/**
 * The store contract of @fastify/rate-limit (its `store` option). The plugin passes the route's
 * window after the callback, which its type declarations leave out.
 */
interface RateLimitStore {
  incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow?: number): void;
  child(routeOptions: unknown): RateLimitStore;
}

const DEFAULT_WINDOW_MS = 60_000;

/**
 * A store whose counters do not depend on the URL that reached the route: the plugin's own stores
 * make one counter set per registered URL, so `/auth/token`, `/api/auth/token` and
 * `/api/v1/auth/token` each allowed the full limit. Keys come from the key generator, which names
 * the route template and the caller.
 */
export function sharedRateLimitStore(counters: WindowCounters): new () => RateLimitStore {
  const shared: RateLimitStore = {
    incr(key, callback, timeWindow = DEFAULT_WINDOW_MS) {
      counters.increment(key, timeWindow).then(({ current, ttlMs }) => callback(null, { current, ttl: ttlMs }), (error: Error) => callback(error));
    },
    child: () => shared,
  };
  return class {
    constructor() {
      return shared;
    }
  } as unknown as new () => RateLimitStore;
}
