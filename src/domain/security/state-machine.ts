/**
 * Security review state machine as pure functions: the decide rules, decision
 * expiry, SLA warnings and the rescan transition. The caller applies the result (database row,
 * index re-sign, audit, notifications).
 *
 * Decide checks run in this order, first failure wins: invalid_action (422) → not_in_review (409)
 * → justification_required (422) → expiry_invalid / expiry_required / expiry_not_allowed (422)
 * → target_version_required (422) → invalid_cve_ids (422).
 * `expiry` is ignored for `upgrade_required` (it has an SLA deadline instead); `target_version`
 * is recorded only for `upgrade_required`.
 */
import { INDEXED_STATUSES, type PackageStatus } from '../distributions.js';
import { slaDeadline, type CvePolicy, type PolicyEvaluation } from './policy.js';
import type { Severity } from './types.js';
import { isoUtcSeconds } from '../time.js';

export type { PackageStatus } from '../distributions.js';

/** Canonical decide actions. */
export type DecisionAction = 'accept_risk' | 'exception' | 'upgrade_required' | 'reject';

/** States a decision may be taken from. */
export const DECIDABLE_STATUSES: readonly PackageStatus[] = ['pending_review', 'upgrade_required', 'accepted_risk', 'exception'];
/** States whose packages are in the signed index. */
export { INDEXED_STATUSES };

const ACTION_ALIASES: Readonly<Record<string, DecisionAction>> = {
  accept_risk: 'accept_risk',
  accepted: 'accept_risk',
  approve: 'accept_risk',
  accept: 'accept_risk',
  exception: 'exception',
  upgrade_required: 'upgrade_required',
  reject: 'reject',
  rejected: 'reject',
};

const MAX_EXPIRY_DAYS = 3650;
const MAX_JUSTIFICATION_LENGTH = 10_000;
const MAX_CVE_IDS = 1000;
const DAY_MS = 86_400_000;
/** SLA warnings are sent this many days before the deadline. */
export const SLA_WARNING_DAYS = 7;

/** Error codes of decide. */
export type DecideErrorCode =
  | 'invalid_action'
  | 'not_in_review'
  | 'justification_required'
  | 'expiry_invalid'
  | 'expiry_required'
  | 'expiry_not_allowed'
  | 'target_version_required'
  | 'invalid_cve_ids';

/** A refused decision: HTTP status, code, message and the offending field. */
export interface DecideError {
  ok: false;
  status: 409 | 422;
  code: DecideErrorCode;
  detail: string;
  loc: string[];
}

/** The stored decision record (one per name/version/arch, upserted). */
export interface DecisionRecord {
  action: DecisionAction;
  justification: string;
  expires_at: string | null;
  target_version: string | null;
  cve_ids: string[];
  decided_at: string;
}

/** An accepted decision and its effects. */
export interface DecideSuccess {
  ok: true;
  new_status: PackageStatus;
  /** Whether the package belongs in the signed index after the decision. */
  in_index: boolean;
  decision_record: DecisionRecord;
  /** For `upgrade_required`: now + policy SLA of the worst severity; else null. */
  sla_deadline: string | null;
  /** Audit `SECURITY_DECISION` detail: `action=<a>; justification="<JSON-quoted text>"; expiry=<ISO|never>`. */
  audit_detail: string;
}

export type DecideResult = DecideSuccess | DecideError;


function fail(status: 409 | 422, code: DecideErrorCode, detail: string, loc: string[]): DecideError {
  return { ok: false, status, code, detail, loc };
}

function firstDefined(body: Record<string, unknown>, keys: readonly string[]): { key: string; value: unknown } | null {
  for (const key of keys) {
    if (body[key] !== undefined && body[key] !== null) return { key, value: body[key] };
  }
  return null;
}

/** Parse an expiry in days: undefined when absent, null when invalid. */
function parseExpiryDays(value: unknown): number | undefined | null {
  if (value === undefined || value === null || value === '') return undefined;
  let n: number;
  if (typeof value === 'number') n = value;
  else if (typeof value === 'string' && /^\s*\d+\s*$/.test(value)) n = Number(value);
  else return null;
  return Number.isInteger(n) && n >= 1 && n <= MAX_EXPIRY_DAYS ? n : null;
}

