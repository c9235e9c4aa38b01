/**
 * HTTP load for bench/load: autocannon in a process of its own (autocannon-child.mjs), pinned to
 * CPU cores with `taskset` when asked, and the compiled service started pinned likewise.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';

const root = new URL('../..', import.meta.url).pathname;
const run = promisify(execFile);

/** What autocannon-child.mjs prints (latencies in milliseconds). */
interface AutocannonSummary {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  total: number;
  p50: number;
  p99: number;
}

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
 * the latencies land in one histogram. `warmupSeconds` of the same load go first, not measured.
 * `cpus` pins the load generator (`taskset -c`); without it the scheduler places it.
 */
export async function loadTest(urls: string[], connections: number, warmupSeconds: number, seconds: number, headers: Record<string, string>, cpus?: string): Promise<LoadResult> {
  const options = { url: urls.length === 1 ? urls[0]! : urls, connections, duration: seconds, headers, timeout: 30 };
  const child = [process.execPath, new URL('autocannon-child.mjs', import.meta.url).pathname];
  const [command, ...args] = cpus ? ['taskset', '-c', cpus, ...child] : child;
  const env = { ...process.env, AUTOCANNON_OPTIONS: JSON.stringify(options), AUTOCANNON_WARMUP: String(warmupSeconds) };
  const { stdout } = await run(command!, args, { env, maxBuffer: 1024 * 1024 });
  const r = JSON.parse(stdout) as AutocannonSummary;
  return { rps: r.total / r.duration, p50: r.p50, p99: r.p99, non2xx: r.non2xx, errors: r.errors + r.timeouts, total: r.total };
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
