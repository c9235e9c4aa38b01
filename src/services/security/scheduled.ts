/**
 * The daily security jobs: expired accepted risks and exceptions go back to pending_review (out
 * of the index, re-signed, notified `risk.expired` and `package.pending_review`): an acceptance
 * with an expiry holds only until then, and the package needs a new decision. Packages in review
 * whose SLA deadline is within 7 days (or past) are notified `sla.warning`.
 */
import type { AuditLog } from '../../adapters/audit/audit-log.js';
import { findExpiringAcceptances } from '../../adapters/db/decisions.table.js';
import type { Db } from '../../adapters/db/index.js';
import { findPackagesWithDeadline } from '../../adapters/db/security.table.js';
import { expireDecisions, slaDeadline, slaWarnings } from '../../domain/security/index.js';
import { isoUtcSeconds } from '../../domain/time.js';
import { normaliseRow } from '../../adapters/db/packages.table.js';
import type { SettingsSnapshot } from '../settings.js';
import { parseStoredFindings } from './findings-store.js';
import { notifyPendingReview, notifyRiskExpired, notifySlaWarning, type SecurityNotifier } from './notices.js';
import { policyFromSettings, withSlaDeadlines, worstHeldSeverity } from './scanner.js';
import type { PackageTransitions } from './transitions.js';

export interface ScheduledDeps {
  db: Db;
  settings: { all(): Promise<SettingsSnapshot> };
  transitions: PackageTransitions;
  audit: AuditLog;
  notifier: SecurityNotifier;
  /** The public base URL for links (the `app_url` setting, else APP_URL). */
  appUrl: () => Promise<string>;
}

/** One expired package. */
export interface ExpiredPackage {
  name: string;
  version: string;
  arch: string;
  distribution: string;
  previous_status: string;
  expires_at: string | null;
}

/** Returns expired accepted_risk/exception packages to pending_review. */
export async function runExpiry(deps: ScheduledDeps, now = new Date()): Promise<ExpiredPackage[]> {
  const rows = await findExpiringAcceptances(deps.db);
  const candidates = rows.map((r) => ({ row: normaliseRow(r), status: r.status, expires_at: r.decision_expires_at }));
  const due = expireDecisions(now, candidates);
  if (due.length === 0) return [];
  const policy = policyFromSettings(await deps.settings.all());
  const out: ExpiredPackage[] = [];
  for (const { row: { row, expires_at } } of due) {
    const findings = withSlaDeadlines(parseStoredFindings(row.findings).details, policy, now);
    const deadline = slaDeadline(worstHeldSeverity(findings), policy, now);
    const reasons = [...(JSON.parse(row.reasons) as string[]), `expiry: ${row.status} expired on ${expires_at}`];
    const updated = await deps.transitions.apply(row, { status: 'pending_review', sla_deadline: deadline ? isoUtcSeconds(deadline) : null, findings, reasons });
    await deps.audit.record({
      action: 'SECURITY_DECISION',
      user: null,
      result: 'WARNING',
      package: row.name,
      version: row.version,
      detail: `action=expired; previous=${row.status}; distribution=${row.distribution}; expiry=${expires_at}`,
      ip: null,
    });
    notifyRiskExpired(deps.notifier, updated, { status: row.status, expires_at });
    notifyPendingReview(deps.notifier, updated, 'expiry', await deps.appUrl());
    out.push({ name: row.name, version: row.version, arch: row.arch, distribution: row.distribution, previous_status: row.status, expires_at });
  }
  return out;
}

/** Sends `sla.warning` for every package in review whose deadline is within 7 days or past. */
export async function runSlaWarnings(deps: ScheduledDeps, now = new Date()): Promise<number> {
  const rows = (await findPackagesWithDeadline(deps.db, ['pending_review', 'upgrade_required'])).map(normaliseRow);
  const warnings = slaWarnings(now, rows);
  for (const w of warnings) notifySlaWarning(deps.notifier, w.row, w.days_remaining, w.overdue);
  return warnings.length;
}
