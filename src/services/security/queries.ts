/**
 * Read-only security views: vulnerabilities across packages, the posture summary, packages with
 * findings, one version's CVEs and the review queue (DECISIONS §5 order). Paged per DECISIONS §1.
 */
import { sql } from 'kysely';
import type { Db } from '../../adapters/db/index.js';
import type { PackageStatus } from '../../domain/distributions.js';
import { reviewComparator, reviewKeyOf, SEVERITIES, severityRank, type Severity } from '../../domain/security/index.js';
import { normaliseRow, type PackageRow } from '../packages/package-store.js';
import { decisionOf, type DecisionView } from './decisions.js';
import { parseStoredFindings } from './findings-store.js';
import { locatePackages, type PackageSelector } from './locate.js';
import type { StoredFinding } from '../../domain/security/index.js';
import type { VulnDatabase, VulnDbStatus } from './vuln-db.js';

const DAY_MS = 86_400_000;
/** Statuses shown by /security/packages without a status filter even when they have no finding. */
const HELD_STATUSES: readonly PackageStatus[] = ['pending_review', 'upgrade_required', 'accepted_risk', 'exception', 'quarantined'];
export const REVIEW_STATUSES = ['pending_review', 'upgrade_required'] as const;

export interface Paging {
  page: number;
  perPage: number;
}

export interface PageResult<T> {
  items: T[];
  total: number;
}

/** Days until `deadline` (negative when past), rounded up; null without a deadline. */
export function daysRemaining(deadline: string | null | undefined, now: Date): number | null {
  if (!deadline) return null;
  const t = Date.parse(deadline);
  return Number.isNaN(t) ? null : Math.ceil((t - now.getTime()) / DAY_MS);
}

function severityOfRank(rank: number | null): Severity | null {
  if (rank === null || rank < 0) return null;
  return SEVERITIES[SEVERITIES.length - 1 - rank] ?? null;
}

/** A finding as answered: the stored finding, its SLA remaining days and whether it holds the package. */
export function findingView(f: StoredFinding, now: Date): StoredFinding & { sla_remaining_days: number | null; held: boolean } {
  return { ...f, sla_remaining_days: daysRemaining(f.sla_deadline, now), held: f.action === 'review' || f.action === 'block' };
}

