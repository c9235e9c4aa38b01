/**
 * bench/load: read endpoints under concurrent HTTP load, one replica against two (issue #14,
 * scale-out; not part of the test suite).
 *
 *   npx tsx bench/load.ts [--packages 50000] [--seconds 10] [--connections 50]
 *
 * A fresh PostgreSQL database (on BENCH_DATABASE_URL, else TEST_DATABASE_URL, else
 * postgres://postgres@127.0.0.1:5432/postgres; dropped at the end) is migrated in process and seeded
 * as bench/dashboard seeds it (packages, findings, audit entries), the indexes are published and
 * VACUUM ANALYZE is run. Then the compiled service (as `npm start` runs it) is started:
 *
 *   - one replica pinned to core 0 (`taskset -c 0`), the load generator pinned to core 1;
 *   - two replicas, pinned to cores 0 and 1, on the same database, DATA_DIR, JWT and settings keys,
 *     the load generator beside them (unpinned).
 *
 * Each endpoint is first fetched 20 times one at a time (median: the service's own time, without
 * queueing), then 11 times each right after raising the catalog generation (as any write to packages
 * does: the listings' pages, totals and the review order are computed again; median), then loaded
 * with autocannon (bench/lib/autocannon-child.mjs, a process of its own) for `--seconds` at
 * `--connections` keep-alive connections, after a 2-second warm-up. With two replicas one autocannon
 * run alternates its connections over both (connection i → replica i mod 2: half the connections
 * each) and all latencies land in one histogram. Latencies are autocannon's, whole milliseconds, of
 * 2xx answers. Peak RSS per replica is the kernel's high-water mark (VmHWM) at the end of a
 * configuration. Target: p99 under 50 ms for the API reads at one replica.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { allDistributions } from '../src/domain/distributions.js';
import { closeContext, createContext } from '../src/services/context.js';
import { loginAsInitialAdmin, waitUntilReady } from '../harness/service.js';
import { buildService, rssOf, stopped } from './lib/compiled-service.js';
import { seedAudit, seedFindings, seedPackages } from './lib/dashboard-seed.js';
import { loadTest, spawnPinnedService, type LoadResult } from './lib/http-load.js';
import { freshPostgres } from './lib/postgres.js';
import { markdownTable, textTable } from './lib/table.js';
import { median } from './lib/timing.js';
import { numberArg as arg } from './lib/args.js';

const PACKAGES = arg('packages', 50_000);
const SECONDS = arg('seconds', 10);
const CONNECTIONS = arg('connections', 50);
const WARMUP_SECONDS = 2;
const TARGET_P99_MS = 50;
const PORTS = [18710, 18711];
/** Inside the checkout, so the compiled service resolves node_modules (bench/.work/ is ignored by git). */
const BUILD_DIR = join(new URL('..', import.meta.url).pathname, 'bench', '.work', 'load', 'dist');

const SERVER = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

interface Endpoint { name: string; path: string; api: boolean }
const sample = `pkg${String(Math.floor(PACKAGES / 2)).padStart(6, '0')}`;
const ENDPOINTS: Endpoint[] = [
  { name: 'artifact list', path: '/artifacts?page=1&per_page=50', api: true },
  { name: 'artifact detail', path: `/artifacts/${sample}`, api: true },
  { name: 'package search', path: '/packages?q=pkg00&page=1&per_page=50', api: true },
  { name: 'review queue', path: '/security/review-queue?page=1&per_page=50', api: true },
  { name: 'index file', path: '/repo/apt/dists/jammy/InRelease', api: false },
];

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
const load = () => loadavg().map((n) => n.toFixed(2)).join(', ');

async function timed<T>(label: string, fn: () => Promise<T>): Promise<T> {
  const start = performance.now();
  const value = await fn();
  console.log(`  ${label}: ${((performance.now() - start) / 1000).toFixed(1)} s`);
  return value;
}

