/**
 * Rescan: re-match stored packages against the current vulnerability data.
 * - In the index (published, accepted_risk, exception): new findings requiring `block` →
 *   quarantined; requiring `review` for CVEs not covered by the decision record → pending_review;
 *   both leave the index (the pure rule is `rescanTransition`).
 * - pending_review: a finding now requiring `block` → quarantined; no finding holding it any
 *   more (advisory withdrawn or corrected) → published, as the upload would have done.
 * - upgrade_required and quarantined: findings are refreshed, the status is a human's (or
 *   permanent) and stays.
 * Findings, counts, cve_status and the `cve:` reasons are always refreshed.
 */
import type { Logger } from 'pino';
import type { AuditLog } from '../../adapters/audit/audit-log.js';
import type { Db } from '../../adapters/db/index.js';
import { findDistributionPackagesInIndexOrder } from '../../adapters/db/security.table.js';
import { findDistribution, isIndexed } from '../../domain/distributions.js';
import { rescanTransition, slaDeadline, type AdvisoryLookup, type EpssLookup, type KevLookup } from '../../domain/security/index.js';
import { isoUtcSeconds } from '../../domain/time.js';
import { inspectedFromRow } from '../packages/lifecycle.js';
import { normaliseRow, type PackageRow } from '../../adapters/db/packages.table.js';
import type { Actor } from './decisions.js';
import { decisionOf } from './decisions.js';
import { findingsJson, parseStoredFindings } from './findings-store.js';
import { locatePackages, type PackageSelector } from './locate.js';
import { notifyPendingReview, type SecurityNotifier } from './notices.js';
import type { StoredFinding } from '../../domain/security/index.js';
import { packageRefOf, reasonsOf, withSlaDeadlines, worstHeldSeverity, type BuiltinCveScanner } from './scanner.js';
import { PackageTransitions, type StatusChange } from './transitions.js';
import type { VulnDatabase } from './vuln-db.js';

/** An ecosystem's advisories and EPSS/KEV data held in memory for a many-package rescan. */
export interface PreloadedEcosystem {
  lookup: AdvisoryLookup;
  enrichment: { epss: EpssLookup; kev: KevLookup };
}

/** Packages planned and written per transaction in a whole-distribution rescan. */
const RESCAN_CHUNK = 250;

/** A planned rescan of one row: its outcome, and the change to apply (null = nothing changed). */
interface RescanPlan {
  row: PackageRow;
  change: StatusChange | null;
  entersReview: boolean;
  outcome: RescanOutcome;
}

/** Outcome for one package row. */
export interface RescanOutcome {
  distribution: string;
  previous_status: string;
  status: string;
  cve_status: string;
  changed: boolean;
  reason: string | null;
  counts: Record<string, number>;
  findings: StoredFinding[];
}

/** Answer of POST .../rescan. */
export interface RescanAnswer {
  name: string;
  package: string;
  version: string;
  arch: string;
  status: string;
  distributions: RescanOutcome[];
}

/** Summary of a whole-distribution rescan. */
export interface DistributionRescanReport {
  distribution: string;
  packages: number;
  changed: number;
  status_changes: number;
  failed: number;
  seconds: number;
}

export interface RescanDeps {
  db: Db;
  scanner: BuiltinCveScanner;
  vulnDb: VulnDatabase;
  transitions: PackageTransitions;
  audit: AuditLog;
  notifier: SecurityNotifier;
  /** The public base URL for links (the `app_url` setting, else APP_URL). */
  appUrl: () => Promise<string>;
  log: Logger;
}

function withoutCveReasons(reasons: string): string[] {
  return (JSON.parse(reasons) as string[]).filter((r) => !r.startsWith('cve: ') && !r.startsWith('rescan: '));
}

/** Keep the deadline a finding already had; new held findings count from now. */
function carryDeadlines(previous: StoredFinding[], next: StoredFinding[], fresh: StoredFinding[]): StoredFinding[] {
  const before = new Map(previous.map((f) => [f.cve_id, f.sla_deadline ?? null]));
  return next.map((f, i) => ({ ...f, sla_deadline: before.get(f.cve_id) ?? fresh[i]!.sla_deadline ?? null }));
}

export class SecurityRescan {
  constructor(private readonly deps: RescanDeps) {}

  /** POST /security/packages/{name}/{version}/rescan. Null when no vulnerability database exists. */
  async rescan(name: string, version: string, selector: PackageSelector, actor: Actor): Promise<RescanAnswer | null> {
    if (!(await this.deps.vulnDb.everSynced())) return null;
    const rows = await locatePackages(this.deps.db, name, version, selector);
    const outcomes: RescanOutcome[] = [];
    for (const row of rows) {
      const outcome = await this.rescanRow(row);
      if (outcome) outcomes.push(outcome);
    }
    const changes = outcomes.map((o) => `${o.distribution}: ${o.previous_status}->${o.status}`).join(', ');
    const anyStatusChange = outcomes.some((o) => o.status !== o.previous_status);
    await this.deps.audit.record({
      action: 'RESCAN',
      user: actor.username,
      result: anyStatusChange ? 'WARNING' : 'SUCCESS',
      package: name,
      version,
      detail: `arch=${rows[0]!.arch}; ${changes}; findings=${outcomes[0]?.findings.length ?? 0}`,
      ip: actor.ip,
    });
    return { name, package: name, version, arch: rows[0]!.arch, status: outcomes.at(-1)?.status ?? rows[0]!.status, distributions: outcomes };
  }

