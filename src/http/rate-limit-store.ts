import type { Redis } from 'ioredis';

/**
 * The store contract of @fastify/rate-limit (its `store` option). The plugin passes the route's
 * window after the callback, which its type declarations leave out.
 */
interface RateLimitStore {
  incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow?: number): void;
  child(routeOptions: unknown): RateLimitStore;
}

const MAX_LOCAL_KEYS = 10_000;
const DEFAULT_WINDOW_MS = 60_000;

/** Fixed windows in this process: one map for every route, oldest keys dropped past the cap. */
class LocalCounters implements RateLimitStore {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();

  incr(key: string, callback: Parameters<RateLimitStore['incr']>[1], timeWindow = DEFAULT_WINDOW_MS): void {
    const now = Date.now();
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      this.windows.delete(key);
      window = { count: 0, resetAt: now + timeWindow };
      if (this.windows.size >= MAX_LOCAL_KEYS) this.windows.delete(this.windows.keys().next().value!);
      this.windows.set(key, window);
    }
    window.count += 1;
    callback(null, { current: window.count, ttl: window.resetAt - now });
  }

  child(): RateLimitStore {
    return this;
  }
}

const REDIS_WINDOW = `
local current = redis.call('INCR', KEYS[1])
if current == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {current, redis.call('PTTL', KEYS[1])}`;

/** Fixed windows in Redis, shared by every replica. */
class RedisCounters implements RateLimitStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  incr(key: string, callback: Parameters<RateLimitStore['incr']>[1], timeWindow = DEFAULT_WINDOW_MS): void {
    this.redis
      .eval(REDIS_WINDOW, 1, `${this.prefix}${key}`, String(timeWindow))
      .then((result) => {
        const [current, ttl] = result as [number, number];
        callback(null, { current, ttl: Math.max(0, ttl) });
      })
      .catch((error: Error) => callback(error));
  }

  child(): RateLimitStore {
    return this;
  }
}

/**
 * A store whose counters do not depend on the URL that reached the route: the plugin's own stores
 * make one counter set per registered URL, so `/auth/token`, `/api/auth/token` and
 * `/api/v1/auth/token` each allowed the full limit. Keys come from the key generator, which names
 * the route template and the caller.
 */
export function sharedRateLimitStore(redis: Redis | undefined, prefix: string): new () => RateLimitStore {
  const shared = redis ? new RedisCounters(redis, prefix) : new LocalCounters();
  return class {
    constructor() {
      return shared;
    }
  } as unknown as new () => RateLimitStore;
}
