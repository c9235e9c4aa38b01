/**
 * CVE policy: each severity maps to an action; the strongest action among all findings decides
 * the upload outcome; a KEV-listed CVE is treated at least as `kev_action`.
 * Negligible findings are always `allow`. A finding whose KEV state is unknown (`in_kev: null`)
 * gets no KEV escalation (the flag is left out, not guessed).
 */
import { DomainError } from '../errors.js';
import { worseSeverity, type Finding, type Severity } from './types.js';

/** Policy action, weakest to strongest: allow < warn < review < block. */
export type PolicyAction = 'block' | 'review' | 'warn' | 'allow';

/** A finding as a package keeps it: with what the policy made of it and, when held, its review deadline. */
export type StoredFinding = Finding & { action: PolicyAction; sla_deadline?: string | null };

/** Severities a policy configures (negligible is always `allow`). */
export type PolicySeverity = Exclude<Severity, 'negligible'>;
export const POLICY_SEVERITIES: readonly PolicySeverity[] = ['critical', 'high', 'medium', 'low'];
export const POLICY_ACTIONS: readonly PolicyAction[] = ['allow', 'warn', 'review', 'block'];

/** The stored CVE policy body. */
export interface CvePolicy {
  critical: PolicyAction;
  high: PolicyAction;
  medium: PolicyAction;
  low: PolicyAction;
  sla_days: Record<PolicySeverity, number>;
}

/** The policy until an admin changes it: critical and high held for review, medium a warning, low allowed. */
export const DEFAULT_CVE_POLICY: CvePolicy = {
  critical: 'review',
  high: 'review',
  medium: 'warn',
  low: 'allow',
  sla_days: { critical: 7, high: 30, medium: 90, low: 180 },
};

/** Upload status for an action. */
export type PolicyOutcomeStatus = 'quarantined' | 'pending_review' | 'published';
/** `cve_status` / pipeline `cve_scan` value. */
export type CveStatus = 'no_findings' | 'allowed' | 'warnings' | 'pending_review' | 'blocked';
/** A stored package's `cve_status`: the policy's verdict, or `not_scanned` when the scan step did not run. */
export type StoredCveStatus = CveStatus | 'not_scanned';

/** Result of applying a policy to a package's findings. */
export interface PolicyEvaluation {
  action: PolicyAction;
  outcome_status: PolicyOutcomeStatus;
  cve_status: CveStatus;
  reasons: string[];
  counts: Record<Severity, number>;
  worst_severity: Severity | null;
  /** Per finding, the action it requires (same order as the input). */
  finding_actions: Array<{ cve_id: string; action: PolicyAction }>;
}

/** Options of `evaluatePolicy`. */
export interface PolicyOptions {
  /** Setting `kev_action` (default `review`). */
  kevAction?: 'review' | 'block';
}

/** Strength of an action (higher is stronger). */
export function actionRank(a: PolicyAction): number {
  return POLICY_ACTIONS.indexOf(a);
}

/** The stronger of two actions. */
export function strongerAction(a: PolicyAction, b: PolicyAction): PolicyAction {
  return actionRank(a) >= actionRank(b) ? a : b;
}

/** The action one finding requires under a policy. */
export function findingAction(f: Pick<Finding, 'severity' | 'in_kev'>, policy: CvePolicy, options: PolicyOptions = {}): PolicyAction {
  let action: PolicyAction = f.severity === 'negligible' ? 'allow' : policy[f.severity];
  if (f.in_kev === true) action = strongerAction(action, options.kevAction ?? 'review');
  return action;
}

const OUTCOME: Readonly<Record<PolicyAction, PolicyOutcomeStatus>> = {
  block: 'quarantined',
  review: 'pending_review',
  warn: 'published',
  allow: 'published',
};

const CVE_STATUS: Readonly<Record<PolicyAction, CveStatus>> = {
  block: 'blocked',
  review: 'pending_review',
  warn: 'warnings',
  allow: 'allowed',
};

