/**
 * bench/sbom: CycloneDX and SPDX export of a 50,000-package distribution (not part of the suite).
 *
 *   npx tsx bench/sbom.ts [--packages 50000] [--tsx]
 *
 * Seeds package rows directly (SQLite in a temp folder, then PostgreSQL when BENCH_DATABASE_URL
 * or TEST_DATABASE_URL names a server): each package depends on the one before, provides its
 * name, one in five has two findings, and each has a cached inventory of three embedded
 * components (a warm cache: cataloguing payloads is measured per package, not here). Then the
 * service is started in its own process on that data and both exports are fetched over HTTP and
 * written to a file; time and the service's resident memory (sampled from /proc every 5 ms) are
 * reported against the targets (10 s, 300 MB). BENCH_SERVICE_NODE_OPTIONS passes flags to the
 * service process only, e.g. `--max-old-space-size=192`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, rmSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import type { Db } from '../src/adapters/db/index.js';
import type { PackageRow } from '../src/adapters/db/packages.table.js';
import { closeContext, createContext } from '../src/services/context.js';
import type { SbomFormat } from '../src/services/sbom/index.js';
import { SCANNER_VERSION } from '../src/services/sbom/inventory.js';
import { freePort } from '../harness/net.js';
import { stopped } from './lib/compiled-service.js';
import { loginAsInitialAdmin, spawnService, waitUntilReady } from '../harness/service.js';

const at = process.argv.indexOf('--packages');
const PACKAGES = at > 0 ? Number(process.argv[at + 1]) : 50_000;
const BATCH = 400;
const hex = (i: number, salt: string) => (salt + i.toString(16)).padStart(64, '0').slice(-64);

async function seed(db: Db): Promise<void> {
  const now = new Date().toISOString();
  for (let start = 0; start < PACKAGES; start += BATCH) {
    const rows: PackageRow[] = [];
    const provides = [];
    const inventories = [];
    for (let i = start; i < Math.min(PACKAGES, start + BATCH); i++) {
      const name = `pkg${String(i).padStart(6, '0')}`;
      const version = `1.${i % 7}-${1 + (i % 3)}`;
      const findings = i % 5 === 0
        ? [1, 2].map((k) => ({ cve_id: `CVE-2026-${i}${k}`, advisory_id: `DSA-${i}-${k}`, severity: k === 1 ? 'high' as const : 'medium' as const, cvss_score: 7.5, cvss_vector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H', epss: 0.1, epss_percentile: 0.5, in_kev: false, affected_component: name, installed_version: version, fixed_version: null, fix_state: 'not-fixed' as const, summary: 'bench finding', action: 'warn' as const }))
        : [];
      const id = `bench-${String(i).padStart(6, '0')}`;
      rows.push({
        id, distribution: 'bookworm', format: 'deb', name, version, arch: 'amd64', component: 'main', status: 'published', cve_status: 'no_findings',
        sha256: hex(i, 'a'), upload_sha256: hex(i, 'a'), upload_size: 20_000 + i, signed_by: null, sha512: 'b'.repeat(128), sha1: 'c'.repeat(40), md5: 'd'.repeat(32), size: 20_000 + i,
        filename: `${name}_${version}_amd64.deb`, pool_path: `apt/pool/main/p/${name}/${name}_${version}_amd64.deb`, source_name: name, source_version: version,
        metadata: JSON.stringify({ description: `Bench package ${i}\n ${'long description '.repeat(60)}`, maintainer: 'Bench <bench@example.org>', homepage: 'https://example.org/' }),
        index_entry: `Package: ${name}\n`, relations: JSON.stringify({ depends: i > 0 ? `pkg${String(i - 1).padStart(6, '0')} (>= 1.0)` : null }),
        files: '[]', pipeline: '[]', findings: JSON.stringify({ counts: {}, details: findings }), reasons: '[]', uploaded_by: 'bench', sla_deadline: null,
        seq: i + 1, created_at: now, updated_at: now,
      });
      provides.push({ package_id: id, distribution: 'bookworm', kind: 'package', name, version, flags: null });
      const components = ['left-pad', 'lodash', 'chalk'].map((m, k) => ({ ecosystem: 'npm', namespace: null, name: m, version: `${k}.${i % 10}.0`, purl: `pkg:npm/${m}@${k}.${i % 10}.0`, foundIn: `/usr/lib/${name}/node_modules/${m}/package.json`, license: 'MIT' }));
      inventories.push({ sha256: hex(i, 'a'), scanner: SCANNER_VERSION, data: JSON.stringify({ components, copyrightLicense: 'GPL-2.0-or-later', error: null }), created_at: now });
    }
    await db.insertInto('packages').values(rows).execute();
    await db.insertInto('package_provides').values(provides).execute();
    await db.insertInto('sbom_inventory').values(inventories).execute();
  }
}

/** Resident memory of another process, from /proc: current (VmRSS) and high-water (VmHWM), in bytes. */
async function procRss(pid: number): Promise<{ rss: number; hwm: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

/** One export through HTTP from the service process, written to a file; the service's RSS sampled every 5 ms. */
async function exportOnce(base: string, token: string, pid: number, format: SbomFormat, dir: string) {
  const file = join(dir, `export.${format}.json`);
  const before = (await procRss(pid)).rss;
  let peak = before;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, (await procRss(pid)).rss);
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  const started = performance.now();
  const res = await fetch(`${base}/sbom/export?format=${format}&distribution=bookworm`, { headers: { authorization: `Bearer ${token}` } });
  if (res.status !== 200 || !res.body) throw new Error(`export answered ${res.status}: ${await res.text()}`);
  await pipeline(Readable.fromWeb(res.body as import('node:stream/web').ReadableStream), createWriteStream(file));
  const ms = performance.now() - started;
  sampling = false;
  await sampler;
  const { rss, hwm } = await procRss(pid);
  return { format, ms, before, peak: Math.max(peak, rss), hwm, bytes: (await stat(file)).size };
}

