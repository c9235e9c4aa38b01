/**
 * What the review decided about a finding, in CycloneDX terms (1.5 `analysis`). A decision record
 * applies to the CVEs it covers. The mapping:
 *  - accept_risk, exception → `exploitable` + `will_not_fix`: the package is affected and the
 *    risk was accepted (an exception until its expiry); CycloneDX has no "accepted" state, and
 *    `not_affected` would claim an analysis nobody made.
 *  - upgrade_required → `exploitable` + `update`; reject → `exploitable` (no response: the
 *    package is kept out of the index).
 *  - no decision, finding held for review (pending_review, upgrade_required) → `in_triage`.
 *  - no decision, distribution marked it won't-fix → `exploitable` + `can_not_fix`.
 *  - quarantined → `exploitable`.
 *  - otherwise (allowed or warned by policy, never reviewed): no analysis — unknown, not a claim.
 */
import type { SbomDecision, SbomPackage, SbomVulnerability } from './model.js';

export interface Analysis {
  state: 'exploitable' | 'in_triage' | 'not_affected' | 'resolved' | 'false_positive';
  response?: Array<'can_not_fix' | 'will_not_fix' | 'update' | 'rollback' | 'workaround_available'>;
  detail?: string;
  firstIssued?: string;
  lastUpdated?: string;
}

const HELD = new Set(['review', 'block']);

export function decisionFor(pkg: Pick<SbomPackage, 'decision'>, cveId: string): SbomDecision | null {
  const d = pkg.decision;
  return d && d.coveredCveIds.includes(cveId) ? d : null;
}

export function analysisOf(pkg: Pick<SbomPackage, 'decision' | 'status'>, v: SbomVulnerability): Analysis | null {
  const decision = decisionFor(pkg, v.id);
  if (decision) {
    const dated = { firstIssued: decision.decidedAt, lastUpdated: decision.decidedAt };
    const until = decision.expiresAt ? ` (until ${decision.expiresAt})` : '';
    switch (decision.action) {
      case 'accept_risk':
        return { state: 'exploitable', response: ['will_not_fix'], detail: `Risk accepted${until}: ${decision.justification}`, ...dated };
      case 'exception':
        return { state: 'exploitable', response: ['will_not_fix'], detail: `Exception${until}: ${decision.justification}`, ...dated };
      case 'upgrade_required':
        return { state: 'exploitable', response: ['update'], detail: `Upgrade required${decision.targetVersion ? ` to ${decision.targetVersion}` : ''}: ${decision.justification}`, ...dated };
      default:
        return { state: 'exploitable', detail: `Rejected: ${decision.justification}`, ...dated };
    }
  }
  if (pkg.status === 'quarantined') return { state: 'exploitable', detail: 'The package is quarantined' };
  if ((pkg.status === 'pending_review' || pkg.status === 'upgrade_required') && HELD.has(v.policyAction ?? '')) {
    return { state: 'in_triage', detail: 'Held for security review' };
  }
  if (v.fixState === 'wont-fix') return { state: 'exploitable', response: ['can_not_fix'], detail: 'The distribution will not fix it' };
  return null;
}

/** A one-line summary for formats without a structured analysis (SPDX comments, SARIF). */
export function analysisText(a: Analysis | null): string {
  if (!a) return 'not analysed';
  return [a.state, ...(a.response ?? []), a.detail].filter(Boolean).join('; ');
}
