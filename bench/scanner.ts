/**
 * Scanner benchmark (not part of the test suite): `npx tsx bench/scanner.ts [advisories] [packages]`.
 * Generates an OSV feed of ≥100,000 advisories shaped like the distro feeds (aliases, CVSS v3
 * vectors or distro urgencies, several affected packages and ranges per record, some withdrawn),
 * an EPSS CSV and a KEV catalogue; then measures the sync (time, peak RSS), matching one package
 * (target < 5 ms) and rescanning a 10,000-package distribution (target < 30 s).
 * Set DATABASE_URL=postgres://… to run it on PostgreSQL (default: SQLite in a temp dir).
 */
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { findDistribution } from '../src/domain/distributions.js';
import { closeContext, createContext } from '../src/services/context.js';
import type { PackageRow } from '../src/adapters/db/packages.table.js';
import type { PackageRef } from '../src/domain/security/index.js';

const ADVISORIES = Number(process.argv[2] ?? 100_000);
const PACKAGES = Number(process.argv[3] ?? 10_000);
const NAMES = 20_000;
const ECOSYSTEMS = ['Rocky Linux:9', 'Rocky Linux:9', 'AlmaLinux:9', 'Debian:12', 'Ubuntu:22.04:LTS'];
const VECTORS = [
  'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H',
  'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N',
  'CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:U/C:L/I:L/A:N',
  'CVSS:3.1/AV:L/AC:H/PR:L/UI:R/S:U/C:L/I:N/A:N',
];
const URGENCIES = ['low', 'medium', 'high', 'unimportant', 'not yet assigned'];

/** Deterministic pseudo-random numbers, so runs are comparable. */
let seed = 42;
function rand(n: number): number {
  // 32-bit LCG with Math.imul (a plain multiply would lose the low bits past 2^53); high bits out.
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return (seed >>> 8) % n;
}

const nameOf = (i: number) => `pkg${String(i).padStart(5, '0')}`;

function advisory(i: number): Record<string, unknown> {
  const eco = ECOSYSTEMS[i % ECOSYSTEMS.length]!;
  const rpm = eco.startsWith('Rocky') || eco.startsWith('Alma');
  const cves = Array.from({ length: 1 + rand(3) }, (_, k) => `CVE-${2015 + rand(10)}-${10000 + i * 3 + k}`);
  const affected = Array.from({ length: 1 + rand(3) }, () => {
    const name = nameOf(rand(NAMES));
    const fixedMinor = 1 + rand(5);
    const fixed = rpm ? `1.${fixedMinor}-1.el9` : `1.${fixedMinor}-1`;
    const events = rand(10) === 0 ? [{ introduced: '0' }] : [{ introduced: '0' }, { fixed }];
    return {
      package: { ecosystem: eco, name, purl: `pkg:${rpm ? 'rpm' : 'deb'}/${eco.split(':')[0]!.toLowerCase()}/${name}` },
      ranges: [{ type: 'ECOSYSTEM', events }],
      ...(rpm ? {} : { ecosystem_specific: { urgency: URGENCIES[rand(URGENCIES.length)] } }),
    };
  });
  return {
    id: rpm ? `RLSA-2024:${i}` : eco.startsWith('Debian') ? `DSA-${i}-1` : `USN-${i}-1`,
    modified: '2024-06-01T00:00:00Z',
    published: '2024-05-01T00:00:00Z',
    aliases: cves,
    summary: `Security update for ${String((affected[0]!.package as { name: string }).name)}`,
    details: 'Several vulnerabilities were found. '.repeat(1 + rand(8)),
    ...(rand(200) === 0 ? { withdrawn: '2024-06-02T00:00:00Z' } : {}),
    ...(rpm ? { severity: [{ type: 'CVSS_V3', score: VECTORS[rand(VECTORS.length)] }] } : {}),
    affected,
    references: [{ type: 'ADVISORY', url: `https://errata.example/${i}` }],
  };
}

async function writeFeed(path: string): Promise<void> {
  const out = createWriteStream(path);
  const write = (text: string) => new Promise<void>((resolve) => (out.write(text) ? resolve() : out.once('drain', () => resolve())));
  await write('[');
  for (let i = 0; i < ADVISORIES; i++) await write(`${i ? ',\n' : ''}${JSON.stringify(advisory(i))}`);
  await write(']');
  await new Promise<void>((resolve) => out.end(() => resolve()));
}

