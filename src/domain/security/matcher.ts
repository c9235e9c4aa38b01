/**
 * Match one package against the advisories of its distribution's ecosystem.
 *
 * deb: advisories (Debian, Ubuntu) name SOURCE packages, so the package is looked up by its
 *   `Source:` name (default: its own name) and compared by its source version: the version given
 *   in `Source: name (version)` when present, else the binary version without a binNMU suffix
 *   (`1.2-3+b1` → `1.2-3`; binNMUs rebuild the same source and are never named by advisories).
 * rpm: AlmaLinux/Rocky advisories name binary packages, SUSE ones source packages: both the
 *   binary name (with the binary EVR) and the source RPM name parsed from SOURCERPM are looked
 *   up. A source RPM file name carries no epoch, and rpm would read a missing epoch as 0, which
 *   makes every `1:`-epoch fix look newer than the installed package. So the source EVR is never
 *   given an assumed epoch: it takes the binary package's epoch (subpackages share their source
 *   package's epoch).
 * Ranges follow OSV: `introduced` (`"0"` = from the start) ≤ v, v < `fixed`, v ≤ `last_affected`,
 *   v < `limit`; `versions[]` lists match exactly (scheme equality, so `0:1.0` = `1.0` in rpm).
 * Fix state: a containing interval with no end → `not-fixed`; all containing intervals end at a
 *   `fixed` → `fixed` (with the highest of those versions); `last_affected`/`limit` only, or a
 *   `versions[]` match alone → `not-fixed`; a not-fixed match on an advisory marked "will not fix"
 *   → `wont-fix`.
 * One finding per CVE: when several advisories report the same CVE, the worst severity is kept
 *   (a published severity beats the `default` guess of an advisory that has none), and a `fixed`
 *   state (highest fixed version) is preferred over `wont-fix` over `not-fixed`.
 * Advisory versions the scheme cannot parse are skipped (feed data is untrusted).
 * `installed_version` is the package's own version; `affected_component` the name the advisory
 * used (source or binary); EPSS/KEV are left null here (see enrich.ts).
 */
import { DEFAULT_UNKNOWN_SEVERITY } from './severity.js';
import { severityRank, type AdvisoryRange, type AdvisoryRow, type Finding, type FixState, type PackageRef } from './types.js';
import { defaultVersionScheme, type VersionScheme } from './version-scheme.js';

/** Where the matcher reads advisories: every row of `ecosystem` naming `name`. */
export interface AdvisoryLookup {
  byPackage(ecosystem: string, name: string): readonly AdvisoryRow[];
}

/** Options of `matchPackage`. */
export interface MatchOptions {
  /** Version order; defaults to dpkg for deb and rpm EVR for rpm. */
  scheme?: VersionScheme;
}

/** A name/version pair under which a package is looked up. */
interface Identity {
  name: string;
  version: string;
}

/** Strip a Debian binNMU suffix: `1.2-3+b1` → `1.2-3`. */
export function stripBinNmu(version: string): string {
  return version.replace(/\+b\d+$/, '');
}

/** Split a SOURCERPM file name (`openssl-3.0.7-24.el9.src.rpm`) into name, version, release. */
export function parseSourceRpm(sourcerpm: string): { name: string; version: string; release: string } | null {
  const base = sourcerpm.trim().replace(/\.(?:no)?src\.rpm$/, '');
  const relDash = base.lastIndexOf('-');
  if (relDash <= 0) return null;
  const verDash = base.lastIndexOf('-', relDash - 1);
  if (verDash <= 0) return null;
  const name = base.slice(0, verDash);
  const version = base.slice(verDash + 1, relDash);
  const release = base.slice(relDash + 1);
  if (!name || !version || !release) return null;
  return { name, version, release };
}

/** The identities a package is matched under (see the module comment). */
export function matchIdentities(pkg: PackageRef): Identity[] {
  if (pkg.format === 'deb') {
    const name = pkg.source_name?.trim() || pkg.name;
    const version = pkg.source_version?.trim() || stripBinNmu(pkg.version);
    return [{ name, version }];
  }
  const given = /^(\d+):/.exec(pkg.version)?.[1];
  const epoch = given ?? (pkg.epoch !== null && pkg.epoch !== undefined && pkg.epoch !== '' ? String(pkg.epoch) : undefined);
  const binaryVersion = given === undefined && epoch !== undefined ? `${epoch}:${pkg.version}` : pkg.version;
  const out: Identity[] = [{ name: pkg.name, version: binaryVersion }];
  const source = pkg.sourcerpm ? parseSourceRpm(pkg.sourcerpm) : null;
  if (source) {
    const version = `${epoch !== undefined ? `${epoch}:` : ''}${source.version}-${source.release}`;
    if (source.name !== pkg.name || version !== binaryVersion) out.push({ name: source.name, version });
  }
  return out;
}

/** Comparison that reports malformed versions as null instead of throwing. */
function safeCompare(scheme: VersionScheme, a: string, b: string): number | null {
  try {
    const c = scheme.compare(a, b);
    return Number.isFinite(c) ? c : null;
  } catch {
    return null;
  }
}

function inInterval(scheme: VersionScheme, version: string, r: AdvisoryRange): boolean {
  if (r.introduced !== undefined && r.introduced !== '0') {
    const c = safeCompare(scheme, version, r.introduced);
    if (c === null || c < 0) return false;
  }
  const checks: Array<[string | undefined, (c: number) => boolean]> = [
    [r.fixed, (c) => c < 0],
    [r.last_affected, (c) => c <= 0],
    [r.limit, (c) => c < 0],
  ];
  for (const [bound, ok] of checks) {
    if (bound === undefined) continue;
    const c = safeCompare(scheme, version, bound);
    if (c === null || !ok(c)) return false;
  }
  return true;
}

