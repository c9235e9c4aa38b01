/**
 * Security decisions and manual quarantine. The pure state machine
 * (src/domain/security/state-machine.ts) validates a decide request; this service applies it to
 * every distribution holding the package version (one decision record per name, version and
 * arch covers them all), upserts the decision record, audits and notifies.
 */
import type { AuditLog } from '../../adapters/audit/audit-log.js';
import { findDecision, findDecisionsFor, upsertDecision, type DecisionRow, type NewDecision } from '../../adapters/db/decisions.table.js';
import type { Db } from '../../adapters/db/index.js';
import { DomainError } from '../../domain/errors.js';
import { decide, DECIDABLE_STATUSES } from '../../domain/security/index.js';
import type { DecideSuccess } from '../../domain/security/state-machine.js';
import type { PackageRow } from '../../adapters/db/packages.table.js';
import type { SettingsSnapshot } from '../settings.js';
import { parseStoredFindings } from './findings-store.js';
import { locatePackages, type PackageSelector } from './locate.js';
import { notifyDecision, type SecurityNotifier } from './notices.js';
import { policyFromSettings, worstHeldSeverity } from './scanner.js';
import type { PackageTransitions } from './transitions.js';

/** Who acts, from where. */
export interface Actor {
  username: string | null;
  ip: string | null;
}

/** The stored decision record as answered: its JSON columns parsed. */
export type DecisionView = Omit<DecisionRow, 'cve_ids' | 'covered_cve_ids'> & { cve_ids: string[]; covered_cve_ids: string[] };

/** Answer of a decide request. */
export interface DecideAnswer {
  name: string;
  package: string;
  version: string;
  arch: string;
  action: string;
  status: string;
  previous_status: string;
  in_index: boolean;
  sla_deadline: string | null;
  distributions: Array<{ distribution: string; previous_status: string; status: string }>;
  decision: DecisionView;
}

/** Answer of a quarantine request. */
export interface QuarantineAnswer {
  name: string;
  package: string;
  version: string;
  arch: string;
  status: 'quarantined';
  changed: boolean;
  distributions: Array<{ distribution: string; previous_status: string; status: string }>;
}

interface SettingsSource {
  all(): Promise<SettingsSnapshot>;
}

const DECIDABLE = DECIDABLE_STATUSES as readonly string[];

const decisionView = (row: DecisionRow): DecisionView => ({ ...row, cve_ids: JSON.parse(row.cve_ids) as string[], covered_cve_ids: JSON.parse(row.covered_cve_ids) as string[] });

/** The decision record of a name/version/arch, or null. */
export async function decisionOf(db: Db, name: string, version: string, arch: string): Promise<DecisionView | null> {
  const row = await findDecision(db, name, version, arch);
  return row ? decisionView(row) : null;
}

/** The decision records of several name/version/arch in one query, by `decisionKey`. */
export async function decisionsOf(db: Db, packages: ReadonlyArray<{ name: string; version: string; arch: string }>): Promise<Map<string, DecisionView>> {
  return new Map([...(await findDecisionsFor(db, packages))].map(([key, row]) => [key, decisionView(row)]));
}

export class SecurityDecisions {
  constructor(
    private readonly db: Db,
    private readonly settings: SettingsSource,
    private readonly transitions: PackageTransitions,
    private readonly audit: AuditLog,
    private readonly notifier: SecurityNotifier,
  ) {}