function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-bench-'));
  try {
    const feed = join(dir, 'osv.json');
    let t = Date.now();
    await writeFeed(feed);
    const epss = Array.from({ length: ADVISORIES * 2 }, (_, i) => `CVE-${2015 + (i % 10)}-${10000 + i},${(i % 1000) / 1000},${(i % 997) / 997}`);
    await writeFile(join(dir, 'epss.csv.gz'), gzipSync(`cve,epss,percentile\n${epss.join('\n')}\n`));
    await writeFile(join(dir, 'kev.json'), JSON.stringify({ vulnerabilities: Array.from({ length: 1200 }, (_, i) => ({ cveID: `CVE-2020-${10000 + i * 7}` })) }));
    console.log(`generated ${ADVISORIES} OSV records (${mb((await stat(feed)).size)}) in ${Date.now() - t} ms`);

    // The generated feeds are read as file:// URLs, allowed only under FEEDS_DIR.
    const config = loadConfig({ ENV: 'test', DATA_DIR: join(dir, 'data'), FEEDS_DIR: dir, RATE_LIMITS: 'off', SIGNING_KEY_ALGORITHM: 'ed25519', ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}) });
    const ctx = await createContext(config, pino({ level: 'warn' }));
    try {
      const sec = ctx.security;
      let peak = process.memoryUsage().rss;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
      const rssBefore = process.memoryUsage().rss;
      t = Date.now();
      const report = await sec.feeds.sync([
        { name: 'bench', kind: 'osv', url: pathToFileURL(feed).href },
        { name: 'epss', kind: 'epss', url: pathToFileURL(join(dir, 'epss.csv.gz')).href },
        { name: 'kev', kind: 'kev', url: pathToFileURL(join(dir, 'kev.json')).href },
      ]);
      const syncMs = Date.now() - t;
      clearInterval(sampler);
      peak = Math.max(peak, process.memoryUsage().rss);
      console.log(`sync (${ctx.dialect}): ${syncMs} ms; ${report.advisories} advisory rows, ${report.epss} EPSS, ${report.kev} KEV; RSS ${mb(rssBefore)} → peak ${mb(peak)}`);

      const dist = findDistribution('rocky9')!;
      const refs: PackageRef[] = Array.from({ length: 1000 }, (_, i) => ({ format: 'rpm', name: nameOf((i * 37) % NAMES), version: '1.0-1.el9', arch: 'x86_64', epoch: null, sourcerpm: `${nameOf((i * 37) % NAMES)}-1.0-1.el9.src.rpm` }));
      await sec.scanner.scan(refs[0]!, dist);
      t = performance.now();
      let findings = 0;
      for (const ref of refs) findings += (await sec.scanner.scan(ref, dist))?.findings.length ?? 0;
      const perMatch = (performance.now() - t) / refs.length;
      console.log(`match one package (query + match + EPSS/KEV + policy): ${perMatch.toFixed(2)} ms average over ${refs.length} (${findings} findings) — target < 5 ms`);

      // A 10,000-package distribution: clones of one stored row under the names the feed uses.
      const template: PackageRow = {
        id: '', distribution: 'rocky9', format: 'rpm', name: '', version: '1.0-1.el9', arch: 'x86_64', component: 'main', status: 'published', cve_status: 'not_scanned',
        sha256: 'a'.repeat(64), upload_sha256: 'a'.repeat(64), upload_size: 1000, signed_by: null, sha512: 'b'.repeat(128), sha1: 'c'.repeat(40), md5: 'd'.repeat(32), size: 1000, filename: '', pool_path: '',
        source_name: '', source_version: '1.0-1.el9', metadata: '', index_entry: '{}', relations: '{}', files: '[]', pipeline: '[]',
        findings: '{"counts":{},"details":[]}', reasons: '[]', uploaded_by: 'bench', sla_deadline: null, seq: 0, created_at: new Date().toISOString(), updated_at: new Date().toISOString(),
      };
      const rows: PackageRow[] = Array.from({ length: PACKAGES }, (_, i) => {
        const name = nameOf(i % NAMES);
        const filename = `${name}-1.0-1.el9.x86_64.rpm`;
        return { ...template, id: randomUUID(), name, filename, pool_path: `rpm/rocky9/x86_64/Packages/p/${filename}`, source_name: name, metadata: JSON.stringify({ epoch: null, sourceRpm: `${name}-1.0-1.el9.src.rpm` }), seq: i + 1 };
      });
      for (let i = 0; i < rows.length; i += 200) await ctx.db.insertInto('packages').values(rows.slice(i, i + 200)).execute();
      // The stand-in index entries are not real repodata: keep the publisher out of the timing.
      ctx.repo.publisher.request = async () => undefined;
      t = Date.now();
      const rescan = await sec.rescans.rescanDistribution('rocky9');
      console.log(`rescan ${rescan!.packages} packages: ${rescan!.seconds.toFixed(1)} s (${rescan!.changed} updated, ${rescan!.status_changes} left the index, ${rescan!.failed} failed) — target < 30 s`);
      t = Date.now();
      const again = await sec.rescans.rescanDistribution('rocky9');
      console.log(`rescan again, nothing changed: ${again!.seconds.toFixed(1)} s`);
      const byStatus = await ctx.db.selectFrom('packages').select(['status', 'cve_status', (eb) => eb.fn.countAll().as('n')]).groupBy(['status', 'cve_status']).execute();
      console.log(`statuses after the rescan: ${byStatus.map((r) => `${r.status}/${r.cve_status}=${r.n}`).join(', ')}`);
      const page = performance.now();
      await sec.queries.packages({ severity: 'critical' }, { page: 1, perPage: 100 });
      await sec.queries.vulnerabilities({ severity: 'high' }, { page: 1, perPage: 100 });
      await sec.queries.reviewQueue({}, { page: 1, perPage: 100 });
      console.log(`listings (packages?severity, vulnerabilities?severity, review queue): ${(performance.now() - page).toFixed(0)} ms`);
    } finally {
      await closeContext(ctx);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