/**
 * The finding an advisory row makes for one CVE it names, before EPSS/KEV enrichment: severity
 * from the advisory (its own score, else the distro's, else the default), fix state from `verdict`.
 */
export function findingFromAdvisory(
  row: AdvisoryRow,
  cve: string,
  verdict: { fix_state: FixState; fixed_version: string | null },
  component: string,
  installedVersion: string,
): Finding {
  return {
    cve_id: cve,
    advisory_id: row.id,
    severity: row.severity ?? DEFAULT_UNKNOWN_SEVERITY,
    severity_source: row.severity ? (row.severity_source ?? 'distro') : 'default',
    cvss_score: row.cvss_score,
    cvss_vector: row.cvss_vector,
    epss: null,
    epss_percentile: null,
    in_kev: null,
    affected_component: component,
    installed_version: installedVersion,
    fixed_version: verdict.fixed_version,
    fix_state: verdict.fix_state,
    summary: row.summary,
  };
}

/** How one advisory row applies to a version: null when it does not. */
export function evaluateAdvisory(
  scheme: VersionScheme,
  version: string,
  row: AdvisoryRow,
): { fix_state: FixState; fixed_version: string | null } | null {
  const containing = row.ranges.filter((r) => inInterval(scheme, version, r));
  const listed = row.versions.some((v) => v === version || safeCompare(scheme, version, v) === 0);
  if (containing.length === 0 && !listed) return null;

  let fixedVersion: string | null = null;
  let allFixed = containing.length > 0;
  for (const r of containing) {
    if (r.fixed === undefined) {
      allFixed = false;
      continue;
    }
    if (fixedVersion === null || (safeCompare(scheme, r.fixed, fixedVersion) ?? 0) > 0) fixedVersion = r.fixed;
  }
  if (allFixed && fixedVersion !== null) return { fix_state: 'fixed', fixed_version: fixedVersion };
  return { fix_state: row.wont_fix ? 'wont-fix' : 'not-fixed', fixed_version: null };
}

const FIX_PREFERENCE: Readonly<Record<FixState, number>> = { fixed: 2, 'wont-fix': 1, 'not-fixed': 0 };

/** Whether b's severity should replace a's: real data beats the default guess, then worse wins. */
function betterSeverity(a: Finding, b: Finding): boolean {
  const aGuess = a.severity_source === 'default';
  const bGuess = b.severity_source === 'default';
  if (aGuess !== bGuess) return aGuess;
  const byRank = severityRank(b.severity) - severityRank(a.severity);
  if (byRank !== 0) return byRank > 0;
  return a.cvss_score === null && b.cvss_score !== null;
}

/** Merge two findings of the same CVE (see the module comment). */
function mergeFindings(scheme: VersionScheme, a: Finding, b: Finding): Finding {
  const severityFrom = betterSeverity(a, b) ? b : a;
  let fixFrom = a;
  if (FIX_PREFERENCE[b.fix_state] > FIX_PREFERENCE[a.fix_state]) fixFrom = b;
  else if (a.fix_state === 'fixed' && b.fix_state === 'fixed' && a.fixed_version && b.fixed_version) {
    if ((safeCompare(scheme, b.fixed_version, a.fixed_version) ?? 0) > 0) fixFrom = b;
  }
  return {
    ...fixFrom,
    severity: severityFrom.severity,
    severity_source: severityFrom.severity_source,
    cvss_score: severityFrom.cvss_score ?? fixFrom.cvss_score,
    cvss_vector: severityFrom.cvss_vector ?? fixFrom.cvss_vector,
  };
}

/** All findings for one package in one ecosystem, worst severity first. */
export function matchPackage(pkg: PackageRef, ecosystem: string, advisories: AdvisoryLookup, options: MatchOptions = {}): Finding[] {
  const scheme = options.scheme ?? defaultVersionScheme(pkg.format);
  const byCve = new Map<string, Finding>();
  for (const identity of matchIdentities(pkg)) {
    for (const row of advisories.byPackage(ecosystem, identity.name)) {
      if (row.ecosystem !== ecosystem || row.package_name !== identity.name) continue;
      const verdict = evaluateAdvisory(scheme, identity.version, row);
      if (!verdict) continue;
      const cves = row.cve_ids.length > 0 ? row.cve_ids : [row.id];
      for (const cve of cves) {
        const finding = findingFromAdvisory(row, cve, verdict, row.package_name, pkg.version);
        const existing = byCve.get(cve);
        byCve.set(cve, existing ? mergeFindings(scheme, existing, finding) : finding);
      }
    }
  }
  return [...byCve.values()].sort(
    (a, b) => severityRank(b.severity) - severityRank(a.severity) || (a.cve_id < b.cve_id ? -1 : a.cve_id > b.cve_id ? 1 : 0),
  );
}

/** An in-memory AdvisoryLookup over rows (tests, small feeds, or a per-scan preload). */
export function advisoryLookupFromRows(rows: Iterable<AdvisoryRow>): AdvisoryLookup {
  const index = new Map<string, AdvisoryRow[]>();
  for (const row of rows) {
    const key = `${row.ecosystem}\u0000${row.package_name}`;
    const list = index.get(key);
    if (list) list.push(row);
    else index.set(key, [row]);
  }
  return { byPackage: (ecosystem, name) => index.get(`${ecosystem}\u0000${name}`) ?? [] };
}