  /** POST /security/packages/{name}/{version}/decide (and /decision). `body` is the raw request body. */
  async decide(name: string, version: string, body: unknown, selector: PackageSelector, actor: Actor, now = new Date()): Promise<DecideAnswer> {
    const rows = await locatePackages(this.db, name, version, selector);
    const policy = policyFromSettings(await this.settings.all());
    const decidable = rows.filter((r) => DECIDABLE.includes(r.status));
    // Validation runs against the first decidable row (or the first row, to report not_in_review).
    const probe = decidable[0] ?? rows[0]!;
    const check = decide({ status: probe.status, worst_severity: worstHeldSeverity(parseStoredFindings(probe.findings).details) }, body, now, policy);
    if (!check.ok) {
      const kind = check.status === 409 ? 'conflict' : 'invalid';
      throw new DomainError(kind, check.code, check.detail, check.status === 422 ? { errors: [{ loc: check.loc, msg: check.detail }] } : { status: probe.status });
    }

    const arch = probe.arch;
    const record = check.decision_record;
    const coveredFindings = new Set<string>();
    for (const row of decidable) for (const f of parseStoredFindings(row.findings).details) if (f.action !== 'allow') coveredFindings.add(f.cve_id);
    const covered = record.cve_ids.length > 0 ? record.cve_ids : [...coveredFindings].sort();
    const stored: NewDecision = {
      name, version, arch,
      action: record.action,
      justification: record.justification,
      expires_at: record.expires_at,
      target_version: record.target_version,
      cve_ids: JSON.stringify(record.cve_ids),
      covered_cve_ids: JSON.stringify(covered),
      decided_by: actor.username,
      decided_at: record.decided_at,
    };

    const changes: DecideAnswer['distributions'] = [];
    let lastResult: DecideSuccess = check;
    let lastRow: PackageRow = probe;
    let first = true;
    for (const row of decidable) {
      const result = decide({ status: row.status, worst_severity: worstHeldSeverity(parseStoredFindings(row.findings).details) }, body, now, policy);
      if (!result.ok) continue; // cannot happen: same body, a decidable status
      const upsert = first;
      first = false;
      const updated = await this.transitions.apply(row, {
        status: result.new_status,
        sla_deadline: result.new_status === 'upgrade_required' ? result.sla_deadline : null,
        alsoInTransaction: upsert ? (trx) => upsertDecision(trx, stored) : undefined,
      });
      changes.push({ distribution: row.distribution, previous_status: row.status, status: updated.status });
      lastResult = result;
      lastRow = updated;
      notifyDecision(this.notifier, updated, {
        action: record.action,
        justification: record.justification,
        expires_at: record.expires_at,
        target_version: record.target_version,
        decided_by: actor.username,
        previous_status: row.status,
      });
    }
    await this.audit.record({
      action: 'SECURITY_DECISION',
      user: actor.username,
      result: 'SUCCESS',
      package: name,
      version,
      detail: check.audit_detail,
      ip: actor.ip,
    });
    return {
      name,
      package: name,
      version,
      arch,
      action: record.action,
      status: lastRow.status,
      previous_status: probe.status,
      in_index: lastResult.in_index,
      sla_deadline: lastResult.sla_deadline,
      distributions: changes,
      decision: (await decisionOf(this.db, name, version, arch))!,
    };
  }

  /** POST /security/packages/{name}/{version}/quarantine: from any state; idempotent. */
  async quarantine(name: string, version: string, selector: PackageSelector, reason: string | null, actor: Actor): Promise<QuarantineAnswer> {
    const rows = await locatePackages(this.db, name, version, selector);
    const changes: QuarantineAnswer['distributions'] = [];
    for (const row of rows) {
      if (row.status === 'quarantined') {
        changes.push({ distribution: row.distribution, previous_status: row.status, status: row.status });
        continue;
      }
      const reasons = [...(JSON.parse(row.reasons) as string[]), `quarantine: by ${actor.username ?? 'unknown'}${reason ? `: ${reason}` : ''}`];
      await this.transitions.apply(row, { status: 'quarantined', sla_deadline: null, reasons });
      changes.push({ distribution: row.distribution, previous_status: row.status, status: 'quarantined' });
    }
    const changed = changes.some((c) => c.previous_status !== 'quarantined');
    await this.audit.record({
      action: 'QUARANTINE',
      user: actor.username,
      result: 'SUCCESS',
      package: name,
      version,
      detail: `arch=${rows[0]!.arch}; ${changes.map((c) => `${c.distribution}: ${c.previous_status}->quarantined`).join(', ')}${reason ? `; reason=${reason.replace(/[\r\n]+/g, ' ')}` : ''}`,
      ip: actor.ip,
    });
    return { name, package: name, version, arch: rows[0]!.arch, status: 'quarantined', changed, distributions: changes };
  }
}
