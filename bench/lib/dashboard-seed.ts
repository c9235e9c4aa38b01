/**
 * Seeds a service database for bench/dashboard: package rows as wide as real ones (index entry,
 * metadata and file list text), findings, an audit index spread over a year, and daily download
 * counter rows generated inside the database (one INSERT … SELECT, fast on both dialects).
 */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../src/adapters/db/index.js';
import { allDistributions, type PackageStatus } from '../../src/domain/distributions.js';
import type { Severity } from '../../src/domain/security/types.js';
import type { PackageRow } from '../../src/adapters/db/packages.table.js';

const DAY_MS = 86_400_000;
const BATCH = 400;

/** Deterministic pseudo-random numbers, so runs are comparable. */
let seed = 7;
function rand(n: number): number {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return (seed >>> 8) % n;
}

const STATUSES: Array<[PackageStatus, number]> = [
  ['published', 880], ['pending_review', 40], ['accepted_risk', 20], ['exception', 10], ['upgrade_required', 10], ['quarantined', 30], ['rejected', 10],
];
function status(): PackageStatus {
  let r = rand(1000);
  for (const [s, weight] of STATUSES) {
    if (r < weight) return s;
    r -= weight;
  }
  return 'published';
}

const iso = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00');
/** A moment within the last year (rand() spans 2^24 values, less than a year of milliseconds). */
const withinYear = (now: number) => now - rand(365) * DAY_MS - rand(86_400) * 1000;
const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const filler = (n: number) => 'x'.repeat(n);

async function inBatches<T>(items: T[], insert: (batch: T[]) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += BATCH) await insert(items.slice(i, i + BATCH));
}

/** 50,000-style package rows over every distribution; about one deb in ten is also in a second distribution (same file). */
export async function seedPackages(db: Db, count: number, now: number): Promise<void> {
  const rows: PackageRow[] = [];
  for (let i = 0; rows.length < count; i++) {
    const all = allDistributions();
    const dist = all[rand(all.length)]!;
    const name = `pkg${String(i).padStart(6, '0')}`;
    const version = dist.format === 'deb' ? `1.${i % 7}-${1 + (i % 3)}` : `1.${i % 7}-${1 + (i % 3)}.el9`;
    const arch = dist.format === 'deb' ? 'amd64' : 'x86_64';
    const filename = dist.format === 'deb' ? `${name}_${version}_${arch}.deb` : `${name}-${version}.${arch}.rpm`;
    const poolPath = dist.format === 'deb' ? `apt/pool/main/p/${name}/${filename}` : `rpm/${dist.codename}/x86_64/Packages/p/${filename}`;
    const at = withinYear(now);
    const base: PackageRow = {
      id: `bench-${i}`, distribution: dist.codename, format: dist.format, name, version, arch, component: 'main', status: status(), cve_status: 'no_findings',
      sha256: sha(filename), upload_sha256: sha(filename), upload_size: 0, signed_by: null, sha512: 'b'.repeat(128), sha1: 'c'.repeat(40), md5: 'd'.repeat(32), size: 20_000 + rand(5_000_000),
      filename, pool_path: poolPath, source_name: name, source_version: version,
      metadata: JSON.stringify({ description: filler(1200), maintainer: 'Bench <bench@example.org>' }),
      index_entry: `Package: ${name}\nVersion: ${version}\n${filler(700)}\n`, relations: '{}',
      files: JSON.stringify(Array.from({ length: 20 }, (_, k) => ({ path: `/usr/share/${name}/file${k}`, size: 100, mode: 420, type: 'file' }))),
      pipeline: '[]', findings: '{"counts":{},"details":[]}', reasons: '[]', uploaded_by: 'bench', sla_deadline: null,
      seq: rows.length + 1, created_at: iso(at), updated_at: iso(at),
    };
    rows.push(base);
    const other = allDistributions().filter((d) => d.format === 'deb' && d.codename !== dist.codename);
    if (dist.format === 'deb' && rand(10) === 0 && rows.length < count) {
      rows.push({ ...base, id: `bench-${i}-copy`, distribution: other[rand(other.length)]!.codename, seq: rows.length + 1 });
    }
  }
  await db.transaction().execute((trx) => inBatches(rows, (batch) => trx.insertInto('packages').values(batch).execute()));
}

