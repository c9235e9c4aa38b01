/** Package rows, decision records and inventories → the domain's SbomPackage. */
import type { Db } from '../../adapters/db/index.js';
import { findDecisionsFor, type DecisionRow } from '../../adapters/db/decisions.table.js';
import type { SbomPageRow, SbomRow } from '../../adapters/db/sbom.table.js';
import { parseRelations } from '../../domain/deb/relations.js';
import { findDistribution } from '../../domain/distributions.js';
import type { PackageInventory, SbomDecision, SbomPackage, SbomVulnerability } from '../../domain/sbom/model.js';
import { packagePurl } from '../../domain/sbom/purl.js';
import { parseStoredFindings } from '../security/findings-store.js';

/** A package of the distribution, as dependency edges need it: its ref. */
export type ProviderMap = Map<string, string[]>;

export function refOf(row: Pick<SbomRow, 'format' | 'name' | 'version' | 'arch' | 'distribution'>): string {
  const dist = findDistribution(row.distribution);
  if (!dist) throw new Error(`unknown distribution ${row.distribution}`);
  return packagePurl(row, dist);
}

/** Names a package needs: each Depends/Pre-Depends group's alternatives in order, or each RPM Requires. */
export function neededNames(row: Pick<SbomRow, 'format' | 'relations'>): string[][] {
  const relations = JSON.parse(row.relations) as Record<string, unknown>;
  if (row.format === 'rpm') {
    const requires = (relations.requires ?? []) as Array<{ name: string }>;
    return requires.filter((r) => !r.name.startsWith('rpmlib(')).map((r) => [r.name]);
  }
  const groups: string[][] = [];
  for (const field of [relations.preDepends, relations.depends]) {
    if (typeof field !== 'string') continue;
    try {
      for (const group of parseRelations(field)) groups.push(group.alternatives.map((a) => a.name));
    } catch {
      // A field the upload accepted parses; a hand-edited row does not stop the document.
    }
  }
  return groups;
}

/** Edges to the packages satisfying each need (`neededNames`: the first alternative the distribution has). */
export function dependsOn(needs: readonly string[][], self: string, providers: ProviderMap): string[] {
  const out = new Set<string>();
  for (const alternatives of needs) {
    for (const name of alternatives) {
      const refs = (providers.get(name) ?? []).filter((r) => r !== self);
      if (refs.length === 0) continue;
      out.add(refs[0]!);
      break;
    }
  }
  return [...out];
}

interface Meta {
  maintainer?: string | null;
  homepage?: string | null;
  description?: string | null;
  vendor?: string;
  packager?: string;
  license?: string;
  url?: string;
  summary?: string;
}

const personName = (text: string | null | undefined) => (text ? text.replace(/\s*<[^>]*>\s*/g, ' ').trim() || null : null);

export function sbomPackage(
  row: SbomRow,
  extra: { inventory: PackageInventory | null; decision: SbomDecision | null; dependsOn: string[]; withFindings: boolean; ref?: string },
): SbomPackage {
  const meta = JSON.parse(row.metadata) as Meta;
  const ref = extra.ref ?? refOf(row);
  const deb = row.format !== 'rpm';
  const [synopsis, ...rest] = (meta.description ?? '').split('\n');
  const vulnerabilities: SbomVulnerability[] = extra.withFindings
    ? parseStoredFindings(row.findings).details.map((f) => ({
      id: f.cve_id,
      advisoryId: f.advisory_id ?? null,
      severity: f.severity,
      cvssScore: f.cvss_score ?? null,
      cvssVector: f.cvss_vector ?? null,
      epss: f.epss ?? null,
      epssPercentile: f.epss_percentile ?? null,
      inKev: f.in_kev ?? null,
      affectedComponent: f.affected_component ?? null,
      installedVersion: f.installed_version ?? null,
      fixedVersion: f.fixed_version ?? null,
      fixState: f.fix_state ?? null,
      summary: f.summary ?? '',
      policyAction: f.action ?? null,
    }))
    : [];
  return {
    ref,
    purl: ref,
    format: deb ? 'deb' : 'rpm',
    name: row.name,
    version: row.version,
    arch: row.arch,
    distribution: row.distribution,
    status: row.status,
    sha256: row.sha256,
    size: Number(row.size),
    filename: row.filename,
    sourceName: row.source_name || null,
    sourceVersion: row.source_version || null,
    supplier: deb ? personName(meta.maintainer) : meta.vendor || personName(meta.packager),
    license: deb ? (extra.inventory?.copyrightLicense ?? null) : meta.license || null,
    summary: deb ? synopsis?.trim() || null : meta.summary || null,
    description: deb ? rest.map((l) => (l.trim() === '.' ? '' : l.replace(/^ /, ''))).join('\n').trim() || null : meta.description || null,
    homepage: deb ? meta.homepage ?? null : meta.url || null,
    dependsOn: extra.dependsOn,
    components: extra.inventory?.components ?? [],
    vulnerabilities,
    decision: extra.decision,
  };
}

/** A decision record as the SBOM carries it. */
export function decisionOf(d: Pick<DecisionRow, 'justification' | 'decided_at' | 'expires_at' | 'target_version' | 'covered_cve_ids'> & { action: string }): SbomDecision {
  return {
    action: d.action,
    justification: d.justification,
    decidedAt: d.decided_at,
    expiresAt: d.expires_at,
    targetVersion: d.target_version,
    coveredCveIds: JSON.parse(d.covered_cve_ids) as string[],
  };
}

/** The decision a page row was joined with, or null. */
export function pageDecision(row: SbomPageRow): SbomDecision | null {
  if (row.decision_action === null) return null;
  return decisionOf({
    action: row.decision_action,
    justification: row.decision_justification ?? '',
    decided_at: row.decision_decided_at ?? '',
    expires_at: row.decision_expires_at,
    target_version: row.decision_target_version,
    covered_cve_ids: row.decision_covered_cve_ids ?? '[]',
  });
}

/** Decision records of these rows, by `decisionKey` (adapters/db/decisions.table.ts). */
export async function decisionsFor(db: Db, rows: ReadonlyArray<Pick<SbomRow, 'name' | 'version' | 'arch'>>): Promise<Map<string, SbomDecision>> {
  return new Map([...(await findDecisionsFor(db, rows))].map(([key, row]) => [key, decisionOf(row)]));
}
