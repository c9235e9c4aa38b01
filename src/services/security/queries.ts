/**
 * Read-only security views: vulnerabilities across packages, the posture summary, packages with
 * findings, one version's CVEs and the review queue in its risk order (review-order.ts in the
 * security domain). Lists are paged (`page`, `per_page`) and answer the total.
 */
import type { Db } from '../../adapters/db/index.js';
import {
  countFindingsBySeverity,
  countKevFindings,
  countPackagesByStatus,
  countPackagesByWorstRank,
  findDeadlinesInStatuses,
  findPackagesByIds,
  findReviewKeysInStatuses,
  findSecurityPackagesPage,
  findVersionRowsInIndexOrder,
  findVulnerabilitiesPage,
  type SecurityListRow,
} from '../../adapters/db/security.table.js';
import type { PackageStatus } from '../../domain/distributions.js';
import { reviewComparator, reviewKeyOf, SEVERITIES, severityRank, type Severity } from '../../domain/security/index.js';
import { normaliseRow, type PackageRow } from '../../adapters/db/packages.table.js';
import { decisionKey } from '../../adapters/db/decisions.table.js';
import { decisionOf, decisionsOf, type DecisionView } from './decisions.js';
import { parseStoredFindings } from './findings-store.js';
import { locatePackages, type PackageSelector } from './locate.js';
import type { StoredFinding } from '../../domain/security/index.js';
import type { VulnDatabase, VulnDbStatus } from './vuln-db.js';
import { GenerationCache } from '../packages/generation-cache.js';

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

/** The first moment (epoch ms) after `now` at which `daysRemaining(deadline, ·)` answers differently; Infinity when never. */
function daysRemainingChangeAt(deadline: string | null | undefined, now: Date): number {
  if (!deadline) return Infinity;
  const t = Date.parse(deadline);
  if (Number.isNaN(t)) return Infinity;
  return t - (Math.ceil((t - now.getTime()) / DAY_MS) - 1) * DAY_MS;
}

/** A finding as answered: the stored finding, its SLA remaining days and whether it holds the package. */
export function findingView(f: StoredFinding, now: Date): StoredFinding & { sla_remaining_days: number | null; held: boolean } {
  return { ...f, sla_remaining_days: daysRemaining(f.sla_deadline, now), held: f.action === 'review' || f.action === 'block' };
}

