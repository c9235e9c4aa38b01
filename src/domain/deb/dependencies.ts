/**
 * Dependency check of one package against the packages a distribution publishes, following
 * dpkg/apt semantics for a single-architecture repository:
 *
 * - `foo` is satisfied by `foo` built for the depending package's architecture (`all` counts as
 *   the native architecture) or by `foo` of any architecture marked `Multi-Arch: foreign`;
 * - `foo:any` only by a `foo` marked `Multi-Arch: allowed`; `foo:native` / `foo:amd64` by that
 *   architecture;
 * - a virtual name is satisfied through `Provides`; a versioned relation only by a provider that
 *   provides an exact version (`Provides: foo (= 1.2)`) satisfying it, as apt does.
 */
import { parseProvides, parseRelations, type Relation, type RelationGroup } from './relations.js';
import { satisfiesRelation } from './version.js';

export type MultiArch = 'no' | 'same' | 'foreign' | 'allowed';

/** A published binary package that may satisfy a relation. */
export interface Candidate {
  name: string;
  version: string;
  arch: string;
  multiArch: MultiArch;
}

/** A published package providing a (virtual) name, with the version it provides if any. */
export interface Provider {
  candidate: Candidate;
  version: string | null;
}

/** The published set, as lookups; implement it over DB rows or build it with buildPackageIndex. */
export interface PackageIndex {
  /** Real packages with this name. */
  byName(name: string): readonly Candidate[];
  /** Packages whose Provides lists this name. */
  providers(name: string): readonly Provider[];
}

/** What buildPackageIndex needs from each published package (e.g. one DB row). */
export interface PublishedPackage {
  name: string;
  version: string;
  arch: string;
  multiArch?: string | null;
  /** The raw Provides field. */
  provides?: string | null;
}

/** One unsatisfied relation group, in the result's `missing` list. */
export interface MissingRelation {
  /** The group as written, e.g. `libfoo (>= 2) | libbar`. */
  relation: string;
  /** Which field it came from. */
  field: 'Pre-Depends' | 'Depends' | 'Recommends';
  reason: string;
}

/** The API's dependency check result. */
export interface DependencyCheckResult {
  all_satisfied: boolean;
  missing: MissingRelation[];
  install_blocked: boolean;
}

/** The relationship fields of the package being checked (raw strings). */
export interface DependencyFields {
  preDepends?: string | null;
  depends?: string | null;
  /** Optional: reported in `missing` when unsatisfied, but never blocks installation. */
  recommends?: string | null;
}

export interface CheckOptions {
  /** Architecture of the package being checked. Default: the native one. */
  packageArch?: string;
  /** The distribution's architecture, which `all` and `:native` stand for. Default `amd64`. */
  nativeArch?: string;
}

/** Builds an in-memory PackageIndex; a package with an unparsable Provides provides nothing. */
export function buildPackageIndex(packages: Iterable<PublishedPackage>): PackageIndex {
  const names = new Map<string, Candidate[]>();
  const provided = new Map<string, Provider[]>();
  for (const published of packages) {
    const candidate: Candidate = {
      name: published.name,
      version: published.version,
      arch: published.arch,
      multiArch: normaliseMultiArch(published.multiArch),
    };
    pushTo(names, candidate.name, candidate);
    let provides: ReturnType<typeof parseProvides> = [];
    try {
      provides = parseProvides(published.provides);
    } catch {
      provides = [];
    }
    for (const entry of provides) pushTo(provided, entry.name, { candidate, version: entry.version });
  }
  return {
    byName: (name) => names.get(name) ?? [],
    providers: (name) => provided.get(name) ?? [],
  };
}

/** The `Multi-Arch` field value normalised; unknown or absent values mean `no`. */
export function normaliseMultiArch(value: string | null | undefined): MultiArch {
  const lowered = (value ?? '').trim().toLowerCase();
  return lowered === 'same' || lowered === 'foreign' || lowered === 'allowed' ? lowered : 'no';
}

/**
 * Checks Pre-Depends and Depends (and optionally Recommends) against `index`. Throws
 * PackageFormatError('bad_control_field') when a field cannot be parsed.
 */
