/**
 * HTTP load for bench/load: autocannon driven programmatically (typed here: the package ships no
 * types), and the compiled service started pinned to CPU cores with `taskset`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';

const root = new URL('../..', import.meta.url).pathname;

/** The part of autocannon's result this bench reads (latencies in milliseconds). */
interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  '2xx': number;
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; average: number; max: number };
}
interface AutocannonOptions {
  url: string | string[];
  connections: number;
  duration: number;
  headers?: Record<string, string>;
  timeout?: number;
}
type Autocannon = (options: AutocannonOptions) => Promise<AutocannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

/** What one load run measured. */
export interface LoadResult {
  /** Completed requests per second (all answers), averaged over the run. */
  rps: number;
  p50: number;
  p99: number;
  /** Answers outside 2xx, plus connection errors and timeouts. */
  non2xx: number;
  errors: number;
  total: number;
}

/**
 * `connections` keep-alive connections sending GETs for `seconds`. With several URLs, connection i
 * uses urls[i % urls.length] (autocannon's round robin), so the load is spread evenly over them and
 * the latencies land in one histogram.
 */
export async function loadTest(urls: string[], connections: number, seconds: number, headers: Record<string, string>): Promise<LoadResult> {
  const r = await autocannon({ url: urls.length === 1 ? urls[0]! : urls, connections, duration: seconds, headers, timeout: 30 });
  return { rps: r.requests.total / r.duration, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors + r.timeouts, total: r.requests.total };
}

/**
 * The compiled service as bench/lib/compiled-service.ts starts it, under `taskset -c <cpus>`:
 * taskset execs node in place, so the pid returned is the service's (for rssOf), and every thread
 * node starts (libuv pool, V8 helpers, GC) inherits the pinning.
 */
export function spawnPinnedService(main: string, cpus: string, dataDir: string, port: number, env: Record<string, string> = {}): ChildProcess {
  // SERVICE_NODE_ARGS as for spawnCompiledService (`--cpu-prof --cpu-prof-dir=…`).
  const nodeArgs = (process.env.SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  return spawn('taskset', ['-c', cpus, process.execPath, ...nodeArgs, '--enable-source-maps', main], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', RATE_LIMITS: 'off', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}