/** One package with its security summary. */
export function packageSecurityView(row: SecurityListRow, now: Date) {
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
  /** The review queue's order (ids), per filter and catalog generation. */
  private readonly orders: GenerationCache;
  /** Its pages (rows and decision records), likewise; the entries made of them are kept with them until the time changes them. */
  private readonly pages: GenerationCache;

  constructor(
    private readonly db: Db,
    private readonly vulnDb: VulnDatabase,
  ) {
    this.orders = new GenerationCache(db, 50);
    this.pages = new GenerationCache(db, 32);
  }

  /** GET /security/vulnerabilities: CVEs across packages, worst first, with the packages affected. */
  async vulnerabilities(filter: { severity?: Severity; distribution?: string; q?: string; kev?: boolean }, paging: Paging) {
    const { total, summaries, occurrences } = await findVulnerabilitiesPage(this.db, filter, paging);
    const items = summaries.map((r) => {
      const rows = occurrences.filter((d) => d.cve_id === r.cve_id);
      const findings = rows.map((d) => JSON.parse(d.data) as StoredFinding);
      const best = findings.find((f) => severityRank(f.severity) === r.rank) ?? findings[0];
      const kev = r.kev;
      return {
        cve_id: r.cve_id,
        severity: severityOfRank(r.rank),
        cvss_score: r.cvss >= 0 ? r.cvss : null,
        cvss_vector: best?.cvss_vector ?? null,
        epss: r.epss >= 0 ? r.epss : null,
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
  async posture(now = new Date()) {
    const byStatus = await countPackagesByStatus(this.db);
    const findings = await countFindingsBySeverity(this.db);
    const worst = await countPackagesByWorstRank(this.db);
    const kev = await countKevFindings(this.db);
    const review = (await findDeadlinesInStatuses(this.db, REVIEW_STATUSES)).map((deadline) => daysRemaining(deadline, now));
    const zero = (): Record<Severity, number> => ({ critical: 0, high: 0, medium: 0, low: 0, negligible: 0 });
    const findingsBySeverity = zero();
    const cvesBySeverity = zero();
    for (const r of findings) {
      findingsBySeverity[r.severity] = r.findings;
      cvesBySeverity[r.severity] = r.cves;
    }
    const packagesByWorst = zero();
    for (const r of worst) {
      const s = severityOfRank(r.rank);
      if (s) packagesByWorst[s] = r.n;
    }
    const statuses: Record<string, number> = { published: 0, pending_review: 0, accepted_risk: 0, exception: 0, upgrade_required: 0, quarantined: 0 };
    for (const r of byStatus) statuses[r.status] = r.n;
    const db: VulnDbStatus = await this.vulnDb.status(now);
    return {
      packages_total: Object.values(statuses).reduce((a, b) => a + b, 0),
      by_status: statuses,
      packages_by_worst_severity: packagesByWorst,
      findings_by_severity: findingsBySeverity,
      cves_by_severity: cvesBySeverity,
      kev,
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
    const { total, rows } = await findSecurityPackagesPage(this.db, filter, HELD_STATUSES, paging);
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
      rows = (await findVersionRowsInIndexOrder(this.db, name, version)).map(normaliseRow);
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
  async reviewQueue(filter: { sort?: string; status?: PackageStatus | 'all'; distribution?: string }, paging: Paging, now = new Date()) {
    const statuses: PackageStatus[] = filter.status && filter.status !== 'all' ? [filter.status] : [...REVIEW_STATUSES];
    // The order needs every candidate's findings: computed on the light columns once per catalog
    // generation (any change to a package's status, findings or deadline starts a new one); only
    // the page's rows are read whole.
    const key = JSON.stringify(['review', statuses, filter.distribution ?? null, filter.sort === 'sla' ? 'sla' : 'risk']);
    const read = async (): Promise<ReviewPage> => {
      const ordered = await this.orders.get(key, async () => {
        const candidates = await findReviewKeysInStatuses(this.db, statuses, filter.distribution);
        const entries = candidates.map((c) => ({ id: c.id, distribution: c.distribution, key: reviewKeyOf(c, parseStoredFindings(c.findings).details) }));
        const compare = reviewComparator(filter.sort);
        entries.sort((a, b) => compare(a.key, b.key) || (a.distribution < b.distribution ? -1 : a.distribution > b.distribution ? 1 : 0));
        return entries.map((e) => e.id);
      });
      const pageIds = ordered.slice((paging.page - 1) * paging.perPage, paging.page * paging.perPage);
      const byId = new Map((await findPackagesByIds(this.db, pageIds)).map((r) => [r.id, r]));
      // A row deleted between the two reads is left out of the page.
      const rows = pageIds.flatMap((id) => {
        const row = byId.get(id);
        return row ? [{ row, details: parseStoredFindings(row.findings).details }] : [];
      });
      // Decision records are part of the catalog generation too (migration 0016).
      const decisions = await decisionsOf(this.db, rows.map(({ row }) => row).filter((row) => row.status === 'upgrade_required'));
      return { total: ordered.length, slice: rows, decisions };
    };
    const page = await this.pages.page(key, paging, read);
    // The entries depend on the page and the time only: kept with the page until a deadline's days
    // remaining change (or a caller asks about an earlier moment). The same object is answered
    // while it is kept, so the route can send the bytes it made of it.
    const time = now.getTime();
    if (!page.entries || time < page.entries.builtAt || time >= page.entries.validUntil) page.entries = reviewEntries(page, now);
    return page.entries;
  }
}

interface ReviewPage {
  total: number;
  slice: Array<{ row: SecurityListRow; details: StoredFinding[] }>;
  decisions: Map<string, DecisionView>;
  entries?: ReturnType<typeof reviewEntries>;
}

/** A review page's entries at `now`, and until when they stay as they are. */
function reviewEntries({ total, slice, decisions }: ReviewPage, now: Date) {
  let validUntil = Infinity;
  const items = slice.map(({ row, details }) => {
    validUntil = Math.min(validUntil, daysRemainingChangeAt(row.sla_deadline, now), ...details.map((f) => daysRemainingChangeAt(f.sla_deadline, now)));
    const findings = details.map((f) => findingView(f, now));
    const held = findings.filter((f) => f.held);
    const remaining = daysRemaining(row.sla_deadline, now);
    return {
      ...packageSecurityView(row, now),
      overdue: remaining !== null && remaining < 0,
      held_because: held.length > 0 ? held.map((f) => `${f.cve_id} ${f.severity}${f.in_kev ? ' (KEV)' : ''}: policy ${f.action}`) : (JSON.parse(row.reasons) as string[]),
      findings,
      decision: row.status === 'upgrade_required' ? decisions.get(decisionKey(row)) ?? null : null,
    };
  });
  return { items, total, builtAt: now.getTime(), validUntil };
}
