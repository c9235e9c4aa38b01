/**
 * The built-in CVE scanner: match a package against the advisories of its distribution's OSV
 * ecosystem, enrich with EPSS/KEV (KEV data older than 24 h counts as unknown), apply the CVE
 * policy. `assess` is what the upload pipeline calls; `scan` is shared with rescans.
 */
import type { Metrics } from '../../adapters/metrics/metrics.js';
import type { Distribution } from '../../domain/distributions.js';
import type { InspectedPackage } from '../../domain/package.js';
import {
  advisoryLookupFromRows,
  enrich,
  evaluatePolicy,
  slaDeadline,
  matchPackage,
  type AdvisoryLookup,
  type CvePolicy,
  type EpssLookup,
  type KevLookup,
  type PackageRef,
  type StoredFinding,
  type PolicyEvaluation,
  type Severity,
} from '../../domain/security/index.js';
import { componentLookup, COMPONENT_OSV_ECOSYSTEMS, matchComponents, type ComponentRef } from '../../domain/security/components.js';
import { matchIdentities } from '../../domain/security/matcher.js';
import { severityRank, worseSeverity } from '../../domain/security/types.js';
import type { CveAssessment, CveScanner } from '../pipeline/deps.js';
import type { SettingsSnapshot } from '../settings.js';
import type { VulnDatabase } from './vuln-db.js';
import { isoUtcSeconds } from '../../domain/time.js';

/** Result of one scan. */
export interface ScanResult {
  findings: StoredFinding[];
  evaluation: PolicyEvaluation;
  policy: CvePolicy;
}

interface SettingsSource {
  all(): Promise<SettingsSnapshot>;
}

/** The package as the matcher sees it (deb: source name/version; rpm: epoch and SOURCERPM). */
export function packageRefOf(pkg: Pick<InspectedPackage, 'format' | 'name' | 'version' | 'arch' | 'sourceName' | 'sourceVersion' | 'metadata'>): PackageRef {
  if (pkg.format === 'deb') {
    // The reader fills sourceVersion with the binary version when `Source:` gives none; passing
    // it on would defeat the binNMU rule (1.2-3+b1 is built from source 1.2-3).
    const explicit = pkg.sourceVersion && pkg.sourceVersion !== pkg.version ? pkg.sourceVersion : null;
    return { format: 'deb', name: pkg.name, version: pkg.version, arch: pkg.arch, source_name: pkg.sourceName || null, source_version: explicit };
  }
  const meta = pkg.metadata as { epoch?: number | null; sourceRpm?: string | null };
  return { format: 'rpm', name: pkg.name, version: pkg.version, arch: pkg.arch, epoch: meta.epoch ?? null, sourcerpm: meta.sourceRpm || null };
}

/** The policy the settings describe (the settings' `cve_policy` with their `sla_days`). */
export function policyFromSettings(s: Pick<SettingsSnapshot, 'cve_policy' | 'sla_days'>): CvePolicy {
  return { ...s.cve_policy, sla_days: { ...s.sla_days } };
}

/** Worst severity among findings whose action holds the package (review or block). */
export function worstHeldSeverity(findings: readonly StoredFinding[]): Severity | null {
  let worst: Severity | null = null;
  for (const f of findings) {
    if (f.action !== 'review' && f.action !== 'block') continue;
    worst = worst === null ? f.severity : worseSeverity(worst, f.severity);
  }
  return worst;
}

/** Findings with the SLA deadline of each held finding, counted from `from` (entry into review). */
export function withSlaDeadlines(findings: readonly StoredFinding[], policy: CvePolicy, from: Date): StoredFinding[] {
  return findings.map((f) => {
    const held = f.action === 'review' || f.action === 'block';
    const deadline = held ? slaDeadline(f.severity, policy, from) : null;
    return { ...f, sla_deadline: deadline ? isoUtcSeconds(deadline) : null };
  });
}

/** The reason lines an upload result and the review queue show, e.g. `cve: CVE-2024-1234 critical (policy review)`. */
export function reasonsOf(findings: readonly StoredFinding[]): string[] {
  return findings
    .filter((f) => f.action !== 'allow')
    .map((f) => `cve: ${f.cve_id} ${f.severity} (${f.in_kev === true ? 'KEV, ' : ''}policy ${f.action})`);
}

function summaryMessage(findings: readonly StoredFinding[], evaluation: PolicyEvaluation): string {
  if (findings.length === 0) return 'no known vulnerabilities';
  const parts = (Object.entries(evaluation.counts) as Array<[Severity, number]>).filter(([, n]) => n > 0).map(([s, n]) => `${n} ${s}`);
  const kev = findings.filter((f) => f.in_kev === true).length;
  const verdict = { block: 'blocked by policy', review: 'held for review', warn: 'published with warnings', allow: 'allowed by policy' }[evaluation.action];
  return `${findings.length} finding(s) (${parts.join(', ')}${kev ? `, ${kev} in KEV` : ''}): ${verdict}`;
}

/** A stored package as its embedded components are catalogued from (services/sbom). */
export interface StoredPackageFile {
  sha256: string;
  format: string;
  name: string;
  metadata: string;
}

/** Where the components embedded in a package come from: the upload's file, or the stored one (cached by SHA-256). */
export interface EmbeddedComponents {
  ofUpload(pkg: InspectedPackage, path: string): Promise<readonly ComponentRef[]>;
  ofStored(row: StoredPackageFile): Promise<readonly ComponentRef[]>;
}

