/**
 * One autocannon run in a process of its own, so bench/load can pin the load generator to a core
 * (`taskset -c <core> node autocannon-child.mjs`). Options come as JSON in AUTOCANNON_OPTIONS (not
 * argv: they hold a bearer token), the result goes to stdout as JSON.
 */
import { createRequire } from 'node:module';

const autocannon = createRequire(import.meta.url)('autocannon');
const r = await autocannon(JSON.parse(process.env.AUTOCANNON_OPTIONS ?? '{}'));
process.stdout.write(JSON.stringify({
  duration: r.duration, errors: r.errors, timeouts: r.timeouts, non2xx: r.non2xx, total: r.requests.total, p50: r.latency.p50, p99: r.latency.p99,
}));