function parseCveIds(value: unknown): string[] | null {
  if (value === undefined || value === null) return [];
  const list = typeof value === 'string' ? value.split(',') : value;
  if (!Array.isArray(list) || list.length > MAX_CVE_IDS) return null;
  const out: string[] = [];
  for (const item of list) {
    if (typeof item !== 'string') return null;
    const id = item.trim();
    if (id.length > 100) return null;
    if (id && !out.includes(id)) out.push(id);
  }
  return out;
}

/**
 * Apply a decide request (raw body with its aliases) to a package in `current.status`.
 * `current.worst_severity` sets the SLA deadline of `upgrade_required`.
 */
export function decide(
  current: { status: string; worst_severity?: Severity | null },
  request: unknown,
  now: Date,
  policy: CvePolicy,
): DecideResult {
  const body = (typeof request === 'object' && request !== null && !Array.isArray(request) ? request : {}) as Record<string, unknown>;

  const rawAction = firstDefined(body, ['action', 'decision']);
  const action = typeof rawAction?.value === 'string' ? ACTION_ALIASES[rawAction.value.trim().toLowerCase()] : undefined;
  if (!action) {
    return fail(422, 'invalid_action', 'action must be one of accept_risk, exception, upgrade_required, reject', ['body', rawAction?.key ?? 'action']);
  }
  if (!(DECIDABLE_STATUSES as readonly string[]).includes(current.status)) {
    return fail(409, 'not_in_review', `package is ${current.status}, not awaiting a security decision`, ['status']);
  }

  const rawText = firstDefined(body, ['justification', 'comment']);
  const justification = typeof rawText?.value === 'string' ? rawText.value.trim() : '';
  if (justification === '' || justification.length > MAX_JUSTIFICATION_LENGTH) {
    return fail(422, 'justification_required', 'a non-blank justification is required', ['body', rawText?.key ?? 'justification']);
  }

  const rawExpiry = firstDefined(body, ['expires_in_days', 'expires_days', 'expiry_days', 'expiry']);
  const expiryDays = parseExpiryDays(rawExpiry?.value);
  const expiryLoc = ['body', rawExpiry?.key ?? 'expires_in_days'];
  if (expiryDays === null) return fail(422, 'expiry_invalid', `expiry must be a whole number of days from 1 to ${MAX_EXPIRY_DAYS}`, expiryLoc);
  if (action === 'exception' && expiryDays === undefined) return fail(422, 'expiry_required', 'an exception needs an expiry in days', expiryLoc);
  if (action === 'reject' && expiryDays !== undefined) return fail(422, 'expiry_not_allowed', 'a rejection never expires', expiryLoc);

  const rawTarget = body.target_version;
  const targetVersion = typeof rawTarget === 'string' ? rawTarget.trim() : '';
  if (action === 'upgrade_required' && targetVersion === '') {
    return fail(422, 'target_version_required', 'upgrade_required needs a target_version', ['body', 'target_version']);
  }

  const cveIds = parseCveIds(body.cve_ids);
  if (!cveIds) return fail(422, 'invalid_cve_ids', 'cve_ids must be a list of CVE ids', ['body', 'cve_ids']);

  const expiresAt =
    expiryDays !== undefined && (action === 'accept_risk' || action === 'exception') ? isoUtcSeconds(new Date(now.getTime() + expiryDays * DAY_MS)) : null;
  const effects: Record<DecisionAction, { status: PackageStatus; inIndex: boolean }> = {
    accept_risk: { status: 'accepted_risk', inIndex: true },
    exception: { status: 'exception', inIndex: true },
    upgrade_required: { status: 'upgrade_required', inIndex: false },
    reject: { status: 'quarantined', inIndex: false },
  };
  const deadline = action === 'upgrade_required' ? slaDeadline(current.worst_severity ?? null, policy, now) : null;
  // The justification is free text: quoted as a JSON string, so neither a newline nor a
  // `; expiry=never` typed into it can split the entry or forge a field.
  const auditText = JSON.stringify(justification);
  return {
    ok: true,
    new_status: effects[action].status,
    in_index: effects[action].inIndex,
    decision_record: {
      action,
      justification,
      expires_at: expiresAt,
      target_version: action === 'upgrade_required' ? targetVersion : null,
      cve_ids: cveIds,
      decided_at: isoUtcSeconds(now),
    },
    sla_deadline: deadline ? isoUtcSeconds(deadline) : null,
    audit_detail: `action=${action}; justification=${auditText}; expiry=${expiresAt ?? 'never'}`,
  };
}