const bySeverityThenCve = (a: { severity: Severity; cve_id: string }, b: { severity: Severity; cve_id: string }) =>
  severityRank(b.severity) - severityRank(a.severity) || (a.cve_id < b.cve_id ? -1 : a.cve_id > b.cve_id ? 1 : 0);

export class BuiltinCveScanner implements CveScanner {
  constructor(
    private readonly vulnDb: VulnDatabase,
    private readonly settings: SettingsSource,
    private readonly metrics: Pick<Metrics, 'cveFindings'>,
    private readonly embedded: EmbeddedComponents | null = null,
  ) {}

  /**
   * Pipeline entry point: null when no vulnerability database was ever synced (step skipped).
   * The payload is catalogued only when the feeds carry an ecosystem components are matched in:
   * reading a whole data.tar again costs as much as the upload's own inspection.
   */
  async assess(pkg: InspectedPackage, dist: Distribution, path?: string): Promise<CveAssessment | null> {
    const components = path && this.embedded && (await this.vulnDb.hasAnyOf(COMPONENT_OSV_ECOSYSTEMS)) ? await this.embedded.ofUpload(pkg, path) : [];
    const result = await this.scan(packageRefOf(pkg), dist, undefined, new Date(), undefined, components);
    if (!result) return null;
    return this.assessmentOf(result);
  }

  /** The embedded components of a stored package, when the feeds carry an ecosystem they are matched in. */
  async storedComponents(row: StoredPackageFile): Promise<readonly ComponentRef[]> {
    if (!this.embedded || !(await this.vulnDb.hasAnyOf(COMPONENT_OSV_ECOSYSTEMS))) return [];
    return this.embedded.ofStored(row);
  }

  /** Findings of embedded components, except CVEs already found in the package itself (one finding per CVE). */
  private async componentFindings(components: readonly ComponentRef[], skip: ReadonlySet<string>) {
    const names = new Map<string, { names: Set<string>; normalised: boolean }>();
    for (const c of components) {
      const l = componentLookup(c);
      if (!l) continue;
      const entry = names.get(l.ecosystem) ?? { names: new Set<string>(), normalised: l.normalised };
      for (const n of l.names) entry.names.add(n);
      names.set(l.ecosystem, entry);
    }
    const rows = (await Promise.all([...names].map(([eco, e]) => this.vulnDb.advisoriesFor(eco, [...e.names], e.normalised)))).flat();
    return rows.length ? matchComponents(components, rows, skip) : [];
  }

  /** The pipeline's view of a scan result. */
  assessmentOf(result: ScanResult, now = new Date()): CveAssessment {
    const { findings, evaluation, policy } = result;
    const deadline = evaluation.outcome_status === 'pending_review' ? slaDeadline(worstHeldSeverity(findings), policy, now) : null;
    return {
      outcome: evaluation.outcome_status,
      cveStatus: evaluation.cve_status,
      counts: { ...evaluation.counts },
      findings: deadline ? withSlaDeadlines(findings, policy, now) : findings,
      reasons: reasonsOf(findings),
      slaDeadline: deadline ? isoUtcSeconds(deadline) : null,
      message: summaryMessage(findings, evaluation),
    };
  }

  /**
   * Match, enrich and evaluate one package; null when no database was ever synced. `lookup` and
   * `preloaded` (an ecosystem and its EPSS/KEV in memory) spare queries when rescanning many.
   */
  async scan(
    ref: PackageRef,
    dist: Distribution,
    lookup?: AdvisoryLookup,
    now = new Date(),
    preloaded?: { epss: EpssLookup; kev: KevLookup },
    components: readonly ComponentRef[] = [],
  ): Promise<ScanResult | null> {
    if (!(await this.vulnDb.everSynced())) return null;
    const ecosystem = dist.osvEcosystem;
    const advisories = lookup ?? advisoryLookupFromRows(await this.vulnDb.advisoriesFor(ecosystem, matchIdentities(ref).map((i) => i.name)));
    const own = matchPackage(ref, ecosystem, advisories);
    const inner = components.length ? await this.componentFindings(components, new Set(own.map((f) => f.cve_id))) : [];
    const matched = inner.length ? [...own, ...inner].sort(bySeverityThenCve) : own;
    const settings = await this.settings.all();
    const policy = policyFromSettings(settings);
    let enriched = matched;
    if (matched.length > 0) {
      // Preloaded enrichment covers the distribution's CVEs; component CVEs are looked up.
      const lookups = preloaded && inner.length === 0 ? preloaded : (await this.vulnDb.enrichmentFor(matched.map((f) => f.cve_id)));
      const times = await this.vulnDb.enrichmentTimes();
      // KEV freshness follows the KEV feed; EPSS is kept whenever it was ever loaded (enrich.ts).
      enriched = enrich(matched, lookups.epss, lookups.kev, { now, epssKevFetchedAt: times.kev }).map((f) => {
        if (times.epss === null) return { ...f, epss: null, epss_percentile: null };
        const e = lookups.epss.get(f.cve_id);
        return { ...f, epss: e ? e.epss : null, epss_percentile: e ? e.percentile : null };
      });
    }
    const evaluation = evaluatePolicy(enriched, policy, { kevAction: settings.kev_action });
    const findings: StoredFinding[] = enriched.map((f, i) => ({ ...f, action: evaluation.finding_actions[i]!.action }));
    for (const f of findings) this.metrics.cveFindings.inc({ severity: f.severity });
    return { findings, evaluation, policy };
  }
}
