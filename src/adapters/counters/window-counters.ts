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

/** Where the counts are kept, for the health report. */
export interface CountersStatus {
  /** The shared store answers (always true for local counters: nothing to reach). */
  ok: boolean;
  detail: string;
  latency_ms?: number;
}

export interface WindowCounters {
  /** Counts one hit on `key` in a window of `windowMs` that starts with the key's first hit. */
  increment(key: string, windowMs: number): Promise<WindowCount>;
  status(): Promise<CountersStatus>;
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

  async status(): Promise<CountersStatus> {
    return { ok: true, detail: 'counted in this process (REDIS_URL not set)' };
  }

  async close(): Promise<void> {}
}

const REDIS_WINDOW = `
local current = redis.call('INCR', KEYS[1])
if current == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {current, redis.call('PTTL', KEYS[1])}`;

/** What the Redis counters say of an outage, and of its end (a logger's warn and info). */
export interface OutageReport {
  unavailable(error: Error): void;
  restored(): void;
}

/**
 * Counters in Redis, shared by every replica: one script per hit, so the count and its expiry are
 * set together. While Redis does not answer, hits are counted in this process instead: the limits
 * still hold, per replica, and a Redis outage does not turn every limited route (login among
 * them) into errors.
 */
class RedisWindowCounters implements WindowCounters {
  private readonly fallback = new LocalWindowCounters();
  private failing = false;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly report: OutageReport,
  ) {
    // ioredis emits an error at every failed (re)connection, and prints it as unhandled without a
    // listener; the outage is reported once, by the first hit that fails.
    redis.on('error', () => undefined);
  }

  async increment(key: string, windowMs: number): Promise<WindowCount> {
    let answer: [number, number];
    try {
      answer = (await this.redis.eval(REDIS_WINDOW, 1, `${this.prefix}${key}`, String(windowMs))) as [number, number];
    } catch (error) {
      if (!this.failing) this.report.unavailable(error as Error);
      this.failing = true;
      return this.fallback.increment(key, windowMs);
    }
    if (this.failing) this.report.restored();
    this.failing = false;
    return { current: answer[0], ttlMs: Math.max(0, answer[1]) };
  }

  /** A PING, bounded like every command; an outage is not reported here (a hit reports it once). */
  async status(): Promise<CountersStatus> {
    const started = performance.now();
    try {
      await this.redis.ping();
    } catch (error) {
      return { ok: false, detail: `Redis does not answer (${(error as Error).message}): rate limits are counted in each replica alone until it does` };
    }
    const latency_ms = Math.round((performance.now() - started) * 100) / 100;
    return { ok: true, detail: 'rate limits shared by the replicas', latency_ms };
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}

/**
 * Redis counters when `redisUrl` is set, else local ones. ioredis is loaded only then: a single
 * replica never holds its code. A hit Redis does not take fails at once when the connection is
 * down (no retries, no offline queue), or after COMMAND_TIMEOUT_MS when Redis stops answering on
 * it, and is then counted locally rather than holding the request.
 */
export async function openWindowCounters(redisUrl: string | null, prefix: string, report: OutageReport): Promise<WindowCounters> {
  if (!redisUrl) return new LocalWindowCounters();
  const { Redis } = await import('ioredis');
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, commandTimeout: COMMAND_TIMEOUT_MS });
  const counters = new RedisWindowCounters(redis, prefix, report);
  // The first connection's outcome, so that the first hits are not counted apart while it is made.
  await new Promise<void>((resolve) => {
    const settle = () => {
      clearTimeout(timer);
      redis.off('ready', settle).off('error', settle);
      resolve();
    };
    const timer = setTimeout(settle, FIRST_CONNECTION_MS);
    redis.once('ready', settle).once('error', settle);
  });
  return counters;
}

const FIRST_CONNECTION_MS = 2_000;
/** A Redis that keeps the connection but stops answering holds a request this long at most. */
const COMMAND_TIMEOUT_MS = 500;