/**
 * The service as `npm start` runs it: compiled (into bench/.work, not the checkout's dist/), so
 * the figures are not tsx's (which adds about 65 MiB resident); `--tsx` runs the sources instead.
 */
const TSX = process.argv.includes('--tsx');
const root = new URL('..', import.meta.url).pathname;
const compiled = join(root, 'bench', '.work', 'sbom-service');
function compileService(): void {
  if (TSX) return;
  rmSync(compiled, { recursive: true, force: true });
  const tsc = spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json'), '--outDir', compiled], { stdio: 'inherit' });
  if (!existsSync(join(compiled, 'main.js'))) throw new Error(`compiling the service failed (tsc exit ${tsc.status})`);
}
function serviceProcess(dir: string, port: number, env: Record<string, string>): ChildProcess {
  if (TSX) return spawnService(dir, port, env, 'inherit');
  return spawn(process.execPath, [join(compiled, 'main.js')], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dir, PORT: String(port), HOST: '127.0.0.1', RATE_LIMITS: 'off', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0);

async function run(label: string, databaseUrl: string | null) {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-bench-sbom-'));
  // BENCH_SERVICE_NODE_OPTIONS: flags for the service process only (e.g. --max-old-space-size=192).
  const env = { NODE_OPTIONS: process.env.BENCH_SERVICE_NODE_OPTIONS ?? '', ENV: 'test', DATA_DIR: dir, RATE_LIMITS: 'off', SIGNING_KEY_ALGORITHM: 'ed25519', EDITION: 'enterprise', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) };
  try {
    // Seeded here, then the bench's context closed: the service measured is a process of its own,
    // so the figures are its memory and not the seeding's.
    const ctx = await createContext(loadConfig(env), pino({ level: 'silent' }));
    try {
      const t0 = performance.now();
      await seed(ctx.db);
      // As autovacuum would after a bulk load: without statistics PostgreSQL plans each page as a sort of the whole distribution.
      if (databaseUrl) await sql`analyze`.execute(ctx.db);
      console.log(`${label}: seeded ${PACKAGES} packages in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    } finally {
      await closeContext(ctx);
    }
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const server = serviceProcess(dir, port, env);
    try {
      await waitUntilReady(base);
      const token = await loginAsInitialAdmin(base, dir);
      const idle = await procRss(server.pid!);
      console.log(`${label}: service ready, RSS ${mib(idle.rss)} MiB (high-water ${mib(idle.hwm)} MiB)`);
      for (const format of ['cyclonedx', 'spdx'] as const) {
        const r = await exportOnce(base, token, server.pid!, format, dir);
        console.log(`${label} ${format}: ${(r.ms / 1000).toFixed(2)} s, ${(r.bytes / 1e6).toFixed(0)} MB written; service RSS ${mib(r.before)} MiB before, peak ${mib(r.peak)} MiB (process high-water ${mib(r.hwm)} MiB); targets 10 s, 300 MB`);
      }
    } finally {
      await stopped(server);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

compileService();
await run('sqlite', null);
const server = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
if (server) {
  const name = `tollgate_bench_sbom_${process.pid}`;
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  try {
    await run('postgres', url.toString());
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}