export function checkDependencies(fields: DependencyFields, index: PackageIndex, options: CheckOptions = {}): DependencyCheckResult {
  const nativeArch = options.nativeArch ?? 'amd64';
  const packageArch = !options.packageArch || options.packageArch === 'all' ? nativeArch : options.packageArch;
  const context: MatchContext = { index, nativeArch, packageArch };
  const missing: MissingRelation[] = [];
  let blocked = false;
  const sections: Array<[MissingRelation['field'], string | null | undefined, boolean]> = [
    ['Pre-Depends', fields.preDepends, true],
    ['Depends', fields.depends, true],
    ['Recommends', fields.recommends, false],
  ];
  for (const [field, text, blocking] of sections) {
    for (const group of parseRelations(text, field)) {
      const reason = unsatisfiedReason(group, context);
      if (reason === null) continue;
      missing.push({ relation: group.text, field, reason });
      if (blocking) blocked = true;
    }
  }
  return { all_satisfied: missing.length === 0, missing, install_blocked: blocked };
}

/** Whether one relation alternative is satisfied by the index. */
export function isRelationSatisfied(relation: Relation, index: PackageIndex, options: CheckOptions = {}): boolean {
  const nativeArch = options.nativeArch ?? 'amd64';
  const packageArch = !options.packageArch || options.packageArch === 'all' ? nativeArch : options.packageArch;
  return explain(relation, { index, nativeArch, packageArch }) === null;
}

interface MatchContext {
  index: PackageIndex;
  nativeArch: string;
  packageArch: string;
}

/** null when some alternative is satisfied, otherwise why none is (one clause per alternative). */
function unsatisfiedReason(group: RelationGroup, context: MatchContext): string | null {
  const reasons: string[] = [];
  for (const alternative of group.alternatives) {
    const reason = explain(alternative, context);
    if (reason === null) return null;
    reasons.push(reason);
  }
  return reasons.join('; ');
}

function explain(relation: Relation, context: MatchContext): string | null {
  const real = context.index.byName(relation.name);
  const providers = context.index.providers(relation.name);
  if (real.length === 0 && providers.length === 0) {
    return `${relation.name}: not published in this distribution`;
  }
  const archOk = real.filter((candidate) => architectureSatisfies(candidate, relation, context));
  const versionOk = archOk.filter(
    (candidate) => relation.constraint === null || satisfiesRelation(candidate.version, relation.constraint.op, relation.constraint.version),
  );
  if (versionOk.length > 0) return null;
  const viaProvides = providers.filter(
    (provider) =>
      architectureSatisfies(provider.candidate, relation, context) &&
      (relation.constraint === null ||
        (provider.version !== null && satisfiesRelation(provider.version, relation.constraint.op, relation.constraint.version))),
  );
  if (viaProvides.length > 0) return null;

  const wanted = relation.constraint === null ? '' : ` (${relation.constraint.op} ${relation.constraint.version})`;
  if (archOk.length > 0) {
    const versions = unique(archOk.map((candidate) => candidate.version)).join(', ');
    return `${relation.name}${wanted}: only version(s) ${versions} published`;
  }
  if (real.length > 0) {
    const arches = unique(real.map((candidate) => `${candidate.arch} (Multi-Arch: ${candidate.multiArch})`)).join(', ');
    return `${relation.name}${qualifierText(relation)}: published only as ${arches}, which does not satisfy the architecture`;
  }
  const offered = unique(providers.map((p) => `${p.candidate.name}${p.version === null ? '' : ` (= ${p.version})`}`)).join(', ');
  return relation.constraint === null
    ? `${relation.name}${qualifierText(relation)}: provided by ${offered}, but not for a matching architecture`
    : `${relation.name}${wanted}: virtual package provided by ${offered}, none with a satisfying version`;
}

/** dpkg's architecture rule for one candidate (see the module comment). */
function architectureSatisfies(candidate: Candidate, relation: Relation, context: MatchContext): boolean {
  const qualifier = relation.archQualifier;
  if (qualifier === null && candidate.multiArch === 'foreign') return true;
  if (qualifier === 'any') return candidate.multiArch === 'allowed';
  const wanted = qualifier === null ? context.packageArch : qualifier === 'native' ? context.nativeArch : qualifier;
  const actual = candidate.arch === 'all' ? context.nativeArch : candidate.arch;
  return actual === wanted;
}

function qualifierText(relation: Relation): string {
  return relation.archQualifier === null ? '' : `:${relation.archQualifier}`;
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

function pushTo<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
