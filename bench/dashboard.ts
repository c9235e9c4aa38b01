/**
 * bench/dashboard: the dashboard and download statistics at 50,000 packages and 1,000,000 daily
 * download counter rows (not part of the test suite).
 *
 *   npx tsx bench/dashboard.ts [--packages 50000] [--downloads 1000000] [--requests 300]
 *
 * Runs on SQLite (a temp data folder), then on PostgreSQL when BENCH_DATABASE_URL (or
 * TEST_DATABASE_URL) names a server: a fresh database is created there and dropped afterwards.
 * Each endpoint is called through the full HTTP stack (app.inject: routing, JWT, role re-read,
 * validation, serialisation) `--requests` times after a warm-up; median and p99 are printed
 * against the 100 ms p99 target. Also measured: seeding, the full and daily (incremental) rebuild of the download
 * totals, the counter's per-request cost, a flush, and access-log ingestion. Downloads per token
 * (about half the counter rows, spread over `--tokens` tokens): `/downloads/stats` as an admin
 * (`by_token` over every token), `?token=` for one token, and the counter's cost with a token.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { packageFilePath } from '../src/domain/downloads/package-path.js';
import { buildApp } from '../src/http/app.js';
import { closeContext, createContext } from '../src/services/context.js';
import { seedAudit, seedDownloads, seedFindings, seedPackages } from './lib/dashboard-seed.js';
import { freshPostgres } from './lib/postgres.js';
import { markdownTable, textTable } from './lib/table.js';
import { median } from './lib/timing.js';
import { numberArg as arg } from './lib/args.js';

const PACKAGES = arg('packages', 50_000);
const DOWNLOADS = arg('downloads', 1_000_000);
const REQUESTS = arg('requests', 300);
const TOKENS = arg('tokens', 1_000);
const WARMUP = 20;
const DOWNLOAD_DAYS = 120;
const TARGET_MS = 100;

const ENDPOINTS = [
  '/dashboard/stats',
  '/dashboard/history',
  '/dashboard/history?days=365',
  '/dashboard/summary',
  '/downloads/stats?days=7',
  '/downloads/stats?days=30',
  '/downloads/stats?days=90',
  '/auth/me',
];

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};
const ms = (n: number) => `${n.toFixed(1)} ms`;
const s = (n: number) => `${(n / 1000).toFixed(1)} s`;

async function timed<T>(label: string, fn: () => Promise<T>): Promise<T> {
  const start = performance.now();
  const value = await fn();
  const took = performance.now() - start;
  console.log(`  ${label}: ${took < 1000 ? ms(took) : s(took)}`);
  return value;
}

/** Combined-format lines: one in five a package download, the rest index files and other paths. */
function accessLog(lines: number, paths: string[]): string {
  const out: string[] = [];
  const t = new Date();
  const stamp = `${String(t.getUTCDate()).padStart(2, '0')}/${t.toUTCString().slice(8, 11)}/${t.getUTCFullYear()}:10:00:00 +0000`;
  for (let i = 0; i < lines; i++) {
    const target = i % 5 === 0 ? `/repo/${paths[i % paths.length]}` : i % 5 === 1 ? '/repo/apt/dists/jammy/InRelease' : `/static/app.${i % 97}.js`;
    out.push(`198.51.100.${i % 250} - - [${stamp}] "GET ${target} HTTP/1.1" 200 ${1000 + (i % 5000)} "-" "Debian APT-HTTP/1.3 (2.6.1) \\"bench\\""`);
  }
  return `${out.join('\n')}\n`;
}

/**
 * About half the counter rows again, as downloads made with one of `tokens` tokens (owned by 200
 * users): the per-day-and-package rows and their per-day-and-distribution sums.
 */
async function seedTokenDownloads(db: Parameters<typeof seedDownloads>[0], tokens: number): Promise<{ counts: number; days: number }> {
  await sql`
    insert into download_token_counts (token_id, day, username, distribution, name, version, arch, downloads)
    select 'bench-token-' || (p.seq % ${sql.lit(tokens)}), c.day, 'bench-user-' || (p.seq % ${sql.lit(tokens)} % 200), c.distribution, c.name, c.version, c.arch, c.downloads
    from download_counts c join packages p on p.name = c.name and p.version = c.version and p.arch = c.arch and p.distribution = c.distribution
    where (p.seq * 3 + cast(substr(c.day, 9, 2) as integer)) % 2 = 0`.execute(db);
  await sql`
    insert into download_token_days (day, token_id, username, distribution, downloads)
    select day, token_id, max(username), distribution, sum(downloads) from download_token_counts group by day, token_id, distribution`.execute(db);
  const count = async (table: string) => Number((await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(db)).rows[0]!.n);
  return { counts: await count('download_token_counts'), days: await count('download_token_days') };
}