function toTime(d: string | Date | null | undefined): number | null {
  if (d === null || d === undefined) return null;
  const t = d instanceof Date ? d.getTime() : Date.parse(d);
  return Number.isNaN(t) ? null : t;
}

/** Accepted risks and exceptions whose expiry has passed: they return to `pending_review`. */
export function expireDecisions<T extends { status: string; expires_at: string | Date | null }>(
  now: Date,
  rows: readonly T[],
): Array<{ row: T; new_status: 'pending_review'; in_index: false }> {
  const out: Array<{ row: T; new_status: 'pending_review'; in_index: false }> = [];
  for (const row of rows) {
    if (row.status !== 'accepted_risk' && row.status !== 'exception') continue;
    const t = toTime(row.expires_at);
    if (t !== null && t <= now.getTime()) out.push({ row, new_status: 'pending_review', in_index: false });
  }
  return out;
}

/** Packages awaiting review (or an upgrade) whose SLA deadline is within 7 days or past. */
export function slaWarnings<T extends { status: string; sla_deadline: string | Date | null }>(
  now: Date,
  rows: readonly T[],
): Array<{ row: T; days_remaining: number; overdue: boolean }> {
  const out: Array<{ row: T; days_remaining: number; overdue: boolean }> = [];
  for (const row of rows) {
    if (row.status !== 'pending_review' && row.status !== 'upgrade_required') continue;
    const t = toTime(row.sla_deadline);
    if (t === null) continue;
    const remainingMs = t - now.getTime();
    if (remainingMs > SLA_WARNING_DAYS * DAY_MS) continue;
    out.push({ row, days_remaining: Math.ceil(remainingMs / DAY_MS), overdue: remainingMs < 0 });
  }
  return out;
}

/** A status change caused by a rescan. */
export interface RescanTransition {
  new_status: 'quarantined' | 'pending_review';
  in_index: false;
  /** CVEs that caused it. */
  cve_ids: string[];
  reason: string;
}

/**
 * Rescan rule: a package in the index whose new findings require `block` →
 * `quarantined`; whose findings require `review` for CVEs not covered by its decision record →
 * `pending_review`. `covered_cve_ids` is the decision record's `cve_ids`, or — when the record
 * named none — the CVE ids of the findings the decision was taken on. Null = no change.
 */
export function rescanTransition(
  current: { status: string; covered_cve_ids?: readonly string[] },
  evaluation: Pick<PolicyEvaluation, 'finding_actions'>,
): RescanTransition | null {
  if (!(INDEXED_STATUSES as readonly string[]).includes(current.status)) return null;
  const blocking = evaluation.finding_actions.filter((f) => f.action === 'block').map((f) => f.cve_id);
  if (blocking.length > 0) {
    return { new_status: 'quarantined', in_index: false, cve_ids: blocking, reason: `rescan: ${blocking.join(', ')} require block` };
  }
  const covered = new Set(current.status === 'published' ? [] : (current.covered_cve_ids ?? []));
  const uncovered = evaluation.finding_actions.filter((f) => f.action === 'review' && !covered.has(f.cve_id)).map((f) => f.cve_id);
  if (uncovered.length > 0) {
    return { new_status: 'pending_review', in_index: false, cve_ids: uncovered, reason: `rescan: ${uncovered.join(', ')} require review` };
  }
  return null;
}
