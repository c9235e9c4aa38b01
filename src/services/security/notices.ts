/**
 * Webhook payloads and e-mail texts of the security events: a package entering review, a
 * decision, an SLA about to pass, an accepted risk or exception that expired.
 */
import type { Notifier } from '../notifications.js';
import type { PackageRow } from '../../adapters/db/packages.table.js';
import { parseStoredFindings } from './findings-store.js';

/** The Notifier as these helpers use it. */
export type SecurityNotifier = Pick<Notifier, 'notify'>;

function identity(row: PackageRow): Record<string, unknown> {
  return { name: row.name, package: row.name, version: row.version, arch: row.arch, distribution: row.distribution, status: row.status };
}

function heldCves(row: PackageRow): string[] {
  return parseStoredFindings(row.findings).details.filter((f) => f.action === 'review' || f.action === 'block').map((f) => f.cve_id);
}

function label(row: PackageRow): string {
  return `${row.name} ${row.version} (${row.arch}, ${row.distribution})`;
}

/** `package.pending_review`: the package waits for a decision. */
export function notifyPendingReview(n: SecurityNotifier, row: PackageRow, cause: 'upload' | 'rescan' | 'expiry', appUrl: string): void {
  const cves = heldCves(row);
  n.notify('package.pending_review', { ...identity(row), cause, cve_ids: cves, sla_deadline: row.sla_deadline, reasons: JSON.parse(row.reasons) as string[] }, {
    subject: `[Tollgate] ${label(row)} is waiting for a security review`,
    text: [
      `${label(row)} entered pending_review (${cause}).`,
      cves.length ? `CVEs: ${cves.join(', ')}` : '',
      row.sla_deadline ? `Review deadline: ${row.sla_deadline}` : '',
      `Review queue: ${appUrl}/security/review-queue`,
    ].filter(Boolean).join('\n'),
  });
}

/** `package.decision`: a reviewer decided. */
export function notifyDecision(
  n: SecurityNotifier,
  row: PackageRow,
  decision: { action: string; justification: string; expires_at: string | null; target_version: string | null; decided_by: string | null; previous_status: string },
): void {
  n.notify('package.decision', { ...identity(row), ...decision }, {
    subject: `[Tollgate] ${label(row)}: ${decision.action} by ${decision.decided_by ?? 'unknown'}`,
    text: [
      `Decision on ${label(row)}: ${decision.action} (was ${decision.previous_status}, now ${row.status}).`,
      `Justification: ${decision.justification}`,
      `Expiry: ${decision.expires_at ?? 'never'}`,
      decision.target_version ? `Target version: ${decision.target_version}` : '',
      `Decided by: ${decision.decided_by ?? 'unknown'}`,
    ].filter(Boolean).join('\n'),
  });
}

/** `sla.warning`: the review deadline is within 7 days (or past). */
export function notifySlaWarning(n: SecurityNotifier, row: PackageRow, daysRemaining: number, overdue: boolean): void {
  n.notify('sla.warning', { ...identity(row), sla_deadline: row.sla_deadline, days_remaining: daysRemaining, overdue, cve_ids: heldCves(row) }, {
    subject: `[Tollgate] SLA ${overdue ? 'overdue' : `in ${daysRemaining} day(s)`}: ${label(row)}`,
    text: `${label(row)} is ${row.status}; its review deadline ${overdue ? 'passed on' : 'is'} ${row.sla_deadline}.`,
  });
}

/** `risk.expired`: an accepted risk or exception expired; the package is back in review. */
export function notifyRiskExpired(n: SecurityNotifier, row: PackageRow, previous: { status: string; expires_at: string | null }): void {
  n.notify('risk.expired', { ...identity(row), previous_status: previous.status, expired_at: previous.expires_at }, {
    subject: `[Tollgate] ${previous.status} expired: ${label(row)}`,
    text: `The ${previous.status} decision on ${label(row)} expired on ${previous.expires_at}. The package left the index and is back in pending_review.`,
  });
}