async function runOn(label: 'sqlite' | 'postgres', databaseUrl: string | null): Promise<string[][]> {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-bench-dashboard-'));
  const logs = join(dir, 'logs');
  const config = loadConfig({
    ENV: 'test', DATA_DIR: join(dir, 'data'), RATE_LIMITS: 'off', SIGNING_KEY_ALGORITHM: 'ed25519', BCRYPT_ROUNDS: '4',
    ACCESS_LOG_PATH: join(logs, 'access.log*'),
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  });
  const ctx = await createContext(config, pino({ level: 'warn' }));
  // The bench drives flushes and rollovers itself: no timer may run them behind its back mid-seeding.
  await ctx.downloads.close();
  const rows: string[][] = [];
  try {
    const { app } = await buildApp(ctx);
    await app.ready();
    const now = Date.now();
    console.log(`\n${label}: seeding`);
    await timed(`${PACKAGES} packages`, () => seedPackages(ctx.db, PACKAGES, now));
    const findings = await timed('findings', () => seedFindings(ctx.db));
    const audit = await timed('audit index', () => seedAudit(ctx.db, PACKAGES, now));
    const downloads = await timed(`download counter rows over ${DOWNLOAD_DAYS} days`, () => seedDownloads(ctx.db, DOWNLOADS, DOWNLOAD_DAYS, now));
    console.log(`  ${findings} findings, ${audit} audit entries, ${downloads} download counter rows`);
    const perToken = await timed(`downloads per token (${TOKENS} tokens)`, () => seedTokenDownloads(ctx.db, TOKENS));
    console.log(`  per token: ${perToken.counts} per-package rows, ${perToken.days} per-day rows`);
    // SQLite is measured as the service leaves it (no ANALYZE); PostgreSQL below, before and after
    // the VACUUM ANALYZE that autovacuum runs on its own after a load this size.
    // Seeded counter rows bypass the flush path: rebuild every window from them, as the first tick of a day does.
    await ctx.db.updateTable('download_rollups').set({ day: '' }).execute();
    await timed('full rebuild of the 7/30/90-day download totals (as of yesterday)', () => ctx.downloads.store.rollOver(new Date(now - 86_400_000)));
    await timed('daily move of the three windows to today', () => ctx.downloads.store.rollOver(new Date(now)));
    for (const days of [7, 30, 90]) {
      const from = new Date(now - (days - 1) * 86_400_000).toISOString().slice(0, 10);
      const kept = await ctx.db.selectFrom('download_totals').select((eb) => eb.fn.sum<number>('downloads').as('n')).where('days', '=', days).executeTakeFirst();
      const raw = await ctx.db.selectFrom('download_counts').select((eb) => eb.fn.sum<number>('downloads').as('n')).where('day', '>=', from).executeTakeFirst();
      if (Number(kept?.n) !== Number(raw?.n)) throw new Error(`${days}-day totals ${kept?.n} differ from the counter rows' ${raw?.n}`);
      const keptTokens = await ctx.db.selectFrom('download_token_totals').select((eb) => eb.fn.sum<number>('downloads').as('n')).where('days', '=', days).executeTakeFirst();
      const rawTokens = await ctx.db.selectFrom('download_token_days').select((eb) => eb.fn.sum<number>('downloads').as('n')).where('day', '>=', from).executeTakeFirst();
      if (Number(keptTokens?.n) !== Number(rawTokens?.n)) throw new Error(`${days}-day token totals ${keptTokens?.n} differ from the per-token rows' ${rawTokens?.n}`);
    }
    const windows = await ctx.db.selectFrom('download_totals').select(['days', (eb) => eb.fn.countAll<number>().as('n')]).groupBy('days').orderBy('days').execute();
    console.log(`  download totals: ${windows.map((w) => `${w.days} days: ${Number(w.n)} packages`).join(', ')}`);

    const password = 'Bench-passw0rd';
    await ctx.users.create({ username: 'bench', password, role: 'reader' });
    const login = await app.inject({ method: 'POST', url: '/auth/token', payload: { username: 'bench', password } });
    const headers = { authorization: `Bearer ${(login.json() as { access_token: string }).access_token}` };
    await ctx.users.create({ username: 'bench-admin', password, role: 'admin' });
    const adminLogin = await app.inject({ method: 'POST', url: '/auth/token', payload: { username: 'bench-admin', password } });
    const adminHeaders = { authorization: `Bearer ${(adminLogin.json() as { access_token: string }).access_token}` };
    const measure = async (url: string, requests: number, name = url, as = headers) => {
      // The first call pays what later ones may not (the history's ended days are then kept in memory).
      const cold = performance.now();
      await app.inject({ method: 'GET', url, headers: as });
      const first = performance.now() - cold;
      for (let i = 1; i < WARMUP; i++) await app.inject({ method: 'GET', url, headers: as });
      const times: number[] = [];
      for (let i = 0; i < requests; i++) {
        const start = performance.now();
        const res = await app.inject({ method: 'GET', url, headers: as });
        times.push(performance.now() - start);
        if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
      }
      const p99 = percentile(times, 99);
      const verdict = url === '/auth/me' ? 'baseline' : p99 < TARGET_MS ? 'met' : 'MISSED';
      rows.push([label, name, ms(first), ms(median(times)), ms(p99), verdict]);
      console.log(`  ${name}: first ${ms(first)}, median ${ms(median(times))}, p99 ${ms(p99)} (${verdict})`);
    };
    if (label === 'postgres') {
      // Right after a bulk load the visibility map is empty, so PostgreSQL cannot answer from the
      // covering indexes alone; autovacuum sets it within a minute or so of such a load.
      await measure('/dashboard/stats', 50, '/dashboard/stats (bulk load, before autovacuum)');
      await sql`vacuum analyze`.execute(ctx.db);
    }
    for (const url of ENDPOINTS) await measure(url, REQUESTS);
    for (const days of [7, 90]) {
      await measure(`/downloads/stats?days=${days}`, REQUESTS, `/downloads/stats?days=${days} as admin (by_token over ${TOKENS} tokens)`, adminHeaders);
      await measure(`/downloads/stats?days=${days}&token=bench-token-7`, REQUESTS, `/downloads/stats?days=${days}&token= (one token)`, adminHeaders);
    }

    // The hook's per-request work (path → pool path, counter increment) and one flush of many distinct files.
    const paths = (await ctx.db.selectFrom('packages').select('pool_path').where('status', '=', 'published').limit(10_000).execute()).map((r) => r.pool_path);
    let start = performance.now();
    const urls = paths.map((p) => `/repo/${p}`);
    for (let i = 0; i < 1_000_000; i++) {
      const path = packageFilePath(urls[i % urls.length]!);
      if (path) ctx.downloads.counter.record(path);
    }
    const perRecord = ((performance.now() - start) * 1e6) / 1_000_000;
    start = performance.now();
    await ctx.downloads.counter.flush();
    const flushMs = performance.now() - start;
    console.log(`  counter: ${perRecord.toFixed(0)} ns per counted request; flush of 1,000,000 downloads over ${paths.length} files: ${ms(flushMs)}`);
    rows.push([label, `counter flush (${paths.length} files, 1,000,000 downloads)`, ms(flushMs), '', '', `${perRecord.toFixed(0)} ns per counted request`]);
    // The same with every download made with one of TOKENS tokens: each token (a host, a pipeline)
    // fetching its own 50 files again and again; then the worst case, every download a new
    // (file, token) pair, which is what a flush's row count grows with.
    const tokens = Array.from({ length: TOKENS }, (_, i) => ({ id: `bench-token-${i}`, username: `bench-user-${i % 200}` }));
    const withTokens = async (downloads: number, pick: (i: number) => number, what: string) => {
      let begin = performance.now();
      for (let i = 0; i < downloads; i++) {
        const path = packageFilePath(urls[pick(i) % urls.length]!);
        if (path) ctx.downloads.counter.record(path, now, tokens[i % tokens.length]!);
      }
      const per = ((performance.now() - begin) * 1e6) / downloads;
      begin = performance.now();
      await ctx.downloads.counter.flush();
      const took = performance.now() - begin;
      console.log(`  counter with tokens, ${what}: ${per.toFixed(0)} ns per counted request; flush of ${downloads} downloads: ${ms(took)}`);
      rows.push([label, `counter flush with tokens, ${what} (${downloads} downloads)`, ms(took), '', '', `${per.toFixed(0)} ns per counted request`]);
    };
    await withTokens(1_000_000, (i) => (i % tokens.length) * 50 + ((i / tokens.length) | 0) % 50, `${TOKENS} tokens × 50 files`);
    await withTokens(100_000, (i) => i, 'every download a new file and token pair');

    await mkdir(logs);
    await writeFile(join(logs, 'access.log'), accessLog(500_000, paths));
    start = performance.now();
    const report = await ctx.downloads.logs!.ingest();
    const ingestMs = performance.now() - start;
    console.log(`  access log: ${report.lines} lines (${report.counted} downloads) in ${s(ingestMs)}; ${Math.round(report.lines / (ingestMs / 1000))} lines/s`);
    rows.push([label, 'access log ingest (500,000 lines)', s(ingestMs), '', '', `${Math.round(report.lines / (ingestMs / 1000))} lines/s`]);
    await app.close();
  } finally {
    await closeContext(ctx);
    await rm(dir, { recursive: true, force: true });
  }
  return rows;
}

async function main(): Promise<void> {
  console.log(`bench/dashboard: ${PACKAGES} packages, ${DOWNLOADS} download counter rows, ${REQUESTS} requests per endpoint`);
  const rows = await runOn('sqlite', null);
  const server = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  if (server) {
    const db = await freshPostgres(server, 'tollgate_bench');
    try {
      rows.push(...(await runOn('postgres', db.url)));
    } finally {
      await db.drop();
    }
  } else {
    console.log('\n(PostgreSQL skipped: set BENCH_DATABASE_URL=postgres://… to include it)');
  }
  const table = [['database', 'request', 'first call', 'median', 'p99', 'target p99 < 100 ms'], ...rows];
  console.log(`\n${textTable(table)}\n\n${markdownTable(table)}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
