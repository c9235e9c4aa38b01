/**
 * Fixed-window counters (rate limits): in this process, or in Redis when replicas share them.
 */
import type { Redis } from 'ioredis';

export interface WindowCount {
  /** Hits in the current window, this one included. */
  current: number;
  /** Milliseconds until the window resets. */
  ttlMs: number;
}

export interface WindowCounters {
  /** Counts one hit on `key` in a window of `windowMs` that starts with the key's first hit. */
  increment(key: string, windowMs: number): Promise<WindowCount>;
  close(): Promise<void>;
}

const MAX_LOCAL_KEYS = 10_000;

/** One map for every key, oldest keys dropped past the cap (a flood of client addresses stays bounded). */
export class LocalWindowCounters implements WindowCounters {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();

  async increment(key: string, windowMs: number): Promise<WindowCount> {
    const now = Date.now();
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      this.windows.delete(key);
      window = { count: 0, resetAt: now + windowMs };
      if (this.windows.size >= MAX_LOCAL_KEYS) this.windows.delete(this.windows.keys().next().value!);
      this.windows.set(key, window);
    }
    window.count += 1;
    return { current: window.count, ttlMs: window.resetAt - now };
  }

  async close(): Promise<void> {}
}

const REDIS_WINDOW = `
local current = redis.call('INCR', KEYS[1])
if current == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {current, redis.call('PTTL', KEYS[1])}`;

/** Counters in Redis, shared by every replica: one script per hit, so the count and its expiry are set together. */
class RedisWindowCounters implements WindowCounters {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  async increment(key: string, windowMs: number): Promise<WindowCount> {
    const [current, ttl] = (await this.redis.eval(REDIS_WINDOW, 1, `${this.prefix}${key}`, String(windowMs))) as [number, number];
    return { current, ttlMs: Math.max(0, ttl) };
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}

/**
 * Redis counters when `redisUrl` is set, else local ones. ioredis is loaded only then: a single
 * replica never holds its code. A Redis that does not answer fails the hit at once (no retries,
 * no offline queue) rather than holding the request.
 */
export async function openWindowCounters(redisUrl: string | null, prefix: string): Promise<WindowCounters> {
  if (!redisUrl) return new LocalWindowCounters();
  const { Redis } = await import('ioredis');
  return new RedisWindowCounters(new Redis(redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false }), prefix);
}
