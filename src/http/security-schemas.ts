/**
 * Response schemas of the security answers shared by several routes: a CVE finding as stored
 * with its package, the package's security summary and its decision record.
 */
import { Type } from 'typebox';
import { PACKAGE_STATUSES } from '../domain/distributions.js';
import { POLICY_ACTIONS, type StoredFinding } from '../domain/security/policy.js';
import { SEVERITIES } from '../domain/security/types.js';
import type { DecisionView } from '../services/security/decisions.js';
import type { findingView, packageSecurityView } from '../services/security/queries.js';
import { answering, Nullable, SeverityCounts, StringEnum } from './schemas.js';

export const SeverityOut = StringEnum(SEVERITIES);
export const PackageStatusOut = StringEnum(PACKAGE_STATUSES);
export const CveStatusOut = StringEnum(['no_findings', 'allowed', 'warnings', 'pending_review', 'blocked', 'not_scanned'] as const);
export const DecisionActionOut = StringEnum(['accept_risk', 'exception', 'upgrade_required', 'reject'] as const);

const storedFindingFields = {
  cve_id: Type.String(),
  /** The advisory (DSA-…, USN-…, ALSA-…, GHSA-…) that named the CVE. */
  advisory_id: Type.String(),
  severity: SeverityOut,
  severity_source: StringEnum(['cvss_v3', 'cvss_v4', 'distro', 'default'] as const),
  cvss_score: Nullable(Type.Number()),
  cvss_vector: Nullable(Type.String()),
  epss: Nullable(Type.Number()),
  epss_percentile: Nullable(Type.Number()),
  /** Null when the KEV data is older than 24 hours and could not be refreshed. */
  in_kev: Nullable(Type.Boolean()),
  /** The matched package or source name, or the purl of an embedded component. */
  affected_component: Type.String(),
  installed_version: Type.String(),
  fixed_version: Nullable(Type.String()),
  fix_state: StringEnum(['fixed', 'not-fixed', 'wont-fix'] as const),
  summary: Type.String(),
  /** What the CVE policy made of the finding. */
  action: StringEnum(POLICY_ACTIONS),
  /** Held findings of a package in review: when the review is due. */
  sla_deadline: Type.Optional(Nullable(Type.String())),
};

/** A finding as the package row stores it. */
export const StoredFindingOut = answering<StoredFinding>()(Type.Object(storedFindingFields));

/** A finding as the security views show it: with its SLA remaining days and whether it holds the package. */
export const FindingViewOut = answering<ReturnType<typeof findingView>>()(Type.Object({
  ...storedFindingFields,
  sla_remaining_days: Nullable(Type.Integer()),
  held: Type.Boolean(),
}));

export const packageSecurityFields = {
  name: Type.String(),
  package: Type.String(),
  version: Type.String(),
  arch: Type.String(),
  distribution: Type.String(),
  status: PackageStatusOut,
  cve_status: CveStatusOut,
  findings_count: Type.Integer(),
  counts: SeverityCounts,
  worst_severity: Nullable(SeverityOut),
  in_kev: Nullable(Type.Boolean()),
  /** The highest EPSS and CVSS score among the findings. */
  epss: Nullable(Type.Number()),
  cvss_score: Nullable(Type.Number()),
  sla_deadline: Nullable(Type.String()),
  sla_remaining_days: Nullable(Type.Integer()),
  reasons: Type.Array(Type.String()),
  uploaded_at: Type.String(),
  updated_at: Type.String(),
};

/** One package version in one distribution with its security summary. */
export const PackageSecurityOut = answering<ReturnType<typeof packageSecurityView>>()(Type.Object(packageSecurityFields));

/** The decision record of a name, version and arch. */
export const DecisionOut = answering<DecisionView>()(Type.Object({
  name: Type.String(),
  version: Type.String(),
  arch: Type.String(),
  action: DecisionActionOut,
  justification: Type.String(),
  expires_at: Nullable(Type.String()),
  target_version: Nullable(Type.String()),
  /** The CVEs the request named; empty when it named none and so covers every held finding. */
  cve_ids: Type.Array(Type.String()),
  /** The CVEs the decision covers: a rescan sends the package back to review only for others. */
  covered_cve_ids: Type.Array(Type.String()),
  decided_by: Nullable(Type.String()),
  decided_at: Type.String(),
}));

/** How one distribution's copy of the package changed. */
export const StatusChangeOut = Type.Object({ distribution: Type.String(), previous_status: Type.String(), status: Type.String() });