  /** Rescan every package of a distribution with its ecosystem preloaded in memory. */
  async rescanDistribution(codename: string, actor: Actor | null = null): Promise<DistributionRescanReport | null> {
    const dist = findDistribution(codename);
    if (!dist || !(await this.deps.vulnDb.everSynced())) return null;
    const started = process.hrtime.bigint();
    const { lookup, enrichment } = await this.deps.vulnDb.ecosystemData(dist.osvEcosystem);
    const rows = (await findDistributionPackagesInIndexOrder(this.deps.db, codename)).map(normaliseRow);
    let changed = 0;
    let statusChanges = 0;
    let failed = 0;
    const batch = PackageTransitions.batch();
    const now = new Date();
    try {
      for (let i = 0; i < rows.length; i += RESCAN_CHUNK) {
        // Plan a chunk (reads only), then write its changes in one transaction.
        const plans: RescanPlan[] = [];
        for (const row of rows.slice(i, i + RESCAN_CHUNK)) {
          const plan = await this.plan(row, { lookup, enrichment }, now);
          if (plan?.change) plans.push(plan);
        }
        const results = await this.deps.transitions.applyMany(plans.map((p) => ({ row: p.row, change: p.change! })), batch);
        const appUrl = await this.deps.appUrl();
        results.forEach((result, k) => {
          const plan = plans[k]!;
          if (result instanceof Error) {
            // One package that cannot change state (a pool conflict) must not stop the others.
            failed++;
            this.deps.log.warn({ err: result, package: plan.row.name, version: plan.row.version, distribution: codename }, 'rescan of one package failed');
            return;
          }
          changed++;
          if (result.status !== plan.row.status) statusChanges++;
          if (plan.entersReview) notifyPendingReview(this.deps.notifier, result, 'rescan', appUrl);
        });
      }
    } finally {
      await this.deps.transitions.flush(batch);
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (actor) {
      await this.deps.audit.record({ action: 'RESCAN', user: actor.username, result: 'SUCCESS', detail: `distribution=${codename}; packages=${rows.length}; changed=${changed}; status_changes=${statusChanges}; failed=${failed}`, ip: actor.ip });
    }
    return { distribution: codename, packages: rows.length, changed, status_changes: statusChanges, failed, seconds };
  }

  /** Rescan one stored row and apply what follows; null when the database is empty. */
  async rescanRow(row: PackageRow, preloaded?: PreloadedEcosystem, now = new Date()): Promise<RescanOutcome | null> {
    const plan = await this.plan(row, preloaded, now);
    if (!plan) return null;
    if (!plan.change) return plan.outcome;
    const updated = await this.deps.transitions.apply(row, plan.change);
    if (plan.entersReview) notifyPendingReview(this.deps.notifier, updated, 'rescan', await this.deps.appUrl());
    return { ...plan.outcome, status: updated.status };
  }

  /** What a rescan of `row` finds and changes (reads only); null when the database is empty. */
  private async plan(row: PackageRow, preloaded: PreloadedEcosystem | undefined, now: Date): Promise<RescanPlan | null> {
    const dist = findDistribution(row.distribution);
    if (!dist) return null;
    const components = await this.deps.scanner.storedComponents(row);
    const result = await this.deps.scanner.scan(packageRefOf(inspectedFromRow(row)), dist, preloaded?.lookup, now, preloaded?.enrichment, components);
    if (!result) return null;
    const { evaluation, policy } = result;
    const previous = parseStoredFindings(row.findings).details;

    let status = row.status;
    let reason: string | null = null;
    if (isIndexed(row.status)) {
      const decision = row.status === 'published' ? null : await decisionOf(this.deps.db, row.name, row.version, row.arch);
      const t = rescanTransition({ status: row.status, covered_cve_ids: decision?.covered_cve_ids ?? [] }, evaluation);
      if (t) {
        status = t.new_status;
        reason = t.reason;
      }
    } else if (row.status === 'pending_review') {
      if (evaluation.action === 'block') {
        status = 'quarantined';
        reason = 'rescan: a finding now requires block';
      } else if (evaluation.outcome_status === 'published') {
        status = 'published';
      }
    }

    const entersReview = status === 'pending_review' && row.status !== 'pending_review';
    const fresh = withSlaDeadlines(result.findings, policy, now);
    const findings = status === 'pending_review' && !entersReview ? carryDeadlines(previous, result.findings, fresh) : status === 'pending_review' ? fresh : result.findings;
    const slaDeadlineValue = entersReview
      ? (slaDeadline(worstHeldSeverity(findings), policy, now)?.toISOString() ?? null)
      : status === 'pending_review' || status === 'upgrade_required' ? row.sla_deadline : null;
    const reasons = [...withoutCveReasons(row.reasons), ...reasonsOf(findings), ...(reason ? [reason] : [])];
    const sla = slaDeadlineValue ? isoUtcSeconds(new Date(slaDeadlineValue)) : null;
    const unchanged = status === row.status && findingsJson(findings) === row.findings && evaluation.cve_status === row.cve_status && sla === row.sla_deadline;
    return {
      row,
      entersReview,
      change: unchanged ? null : { status, cve_status: evaluation.cve_status, sla_deadline: sla, reasons, findings },
      outcome: {
        distribution: row.distribution,
        previous_status: row.status,
        status,
        cve_status: evaluation.cve_status,
        changed: !unchanged,
        reason,
        counts: { ...evaluation.counts },
        findings,
      },
    };
  }
}
