/**
 * Shared types of the built-in CVE scanner: advisories (flattened OSV), findings and the
 * vocabulary used by the policy and the review state machine.
 */

/** Finding severity, worst first. CVSS "none" (0.0) is reported as `negligible`. */
export type Severity = 'critical' | 'high' | 'medium' | 'low' | 'negligible';

/** All severities, worst first: index 0 is the worst. */
export const SEVERITIES: readonly Severity[] = ['critical', 'high', 'medium', 'low', 'negligible'];

/** Rank of a severity: higher is worse (critical = 4, negligible = 0). */
export function severityRank(s: Severity): number {
  return SEVERITIES.length - 1 - SEVERITIES.indexOf(s);
}

/** The worse of two severities. */
export function worseSeverity(a: Severity, b: Severity): Severity {
  return severityRank(a) >= severityRank(b) ? a : b;
}

/** Package format a distribution publishes. */
export type PackageFormat = 'deb' | 'rpm';

/** `fixed` (with `fixed_version`), `not-fixed` (no fix yet), `wont-fix` (the distribution will not fix it). */
export type FixState = 'fixed' | 'not-fixed' | 'wont-fix';

/** Where a finding's severity came from (kept so that operators can tell a guess from a score). */
export type SeveritySource = 'cvss_v3' | 'cvss_v4' | 'distro' | 'default';

/**
 * One affected interval of an OSV `ECOSYSTEM` range. OSV events are paired in listed order into
 * intervals: `introduced` opens one, the next `fixed`/`last_affected`/`limit` closes it.
 * `introduced: "0"` means "from the first version".
 */
export interface AdvisoryRange {
  introduced?: string;
  fixed?: string;
  last_affected?: string;
  limit?: string;
}

/** One row of the advisory table: one OSV record × one affected package (flattened). */
export interface AdvisoryRow {
  /** OSV id: DSA-…, DLA-…, USN-…, UBUNTU-CVE-…, ALSA-…, RLSA-…, SUSE-SU-…, CVE-… */
  id: string;
  /** CVE ids named by the record (its id, aliases, related, upstream), deduplicated, sorted. */
  cve_ids: string[];
  /** OSV ecosystem string exactly as in the record, e.g. `Debian:12`, `Rocky Linux:9`. */
  ecosystem: string;
  /** Package name as named by the advisory (source name for Debian/Ubuntu/SUSE, binary for EL). */
  package_name: string;
  purl: string | null;
  ranges: AdvisoryRange[];
  /** Explicit affected versions (OSV `versions[]`). */
  versions: string[];
  /** Severity computed from the CVSS vector, else mapped from the distro urgency; null = unknown. */
  severity: Severity | null;
  severity_source: SeveritySource | null;
  cvss_vector: string | null;
  cvss_score: number | null;
  /** Distro urgency/priority/severity text as published (Debian urgency, Ubuntu priority, …). */
  urgency: string | null;
  /** True when the distro marked this package "ignored" / "will not fix" (see osv.ts). */
  wont_fix: boolean;
  summary: string;
  modified: string | null;
  published: string | null;
}

/** An installed/uploaded package to match against advisories. */
export interface PackageRef {
  format: PackageFormat;
  name: string;
  /** deb: `[epoch:]upstream[-revision]`; rpm: `[epoch:]version-release`. */
  version: string;
  arch: string;
  /** deb: the `Source:` name (defaults to `name`). */
  source_name?: string | null;
  /** deb: the version in `Source: name (version)` when given. */
  source_version?: string | null;
  /** rpm: the EPOCH tag, used when `version` does not start with `epoch:`. */
  epoch?: number | string | null;
  /** rpm: the SOURCERPM tag, e.g. `openssl-3.0.7-24.el9.src.rpm`. */
  sourcerpm?: string | null;
}

/** One CVE found in a package (or in a component it embeds), as stored with the package and answered. */
export interface Finding {
  cve_id: string;
  advisory_id: string;
  severity: Severity;
  severity_source: SeveritySource;
  cvss_score: number | null;
  cvss_vector: string | null;
  epss: number | null;
  epss_percentile: number | null;
  /** null = unknown (KEV data older than 24 h and no refresh possible). */
  in_kev: boolean | null;
  /** The matched package or source name. */
  affected_component: string;
  installed_version: string;
  fixed_version: string | null;
  fix_state: FixState;
  summary: string;
}
