/**
 * bench/sbom: CycloneDX and SPDX export of a 50,000-package distribution (not part of the suite).
 *
 *   npx tsx bench/sbom.ts [--packages 50000]
 *
 * Seeds package rows directly (SQLite in a temp folder, then PostgreSQL when BENCH_DATABASE_URL
 * or TEST_DATABASE_URL names a server): each package depends on the one before, provides its
 * name, one in five has two findings, and each has a cached inventory of three embedded
 * components (a warm cache: cataloguing payloads is measured per package, not here). The export
 * is consumed as the HTTP layer would, written to a file; time and peak RSS are reported against
 * the targets (10 s, 300 MB).
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { sql } from 'kysely';
import pg from 'pg';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import type { Db } from '../src/adapters/db/index.js';
import { closeContext, createContext } from '../src/services/context.js';
import { SbomService, type SbomFormat } from '../src/services/sbom/index.js';
import { SCANNER_VERSION } from '../src/services/sbom/inventory.js';
import { processPeakRss, RssSampler } from './lib/rss.js';

const at = process.argv.indexOf('--packages');
const PACKAGES = at > 0 ? Number(process.argv[at + 1]) : 50_000;
const BATCH = 400;
const hex = (i: number, salt: string) => (salt + i.toString(16)).padStart(64, '0').slice(-64);

async function seed(db: Db): Promise<void> {
  const now = new Date().toISOString();
  for (let start = 0; start < PACKAGES; start += BATCH) {
    const rows = [];
    const provides = [];
    const inventories = [];
    for (let i = start; i < Math.min(PACKAGES, start + BATCH); i++) {
      const name = `pkg${String(i).padStart(6, '0')}`;
      const version = `1.${i % 7}-${1 + (i % 3)}`;
      const findings = i % 5 === 0
        ? [1, 2].map((k) => ({ cve_id: `CVE-2026-${i}${k}`, advisory_id: `DSA-${i}-${k}`, severity: k === 1 ? 'high' : 'medium', cvss_score: 7.5, cvss_vector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H', epss: 0.1, epss_percentile: 0.5, in_kev: false, affected_component: name, installed_version: version, fixed_version: null, fix_state: 'not-fixed', summary: 'bench finding', action: 'warn' }))
        : [];
      const id = `bench-${String(i).padStart(6, '0')}`;
      rows.push({
        id, distribution: 'bookworm', format: 'deb', name, version, arch: 'amd64', status: 'published', cve_status: 'no_findings',
        sha256: hex(i, 'a'), sha512: 'b'.repeat(128), sha1: 'c'.repeat(40), md5: 'd'.repeat(32), size: 20_000 + i,
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

async function exportOnce(service: SbomService, format: SbomFormat, dir: string) {
  const file = join(dir, `export.${format}.json`);
  globalThis.gc?.();
  const before = process.memoryUsage.rss();
  const sampler = new RssSampler().start(5);
  const started = performance.now();
  const doc = await service.distributionDocument(format, 'bookworm');
  const out = createWriteStream(file);
  for await (const piece of doc.body) if (!out.write(piece)) await once(out, 'drain');
  out.end();
  await once(out, 'finish');
  const ms = performance.now() - started;
  return { format, ms, before, peak: sampler.stop(), bytes: (await stat(file)).size };
}

async function run(label: string, databaseUrl: string | null) {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-bench-sbom-'));
  const config = loadConfig({ ENV: 'test', DATA_DIR: dir, RATE_LIMITS: 'off', SIGNING_KEY_ALGORITHM: 'ed25519', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) });
  const ctx = await createContext(config, pino({ level: 'silent' }));
  try {
    const t0 = performance.now();
    await seed(ctx.db);
    // As autovacuum would after a bulk load: without statistics PostgreSQL plans each page as a sort of the whole distribution.
    if (databaseUrl) await sql`analyze`.execute(ctx.db);
    console.log(`${label}: seeded ${PACKAGES} packages in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const service = new SbomService(ctx.db, ctx.repo.files, { toolVersion: 'bench', appUrl: 'http://localhost' });
    for (const format of ['cyclonedx', 'spdx'] as const) {
      const r = await exportOnce(service, format, dir);
      console.log(`${label} ${format}: ${(r.ms / 1000).toFixed(2)} s, ${(r.bytes / 1e6).toFixed(0)} MB written, RSS ${(r.before / 2 ** 20).toFixed(0)} MiB before, peak ${(r.peak / 2 ** 20).toFixed(0)} MiB (process high-water ${(processPeakRss() / 2 ** 20).toFixed(0)} MiB); targets 10 s, 300 MB`);
    }
  } finally {
    await closeContext(ctx);
    await rm(dir, { recursive: true, force: true });
  }
}

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