/** Migrates, seeds, publishes every distribution's index and analyses, in process; the services start on the result. */
async function prepare(env: Record<string, string>): Promise<void> {
  const config = loadConfig({ ENV: 'test', ...env });
  const ctx = await createContext(config, pino({ level: 'warn' }));
  try {
    await ctx.downloads.close();
    const now = Date.now();
    await timed(`${PACKAGES} packages`, () => seedPackages(ctx.db, PACKAGES, now));
    const findings = await timed('findings', () => seedFindings(ctx.db));
    const audit = await timed('audit entries', () => seedAudit(ctx.db, PACKAGES, now));
    console.log(`  ${findings} findings, ${audit} audit entries`);
    // Seeded rows bypass the upload path, which marks a distribution's index out of date: do that
    // here for the APT distributions. The seed writes deb-style index entries for every row, which
    // the RPM index writer cannot parse, so the RPM distributions are marked published as they are
    // (no RPM repodata is built or loaded; the replicas would otherwise retry it at each start).
    const debs = allDistributions().filter((d) => d.format === 'deb').map((d) => d.codename);
    await ctx.db.updateTable('distributions').set((eb) => ({ generation: eb('generation', '+', 1) })).where('codename', 'in', debs).execute();
    await ctx.db.updateTable('distributions').set((eb) => ({ published_generation: eb.ref('generation') })).where('codename', 'not in', debs).execute();
    const key = await ctx.repo.keyring.ensureKey();
    // An uploaded RPM is signed with the repository key as it is stored; the seeded rows (no files)
    // would otherwise be "re-signed" by every replica at start-up, 30,000 failed attempts competing
    // with the load.
    await ctx.db.updateTable('packages').set({ signed_by: key.fingerprint }).where('format', '=', 'rpm').execute();
    await timed('publishing every index', async () => {
      for (const codename of await ctx.repo.publisher.stale()) await ctx.repo.publisher.request(codename);
    });
    const left = await ctx.repo.publisher.stale();
    if (left.length > 0) throw new Error(`indexes still out of date after publishing: ${left.join(', ')}`);
    // VACUUM too: the signature update above leaves 30,000 dead row versions, and without a visibility
    // map PostgreSQL cannot answer the listings' index-only scans (autovacuum would, some time later).
    await timed('VACUUM ANALYZE', () => sql`vacuum analyze`.execute(ctx.db));
  } finally {
    await closeContext(ctx);
  }
}

/** Raises the catalog generation as any write to packages does (migration 0015): the next listing read recomputes its totals. */
async function bumpGeneration(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('update catalog_generation set generation = generation + 1 where id = 1');
  } finally {
    await client.end();
  }
}

interface ConfigResult { results: Map<string, LoadResult>; single: Map<string, number>; uncached: Map<string, number>; peaks: number[] }

/**
 * Starts `cores.length` replicas (replica k pinned to cores[k]), checks and loads every endpoint, stops them.
 * The load generator runs on `generatorCores` (unpinned when undefined).
 */
async function runConfiguration(label: string, main: string, cores: string[], generatorCores: string | undefined, dataDir: string, env: Record<string, string>): Promise<ConfigResult> {
  console.log(`\n${label}: ${cores.map((c, k) => `replica ${k + 1} on core ${c} (port ${PORTS[k]})`).join(', ')}; load generator ${generatorCores ? `on core ${generatorCores}` : 'unpinned'}`);
  const children = cores.map((core, k) => spawnPinnedService(main, core, dataDir, PORTS[k]!, env));
  try {
    const bases = PORTS.slice(0, cores.length).map((port) => `http://127.0.0.1:${port}`);
    for (const base of bases) await waitUntilReady(base, `${base} to be ready`, 60_000);
    const token = await loginAsInitialAdmin(bases[0]!, dataDir);
    const headers = { authorization: `Bearer ${token}` };
    for (const base of bases) {
      for (const e of ENDPOINTS) {
        const res = await fetch(`${base}${e.path}`, { headers });
        const body = await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`${base}${e.path}: ${res.status} ${Buffer.from(body).toString('utf8').slice(0, 300)}`);
        if (base === bases[0]) console.log(`  ${e.name} (${e.path}): 200, ${body.byteLength} bytes`);
      }
    }
    // One request at a time first (the service's own time, without queueing): median of 20.
    const single = new Map<string, number>();
    const uncached = new Map<string, number>();
    for (const e of ENDPOINTS) {
      const times: number[] = [];
      for (let i = 0; i < 21; i++) {
        const start = performance.now();
        await (await fetch(`${bases[0]}${e.path}`, { headers })).arrayBuffer();
        if (i > 0) times.push(performance.now() - start);
      }
      single.set(e.name, median(times));
      // The same after a write each time: the catalog generation raised, so totals and the review
      // order are computed again (what the first read after an upload or decision costs).
      const uncachedTimes: number[] = [];
      for (let i = 0; i < 11; i++) {
        await bumpGeneration(env.DATABASE_URL!);
        const start = performance.now();
        await (await fetch(`${bases[0]}${e.path}`, { headers })).arrayBuffer();
        uncachedTimes.push(performance.now() - start);
      }
      uncached.set(e.name, median(uncachedTimes));
    }
    const results = new Map<string, LoadResult>();
    for (const e of ENDPOINTS) {
      const urls = bases.map((b) => `${b}${e.path}`);
      const r = await loadTest(urls, CONNECTIONS, WARMUP_SECONDS, SECONDS, headers, generatorCores);
      results.set(e.name, r);
      console.log(`  ${e.name}: one at a time ${single.get(e.name)!.toFixed(1)} ms (after a write ${uncached.get(e.name)!.toFixed(1)} ms); loaded ${r.rps.toFixed(0)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, non-2xx ${r.non2xx}, errors ${r.errors} (load average ${load()})`);
    }
    const peaks = await Promise.all(children.map(async (c) => (await rssOf(c.pid!)).peak));
    console.log(`  peak RSS: ${peaks.map(mb).join(', ')}`);
    return { results, single, uncached, peaks };
  } finally {
    await Promise.all(children.map(stopped));
  }
}