/** Apply a policy to findings: strongest action wins. */
export function evaluatePolicy(findings: readonly Finding[], policy: CvePolicy, options: PolicyOptions = {}): PolicyEvaluation {
  const counts: Record<Severity, number> = { critical: 0, high: 0, medium: 0, low: 0, negligible: 0 };
  let action: PolicyAction = 'allow';
  let worst: Severity | null = null;
  const reasons: string[] = [];
  const findingActions: PolicyEvaluation['finding_actions'] = [];
  for (const f of findings) {
    counts[f.severity]++;
    worst = worst === null ? f.severity : worseSeverity(worst, f.severity);
    const a = findingAction(f, policy, options);
    findingActions.push({ cve_id: f.cve_id, action: a });
    action = strongerAction(action, a);
    if (a === 'allow') continue;
    const kev = f.in_kev === true ? ', listed in KEV' : '';
    reasons.push(`${f.cve_id} (${f.severity}${kev}) in ${f.affected_component}: ${a}`);
  }
  return {
    action,
    outcome_status: OUTCOME[action],
    cve_status: findings.length === 0 ? 'no_findings' : CVE_STATUS[action],
    reasons,
    counts,
    worst_severity: worst,
    finding_actions: findingActions,
  };
}

/** Worst severity among findings, null when there are none. */
export function worstSeverity(findings: readonly Pick<Finding, 'severity'>[]): Severity | null {
  let worst: Severity | null = null;
  for (const f of findings) worst = worst === null ? f.severity : worseSeverity(worst, f.severity);
  return worst;
}

/** SLA deadline for a worst severity: `from` + policy days; null for negligible/no findings. */
export function slaDeadline(worst: Severity | null, policy: CvePolicy, from: Date): Date | null {
  if (worst === null || worst === 'negligible') return null;
  return new Date(from.getTime() + policy.sla_days[worst] * 86_400_000);
}

/** Maximum SLA accepted in a policy (ten years). */
const MAX_SLA_DAYS = 3650;

/**
 * Validate a (partial) policy body such as a PATCH /security/policy request and merge it onto
 * `base`. Throws DomainError('invalid', 'invalid_policy') with `extra.errors` [{loc, msg}].
 */
export function parseCvePolicy(input: unknown, base: CvePolicy = DEFAULT_CVE_POLICY): CvePolicy {
  const errors: Array<{ loc: string[]; msg: string }> = [];
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new DomainError('invalid', 'invalid_policy', 'policy must be an object', { errors: [{ loc: ['body'], msg: 'must be an object' }] });
  }
  const body = input as Record<string, unknown>;
  const out: CvePolicy = { ...base, sla_days: { ...base.sla_days } };
  for (const key of Object.keys(body)) {
    if (key === 'sla_days') continue;
    if (!(POLICY_SEVERITIES as readonly string[]).includes(key)) {
      errors.push({ loc: ['body', key], msg: 'unknown policy key' });
      continue;
    }
    const value = body[key];
    if (typeof value !== 'string' || !(POLICY_ACTIONS as readonly string[]).includes(value)) {
      errors.push({ loc: ['body', key], msg: `must be one of ${POLICY_ACTIONS.join(', ')}` });
      continue;
    }
    out[key as PolicySeverity] = value as PolicyAction;
  }
  if (body.sla_days !== undefined) {
    const sla = body.sla_days;
    if (typeof sla !== 'object' || sla === null || Array.isArray(sla)) {
      errors.push({ loc: ['body', 'sla_days'], msg: 'must be an object' });
    } else {
      for (const [key, value] of Object.entries(sla as Record<string, unknown>)) {
        if (!(POLICY_SEVERITIES as readonly string[]).includes(key)) {
          errors.push({ loc: ['body', 'sla_days', key], msg: 'unknown severity' });
        } else if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_SLA_DAYS) {
          errors.push({ loc: ['body', 'sla_days', key], msg: `must be an integer from 1 to ${MAX_SLA_DAYS}` });
        } else {
          out.sla_days[key as PolicySeverity] = value;
        }
      }
    }
  }
  if (errors.length > 0) throw new DomainError('invalid', 'invalid_policy', 'invalid CVE policy', { errors });
  return out;
}
