/**
 * One autocannon run in a process of its own, so bench/load can pin the load generator to a core
 * (`taskset -c <core> node autocannon-child.mjs`). Options come as JSON in AUTOCANNON_OPTIONS (not
 * argv: they hold a bearer token), the result goes to stdout as JSON. A warm-up run of
 * AUTOCANNON_WARMUP seconds goes first in the same process (its result is not reported), so the
 * measured run meets a warm load generator as well as a warm service.
 */
import { createRequire } from 'node:module';

const autocannon = createRequire(import.meta.url)('autocannon');
const options = JSON.parse(process.env.AUTOCANNON_OPTIONS ?? '{}');
const warmup = Number(process.env.AUTOCANNON_WARMUP ?? 0);
if (warmup > 0) await autocannon({ ...options, duration: warmup });
const r = await autocannon(options);
process.stdout.write(JSON.stringify({
  duration: r.duration, errors: r.errors, timeouts: r.timeouts, non2xx: r.non2xx, total: r.requests.total, p50: r.latency.p50, p99: r.latency.p99,
}));