async function main(): Promise<void> {
  console.log(`bench/load: ${PACKAGES} packages, ${SECONDS} s per endpoint at ${CONNECTIONS} connections (load average before: ${load()})`);
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-bench-load-'));
  const db = await freshPostgres(SERVER, 'tollgate_load');
  try {
    const dataDir = join(dir, 'data');
    const env = {
      DATABASE_URL: db.url, DATA_DIR: dataDir,
      JWT_SECRET_KEY: randomBytes(48).toString('base64url'), SETTINGS_KEY: randomBytes(32).toString('base64url'),
      RATE_LIMITS: 'off', SIGNING_KEY_ALGORITHM: 'ed25519', BCRYPT_ROUNDS: '4',
    };
    console.log(`\nseeding ${db.url}`);
    await prepare(env);
    const main = await timed('compiling the service', () => buildService(BUILD_DIR));

    const one = await runConfiguration('one replica', main, ['0'], '1', dataDir, env);
    const two = await runConfiguration('two replicas', main, ['0', '1'], undefined, dataDir, env);

    const cell = (r: LoadResult | undefined) => (r ? `${r.rps.toFixed(0)} req/s` : '');
    const rows: string[][] = [[
      'endpoint', 'one at a time (median)', 'after a write', '1 replica req/s', 'p50', 'p99', 'non-2xx/errors', '2 replicas req/s', 'p50', 'p99', 'non-2xx/errors', `p99 < ${TARGET_P99_MS} ms (1 replica)`,
    ]];
    for (const e of ENDPOINTS) {
      const a = one.results.get(e.name)!;
      const b = two.results.get(e.name)!;
      rows.push([
        e.name, `${one.single.get(e.name)!.toFixed(1)} ms`, `${one.uncached.get(e.name)!.toFixed(1)} ms`, cell(a), `${a.p50} ms`, `${a.p99} ms`, `${a.non2xx}/${a.errors}`,
        cell(b), `${b.p50} ms`, `${b.p99} ms`, `${b.non2xx}/${b.errors}`,
        e.api ? (a.p99 < TARGET_P99_MS ? 'met' : 'MISSED') : '(not an API read)',
      ]);
    }
    rows.push(['peak RSS per replica', '', '', mb(one.peaks[0]!), '', '', '', two.peaks.map(mb).join(' / '), '', '', '', '']);
    console.log(`\n${textTable(rows)}\n\n${markdownTable(rows)}`);
    const missed = ENDPOINTS.filter((e) => e.api && one.results.get(e.name)!.p99 >= TARGET_P99_MS).map((e) => e.name);
    console.log(`\ntarget p99 < ${TARGET_P99_MS} ms for the API reads at one replica: ${missed.length === 0 ? 'met' : `MISSED (${missed.join(', ')})`}`);
    console.log(`load average at the end: ${load()} (2 replicas and the load generator share ${cpus().length} cores)`);
  } finally {
    await db.drop();
    await rm(dir, { recursive: true, force: true });
    await rm(BUILD_DIR, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