/** Findings for about one package in five, one to five each. */
export async function seedFindings(db: Db): Promise<number> {
  const ids = (await db.selectFrom('packages').select('id').execute()).map((r) => r.id);
  const severities: Severity[] = ['critical', 'high', 'medium', 'low', 'negligible'];
  const rows = ids.filter(() => rand(5) === 0).flatMap((id) =>
    Array.from({ length: 1 + rand(5) }, (_, k) => {
      const severity = rand(severities.length);
      return { package_id: id, cve_id: `CVE-2026-${id.length}${k}${rand(100000)}`, severity: severities[severity]!, severity_rank: 5 - severity, cvss_score: null, epss: null, in_kev: null, fix_state: 'fixed' as const, data: '{}' };
    }));
  const unique = [...new Map(rows.map((r) => [`${r.package_id} ${r.cve_id}`, r])).values()];
  await db.transaction().execute((trx) => inBatches(unique, (batch) => trx.insertInto('package_findings').values(batch).execute()));
  return unique.length;
}

/** One UPLOAD per package at its creation time, plus decisions, quarantines and logins, in time order. */
export async function seedAudit(db: Db, packages: number, now: number): Promise<number> {
  const entries: Array<{ ms: number; action: string; result: string; detail: string | null }> = [];
  for (let i = 0; i < packages; i++) {
    const st = status();
    entries.push({ ms: withinYear(now), action: 'UPLOAD', result: st === 'published' ? 'SUCCESS' : st === 'rejected' ? 'FAILURE' : 'WARNING', detail: `distribution=jammy; status=${st}; sha256=00` });
  }
  for (let i = 0; i < packages / 10; i++) {
    const action = ['accept_risk', 'exception', 'reject', 'upgrade_required'][rand(4)];
    entries.push({ ms: withinYear(now), action: 'SECURITY_DECISION', result: 'SUCCESS', detail: `action=${action}; justification=bench; expiry=never` });
  }
  for (let i = 0; i < packages / 25; i++) entries.push({ ms: withinYear(now), action: 'QUARANTINE', result: 'SUCCESS', detail: 'arch=amd64' });
  for (let i = 0; i < packages / 2; i++) entries.push({ ms: withinYear(now), action: 'LOGIN', result: 'SUCCESS', detail: null });
  entries.sort((a, b) => a.ms - b.ms);
  const rows = entries.map((e, k) => ({
    seq: k + 1, timestamp: iso(e.ms), action: e.action, username: 'bench', result: e.result, package: `pkg${k % packages}`, version: '1.0-1', detail: e.detail, ip: null, hash: '0'.repeat(64),
  }));
  await db.transaction().execute((trx) => inBatches(rows, (batch) => trx.insertInto('audit_index').values(batch).execute()));
  return rows.length;
}

/**
 * `count` daily counter rows over the last `days` UTC days, for packages in an index, and the
 * per-day rollup that the service keeps beside them.
 */
export async function seedDownloads(db: Db, count: number, days: number, now: number): Promise<number> {
  await sql`create table bench_days (n integer not null, day text not null)`.execute(db);
  try {
    const list = Array.from({ length: days }, (_, n) => ({ n, day: new Date(now - n * DAY_MS).toISOString().slice(0, 10) }));
    await sql`insert into bench_days (n, day) values ${sql.join(list.map((d) => sql`(${d.n}, ${d.day})`))}`.execute(db);
    const candidates = Number((await sql<{ n: number }>`select count(*) as n from packages where status in ('published', 'accepted_risk', 'exception')`.execute(db)).rows[0]!.n);
    const modulo = Math.max(1, Math.floor((candidates * days) / count / 1.05));
    await sql`
      insert into download_counts (day, distribution, name, version, arch, downloads)
      select d.day, p.distribution, p.name, p.version, p.arch, 1 + ((p.seq * 7 + d.n * 13) % 40)
      from packages p cross join bench_days d
      where p.status in ('published', 'accepted_risk', 'exception') and (p.seq * 31 + d.n * 17) % ${sql.lit(modulo)} = 0
      limit ${sql.lit(count)}`.execute(db);
    await sql`
      insert into download_days (day, distribution, downloads)
      select day, distribution, sum(downloads) from download_counts group by day, distribution`.execute(db);
  } finally {
    await sql`drop table bench_days`.execute(db);
  }
  return Number((await sql<{ n: number }>`select count(*) as n from download_counts`.execute(db)).rows[0]!.n);
}
