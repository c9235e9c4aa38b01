/** Public API of the built-in CVE scanner's pure domain (feeds readers live in ./feeds/). */
export * from './types.js';
export { scoreCvss, severityFromScore, type CvssResult } from './cvss.js';
export { chooseSeverity, severityFromUrgency, DEFAULT_UNKNOWN_SEVERITY } from './severity.js';
export { distroEcosystems, ecosystemForCodename, codenamesForEcosystem, type DistroEcosystem } from './ecosystems.js';
export { normalizeOsvRecord, type OsvNormalizeResult } from './osv.js';
export { DPKG_SCHEME, RPM_SCHEME, defaultVersionScheme, type VersionScheme } from './version-scheme.js';
export { matchPackage, advisoryLookupFromRows, type AdvisoryLookup, type MatchOptions } from './matcher.js';
export { enrich, isEnrichmentFresh, cveIdsOf, ENRICHMENT_MAX_AGE_MS, type EpssLookup, type KevLookup, type EpssEntry } from './enrich.js';
export {
  DEFAULT_CVE_POLICY,
  evaluatePolicy,
  findingAction,
  parseCvePolicy,
  slaDeadline,
  worstSeverity,
  type CvePolicy,
  type PolicyAction,
  type StoredFinding,
  type PolicyEvaluation,
  type CveStatus,
} from './policy.js';
export { compareByRisk, compareBySla, reviewComparator, reviewKeyOf, type ReviewKey } from './review-order.js';
export {
  decide,
  expireDecisions,
  slaWarnings,
  rescanTransition,
  DECIDABLE_STATUSES,
  INDEXED_STATUSES,
  type DecideResult,
  type DecisionRecord,
  type PackageStatus,
} from './state-machine.js';
