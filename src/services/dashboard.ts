/**
 * The dashboard: repository statistics, activity history per UTC day and a summary. Every figure
 * is a SQL aggregate read through an index (migration 0004); JavaScript only shapes the few
 * aggregated rows.
 */
import {
  countFindingsBySeverity, countHistoryByDay, countPackagesByDistributionAndStatus, countPackagesInStatuses, findRecentAuditEntries,
  lowestAuditSeq, sumStorageByFormat,
} from '../adapters/db/dashboard.table.js';
import type { Db } from '../adapters/db/index.js';
import { countPackages } from '../adapters/db/packages.table.js';
import { HISTORY_SERIES_NAMES, RECENT_ACTIVITY, type HistorySeries } from '../domain/dashboard.js';
import { allDistributions, findDistribution, PACKAGE_STATUSES } from '../domain/distributions.js';
import { SEVERITIES, type Severity } from '../domain/security/index.js';
import { lastDays, utcDay } from '../domain/utc-days.js';
import { REVIEW_STATUSES } from './security/queries.js';
import { isoUtc, toApiTime } from '../domain/time.js';
import type { AuditIndexEntry } from '../adapters/db/audit.table.js';

type StatusCounts = Record<string, number>;

export interface DashboardStats {
  generated_at: string;
  packages_total: number;
  storage_bytes: number;
  stored_files: number;
  by_status: StatusCounts;
  by_format: Array<{ format: string; packages: number; stored_files: number; storage_bytes: number }>;
  by_distribution: Array<{ distribution: string; format: string; packages: number; by_status: StatusCounts }>;
}

export type HistoryDay = { day: string } & Record<HistorySeries, number>;

export interface DashboardHistory {
  days: number;
  from: string;
  to: string;
  totals: Record<HistorySeries, number>;
  history: HistoryDay[];
}

/** An audit index entry as the dashboard shows it (without the source IP and chain hash). */
export type ActivityEntry = Omit<AuditIndexEntry, 'ip' | 'hash'>;

export interface DashboardSummary {
  generated_at: string;
  packages_total: number;
  pending_reviews: number;
  pending_by_status: Record<string, number>;
  findings: Record<Severity, number>;
  findings_total: number;
  recent_activity: ActivityEntry[];
}

const zeroStatuses = (): StatusCounts => Object.fromEntries(PACKAGE_STATUSES.map((s) => [s, 0]));
const emptyDay = (day: string): HistoryDay => ({ day, uploads: 0, publications: 0, reviews: 0, quarantines: 0 });
/** How long after midnight UTC an entry of the previous day may still reach the index (another replica's clock, a slow write). */
const LATE_ENTRY_MS = 10 * 60_000;

export class DashboardService {
  private readonly closedDays = new Map<string, HistoryDay>();
  private closedAnchor: number | null = null;

  constructor(private readonly db: Db) {}

  /** GET /dashboard/stats */
  async stats(): Promise<DashboardStats> {
    const perStatus = await countPackagesByDistributionAndStatus(this.db);
    // Storage counts each stored file once: a file promoted to several distributions is one file.
    const perFormat = await sumStorageByFormat(this.db);

    const byStatus = zeroStatuses();
    const byDistribution = new Map(allDistributions().map((d) => [d.codename, { distribution: d.codename, format: d.format as string, packages: 0, by_status: zeroStatuses() }]));
    for (const r of perStatus) {
      const n = Number(r.n);
      byStatus[r.status] = (byStatus[r.status] ?? 0) + n;
      const dist = byDistribution.get(r.distribution)
        ?? { distribution: r.distribution, format: findDistribution(r.distribution)?.format ?? 'unknown', packages: 0, by_status: zeroStatuses() };
      dist.packages += n;
      dist.by_status[r.status] = (dist.by_status[r.status] ?? 0) + n;
      byDistribution.set(r.distribution, dist);
    }
    const formats = new Map<string, DashboardStats['by_format'][number]>([
      ['deb', { format: 'deb', packages: 0, stored_files: 0, storage_bytes: 0 }],
      ['rpm', { format: 'rpm', packages: 0, stored_files: 0, storage_bytes: 0 }],
    ]);
    for (const r of perFormat) {
      formats.set(r.format, { format: r.format, packages: Number(r.packages), stored_files: Number(r.files), storage_bytes: Number(r.bytes ?? 0) });
    }
    const byFormat = [...formats.values()];
    return {
      generated_at: isoUtc(),
      packages_total: byFormat.reduce((n, f) => n + f.packages, 0),
      storage_bytes: byFormat.reduce((n, f) => n + f.storage_bytes, 0),
      stored_files: byFormat.reduce((n, f) => n + f.stored_files, 0),
      by_status: byStatus,
      by_format: byFormat,
      by_distribution: [...byDistribution.values()],
    };
  }

  /**
   * GET /dashboard/history: one aggregate over the audit index, grouped by UTC day. The audit trail
   * is append-only, so a day that has ended no longer changes: its figures are kept in memory and
   * only the days not seen yet (and today) are aggregated. Retention deleting old entries moves
   * the lowest sequence number, which drops the kept days.
   */
  async history(days: number, now = new Date()): Promise<DashboardHistory> {
    const window = lastDays(days, now);
    const lowest = await lowestAuditSeq(this.db);
    if (lowest !== this.closedAnchor) {
      this.closedDays.clear();
      this.closedAnchor = lowest;
    }
    const closedBefore = utcDay(now.getTime() - LATE_ENTRY_MS);
    const first = window.days.find((d) => d >= closedBefore || !this.closedDays.has(d))!;
    const fresh = new Map((await countHistoryByDay(this.db, first, window.to)).map((d) => [d.day, d]));
    const history = window.days.map((day) => (day < first ? this.closedDays.get(day)! : (fresh.get(day) ?? emptyDay(day))));
    for (const d of history) if (d.day >= first && d.day < closedBefore) this.closedDays.set(d.day, d);
    const totals = emptyDay('');
    for (const d of history) for (const name of HISTORY_SERIES_NAMES) totals[name] += d[name];
    const { day: _unused, ...sums } = totals;
    return { days, from: window.from, to: window.to, totals: sums, history };
  }

  /** GET /dashboard/summary */
  async summary(): Promise<DashboardSummary> {
    const total = await countPackages(this.db);
    const pending = await countPackagesInStatuses(this.db, REVIEW_STATUSES);
    const findings = await countFindingsBySeverity(this.db);
    const recent = await findRecentAuditEntries(this.db, RECENT_ACTIVITY);
    const pendingByStatus: Record<string, number> = Object.fromEntries(REVIEW_STATUSES.map((s) => [s, 0]));
    for (const r of pending) pendingByStatus[r.status] = Number(r.n);
    const bySeverity = Object.fromEntries(SEVERITIES.map((s) => [s, 0])) as Record<Severity, number>;
    for (const r of findings) if (r.severity in bySeverity) bySeverity[r.severity as Severity] = Number(r.n);
    return {
      generated_at: isoUtc(),
      packages_total: total,
      pending_reviews: Object.values(pendingByStatus).reduce((a, b) => a + b, 0),
      pending_by_status: pendingByStatus,
      findings: bySeverity,
      findings_total: Object.values(bySeverity).reduce((a, b) => a + b, 0),
      recent_activity: recent.map(({ username, ...r }) => ({ ...r, seq: Number(r.seq), timestamp: toApiTime(r.timestamp) ?? r.timestamp, user: username })),
    };
  }
}