/** One package with its security summary. */
export function packageSecurityView(row: PackageRow, now: Date) {
  const { counts, details } = parseStoredFindings(row.findings);
  const key = reviewKeyOf(row, details);
  let worst: Severity | null = null;
  for (const f of details) if (worst === null || severityRank(f.severity) > severityRank(worst)) worst = f.severity;
  return {
    name: row.name,
    package: row.name,
    version: row.version,
    arch: row.arch,
    distribution: row.distribution,
    status: row.status,
    cve_status: row.cve_status,
    findings_count: details.length,
    counts,
    worst_severity: worst,
    in_kev: key.in_kev,
    epss: key.epss,
    cvss_score: key.cvss_score,
    sla_deadline: row.sla_deadline,
    sla_remaining_days: daysRemaining(row.sla_deadline, now),
    reasons: JSON.parse(row.reasons) as string[],
    uploaded_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export class SecurityQueries {
  constructor(
    private readonly db: Db,
    private readonly vulnDb: VulnDatabase,
  ) {}

  /** GET /security/vulnerabilities: CVEs across packages, worst first, with the packages affected. */
  async vulnerabilities(filter: { severity?: Severity; distribution?: string; q?: string; kev?: boolean }, paging: Paging): Promise<PageResult<Record<string, unknown>>> {
    let base = this.db.selectFrom('package_findings as f').innerJoin('packages as p', 'p.id', 'f.package_id');
    if (filter.severity) base = base.where('f.severity', '=', filter.severity);
    if (filter.distribution) base = base.where('p.distribution', '=', filter.distribution);
    if (filter.q) base = base.where('f.cve_id', 'like', `%${filter.q.toUpperCase().replace(/[%_]/g, '')}%`);
    if (filter.kev !== undefined) base = base.where('f.in_kev', '=', filter.kev ? 1 : 0);
    const total = Number((await base.select((eb) => eb.fn.count('f.cve_id').distinct().as('n')).executeTakeFirst())?.n ?? 0);
    const page = await base
      .select((eb) => [
        'f.cve_id',
        eb.fn.max('f.severity_rank').as('rank'),
        sql<number>`coalesce(max(f.in_kev), -1)`.as('kev'),
        sql<number>`coalesce(max(f.epss), -1)`.as('epss'),
        sql<number>`coalesce(max(f.cvss_score), -1)`.as('cvss'),
      ])
      .groupBy('f.cve_id')
      .orderBy('rank', 'desc')
      .orderBy('kev', 'desc')
      .orderBy('epss', 'desc')
      .orderBy('cvss', 'desc')
      .orderBy('f.cve_id')
      .limit(paging.perPage)
      .offset((paging.page - 1) * paging.perPage)
      .execute();
    const ids = page.map((r) => r.cve_id);
    const details = ids.length === 0 ? [] : await base.select(['f.cve_id', 'f.data', 'p.name', 'p.version', 'p.arch', 'p.distribution', 'p.status']).where('f.cve_id', 'in', ids).orderBy('p.name').orderBy('p.version').execute();
    const items = page.map((r) => {
      const rows = details.filter((d) => d.cve_id === r.cve_id);
      const findings = rows.map((d) => JSON.parse(d.data) as StoredFinding);
      const best = findings.find((f) => severityRank(f.severity) === Number(r.rank)) ?? findings[0];
      const kev = Number(r.kev);
      return {
        cve_id: r.cve_id,
        severity: severityOfRank(Number(r.rank)),
        cvss_score: Number(r.cvss) >= 0 ? Number(r.cvss) : null,
        cvss_vector: best?.cvss_vector ?? null,
        epss: Number(r.epss) >= 0 ? Number(r.epss) : null,
        epss_percentile: best?.epss_percentile ?? null,
        in_kev: kev < 0 ? null : kev === 1,
        summary: best?.summary ?? '',
        advisory_ids: [...new Set(findings.map((f) => f.advisory_id))],
        package_count: rows.length,
        packages: rows.map((d, i) => ({
          name: d.name, version: d.version, arch: d.arch, distribution: d.distribution, status: d.status,
          affected_component: findings[i]!.affected_component, fix_state: findings[i]!.fix_state, fixed_version: findings[i]!.fixed_version,
        })),
      };
    });
    return { items, total };
  }

  /** GET /security/packages-posture: counts by status and severity, KEV, SLA, database state. */
  async posture(now = new Date()): Promise<Record<string, unknown>> {
    const byStatus = await this.db.selectFrom('packages').select(['status', (eb) => eb.fn.countAll().as('n')]).groupBy('status').execute();
    const findings = await this.db.selectFrom('package_findings').select(['severity', (eb) => eb.fn.countAll().as('n'), (eb) => eb.fn.count('cve_id').distinct().as('cves')]).groupBy('severity').execute();
    const worst = await this.db
      .selectFrom((eb) => eb.selectFrom('package_findings').select(['package_id', (e) => e.fn.max('severity_rank').as('rank')]).groupBy('package_id').as('w'))
      .select(['w.rank', (eb) => eb.fn.countAll().as('n')])
      .groupBy('w.rank')
      .execute();
    const kev = await this.db.selectFrom('package_findings').select([(eb) => eb.fn.countAll().as('n'), (eb) => eb.fn.count('package_id').distinct().as('packages')]).where('in_kev', '=', 1).executeTakeFirst();
    const review = (await this.db.selectFrom('packages').select(['sla_deadline']).where('status', 'in', [...REVIEW_STATUSES]).execute()).map((r) => daysRemaining(r.sla_deadline, now));
    const zero = (): Record<Severity, number> => ({ critical: 0, high: 0, medium: 0, low: 0, negligible: 0 });
    const findingsBySeverity = zero();
    const cvesBySeverity = zero();
    for (const r of findings) {
      findingsBySeverity[r.severity as Severity] = Number(r.n);
      cvesBySeverity[r.severity as Severity] = Number(r.cves);
    }
    const packagesByWorst = zero();
    for (const r of worst) {
      const s = severityOfRank(Number(r.rank));
      if (s) packagesByWorst[s] = Number(r.n);
    }
    const statuses: Record<string, number> = { published: 0, pending_review: 0, accepted_risk: 0, exception: 0, upgrade_required: 0, quarantined: 0 };
    for (const r of byStatus) statuses[r.status] = Number(r.n);
    const db: VulnDbStatus = await this.vulnDb.status(now);
    return {
      packages_total: Object.values(statuses).reduce((a, b) => a + b, 0),
      by_status: statuses,
      packages_by_worst_severity: packagesByWorst,
      findings_by_severity: findingsBySeverity,
      cves_by_severity: cvesBySeverity,
      kev: { findings: Number(kev?.n ?? 0), packages: Number(kev?.packages ?? 0) },
      review: {
        pending: review.length,
        overdue: review.filter((d) => d !== null && d < 0).length,
        due_within_7_days: review.filter((d) => d !== null && d >= 0 && d <= 7).length,
      },
      vulnerability_database: { configured: db.configured, advisories: db.advisories, synced_at: db.synced_at, age_hours: db.age_seconds === null ? null : Math.round(db.age_seconds / 36) / 100 },
    };
  }

  /** GET /security/packages: packages with findings (or in a held status), filtered by status and severity. */
  async packages(filter: { status?: PackageStatus; severity?: Severity; distribution?: string; q?: string }, paging: Paging, now = new Date()): Promise<PageResult<ReturnType<typeof packageSecurityView>>> {
    let q = this.db.selectFrom('packages as p');
    if (filter.status) q = q.where('p.status', '=', filter.status);
    if (filter.distribution) q = q.where('p.distribution', '=', filter.distribution);
    if (filter.q) q = q.where('p.name', 'like', `%${filter.q.replace(/[%_]/g, '')}%`);
    if (filter.severity) {
      const severity = filter.severity;
      q = q.where(({ exists, selectFrom }) => exists(selectFrom('package_findings as f').select('f.package_id').whereRef('f.package_id', '=', 'p.id').where('f.severity', '=', severity)));
    } else if (!filter.status) {
      q = q.where(({ or, exists, selectFrom, eb }) => or([exists(selectFrom('package_findings as f').select('f.package_id').whereRef('f.package_id', '=', 'p.id')), eb('p.status', 'in', HELD_STATUSES)]));
    }
    const total = Number((await q.select((eb) => eb.fn.countAll().as('n')).executeTakeFirst())?.n ?? 0);
    const rows = await q
      .selectAll('p')
      .select((eb) => eb.fn.coalesce(eb.selectFrom('package_findings as w').select((e) => e.fn.max('w.severity_rank').as('r')).whereRef('w.package_id', '=', 'p.id'), eb.val(-1)).as('worst_rank'))
      .orderBy('worst_rank', 'desc')
      .orderBy('p.name')
      .orderBy('p.version')
      .orderBy('p.distribution')
      .limit(paging.perPage)
      .offset((paging.page - 1) * paging.perPage)
      .execute();
    return { items: rows.map((r) => packageSecurityView(normaliseRow(r), now)), total };
  }

  /** GET /security/packages/{name}/{version}/cve: the CVEs of one version, per distribution. */
  async packageCves(name: string, version: string, selector: PackageSelector, now = new Date()) {
    let rows: PackageRow[];
    try {
      rows = await locatePackages(this.db, name, version, selector);
    } catch (error) {
      // Several arches are fine for a read: list them all.
      if ((error as { code?: string }).code !== 'arch_required') throw error;
      rows = (await this.db.selectFrom('packages').selectAll().where('name', '=', name).where('version', '=', version).orderBy('seq').execute()).map(normaliseRow);
    }
    const decisions = new Map<string, DecisionView | null>();
    for (const arch of new Set(rows.map((r) => r.arch))) decisions.set(arch, await decisionOf(this.db, name, version, arch));
    const packages = rows.map((r) => ({
      ...packageSecurityView(r, now),
      findings: parseStoredFindings(r.findings).details.map((f) => findingView(f, now)),
      decision: decisions.get(r.arch) ?? null,
    }));
    const byCve = new Map<string, ReturnType<typeof findingView>>();
    for (const p of packages) for (const f of p.findings) if (!byCve.has(f.cve_id)) byCve.set(f.cve_id, f);
    const findings = [...byCve.values()];
    return { name, package: name, version, packages, findings, cve_results: findings, total: findings.length };
  }

  /** GET /security/review-queue: packages awaiting a decision, KEV → EPSS → CVSS (or `sort=sla`). */
  async reviewQueue(filter: { sort?: string; status?: PackageStatus | 'all'; distribution?: string }, paging: Paging, now = new Date()): Promise<PageResult<Record<string, unknown>>> {
    const statuses: PackageStatus[] = filter.status && filter.status !== 'all' ? [filter.status] : [...REVIEW_STATUSES];
    let q = this.db.selectFrom('packages').selectAll().where('status', 'in', statuses);
    if (filter.distribution) q = q.where('distribution', '=', filter.distribution);
    const rows = (await q.execute()).map(normaliseRow);
    const entries = rows.map((row) => {
      const details = parseStoredFindings(row.findings).details;
      return { row, details, key: reviewKeyOf(row, details) };
    });
    const compare = reviewComparator(filter.sort);
    entries.sort((a, b) => compare(a.key, b.key) || (a.row.distribution < b.row.distribution ? -1 : a.row.distribution > b.row.distribution ? 1 : 0));
    const slice = entries.slice((paging.page - 1) * paging.perPage, paging.page * paging.perPage);
    const items = [];
    for (const { row, details } of slice) {
      const findings = details.map((f) => findingView(f, now));
      const held = findings.filter((f) => f.held);
      const remaining = daysRemaining(row.sla_deadline, now);
      items.push({
        ...packageSecurityView(row, now),
        overdue: remaining !== null && remaining < 0,
        held_because: held.length > 0 ? held.map((f) => `${f.cve_id} ${f.severity}${f.in_kev ? ' (KEV)' : ''}: policy ${f.action}`) : (JSON.parse(row.reasons) as string[]),
        findings,
        decision: row.status === 'upgrade_required' ? await decisionOf(this.db, row.name, row.version, row.arch) : null,
      });
    }
    return { items, total: entries.length };
  }
}
