/**
 * Dependency matching as rpm does it (rpmdsCompare / rpmverOverlap) and a requires checker
 * that works against any index of provides and file owners (e.g. built from database rows).
 */
import type { RpmDependency, RpmFile } from './package.js';
import { parseRichDependency, type RichDep } from './rich.js';
import { Sense, SENSE_MASK } from './tags.js';
import { formatEvr, parseEvr, rpmvercmp } from './vercmp.js';

/** A versioned name as rpm stores it: flags (RPMSENSE_*) and `[E:]V[-R]` ('' when unversioned). */
export interface DepRange {
  flags: number;
  evr: string;
}

/**
 * Whether two ranges on the same name overlap (rpmverOverlap). An unversioned side always
 * overlaps. A side without epoch matches any epoch 0 (an explicit positive epoch wins).
 * When one side has no release (e.g. `Requires: foo = 1.0`) the release is not compared:
 * `foo = 1.0` is satisfied by `foo = 1.0-5`.
 */
export function rangesOverlap(a: DepRange, b: DepRange): boolean {
  if (!(a.flags & SENSE_MASK) || !(b.flags & SENSE_MASK)) return true;
  if (a.evr === '' || b.evr === '') return true;
  const va = parseEvr(a.evr);
  const vb = parseEvr(b.evr);
  const fa = a.flags;
  const fb = b.flags;
  let sense = 0;
  if (va.epoch !== null && vb.epoch !== null) sense = rpmvercmp(va.epoch, vb.epoch);
  else if (va.epoch !== null && Number.parseInt(va.epoch, 10) > 0) sense = 1;
  else if (vb.epoch !== null && Number.parseInt(vb.epoch, 10) > 0) sense = -1;
  if (sense === 0) {
    sense = rpmvercmp(va.version, vb.version);
    if (sense === 0) {
      const ra = va.release ?? '';
      const rb = vb.release ?? '';
      if (ra !== '' && rb !== '') {
        sense = rpmvercmp(ra, rb);
      } else if ((ra !== '' && fb & Sense.EQUAL) || (rb !== '' && fa & Sense.EQUAL)) {
        // The side with no release matches any release, provided it includes equality.
        return true;
      }
    }
  }
  if (sense < 0) return (fa & Sense.GREATER) !== 0 || (fb & Sense.LESS) !== 0;
  if (sense > 0) return (fa & Sense.LESS) !== 0 || (fb & Sense.GREATER) !== 0;
  return (
    ((fa & Sense.EQUAL) !== 0 && (fb & Sense.EQUAL) !== 0) ||
    ((fa & Sense.LESS) !== 0 && (fb & Sense.LESS) !== 0) ||
    ((fa & Sense.GREATER) !== 0 && (fb & Sense.GREATER) !== 0)
  );
}

/** The comparison operator of a flag word as written in spec files ('' when unversioned). */
export function senseOperator(flags: number): string {
  switch (flags & SENSE_MASK) {
    case Sense.LESS:
      return '<';
    case Sense.GREATER:
      return '>';
    case Sense.EQUAL:
      return '=';
    case Sense.LESS | Sense.EQUAL:
      return '<=';
    case Sense.GREATER | Sense.EQUAL:
      return '>=';
    default:
      return '';
  }
}

/** `name op evr`, as rpm prints a dependency. */
export function formatDependency(dep: { name: string; flags: number; evr: string }): string {
  const op = senseOperator(dep.flags);
  return op && dep.evr ? `${dep.name} ${op} ${dep.evr}` : dep.name;
}

/** One provide entry of some package in the repository. */
export interface ProvideCandidate extends DepRange {
  /** Who provides it, e.g. `bash-5.1-2.x86_64` (reported back, not interpreted). */
  provider: string;
}

/** Where the checker looks for providers; may be backed by memory or by database queries. */
export interface RelationIndex {
  /** Every provide entry named `name` (explicit provides, including the `name = EVR` self-provide). */
  providers(name: string): readonly ProvideCandidate[] | Promise<readonly ProvideCandidate[]>;
  /** Packages whose file list contains exactly `path`. */
  fileOwners(path: string): readonly string[] | Promise<readonly string[]>;
}

/** The parts of a package the checker reads. */
export interface RequiringPackage {
  name: string;
  epoch: number | null;
  version: string;
  release: string;
  requires: readonly RpmDependency[];
  recommends?: readonly RpmDependency[];
  provides: readonly RpmDependency[];
  files: readonly Pick<RpmFile, 'path'>[];
}

/** Why a relation is not satisfied. */
export type MissingReason = 'not_provided' | 'version_not_satisfied';

export interface MissingRelation {
  /** The relation as rpm prints it, e.g. `bash >= 4.0`. */
  relation: string;
  kind: 'requires' | 'recommends';
  reason: MissingReason;
  /** Providers of the name whose versions did not match (at most a few). */
  available: string[];
}

export interface RequiresCheck {
  all_satisfied: boolean;
  missing: MissingRelation[];
  /** A hard requirement is missing: `dnf install` of this package would fail. */
  install_blocked: boolean;
}

type Verdict = { ok: true } | { ok: false; reason: MissingReason; available: string[] };

const OK: Verdict = { ok: true };

/** Checks a package's requires (hard) and recommends (weak) against itself and the index. */
export async function checkRequires(pkg: RequiringPackage, index: RelationIndex): Promise<RequiresCheck> {
  const ownFiles = new Set(pkg.files.map((f) => f.path));
  const selfProvide: DepRange = {
    flags: Sense.EQUAL,
    evr: formatEvr({ epoch: pkg.epoch, version: pkg.version, release: pkg.release }),
  };

  const checkSimple = async (name: string, range: DepRange): Promise<Verdict> => {
    if (name.startsWith('rpmlib(') || range.flags & Sense.RPMLIB) return OK;
    if (name === pkg.name && rangesOverlap(selfProvide, range)) return OK;
    if (pkg.provides.some((p) => p.name === name && rangesOverlap(p, range))) return OK;
    if (name.startsWith('/')) {
      if (ownFiles.has(name)) return OK;
      if ((await index.fileOwners(name)).length > 0) return OK;
    }
    const candidates = await index.providers(name);
    if (candidates.some((c) => rangesOverlap(c, range))) return OK;
    if (candidates.length === 0) return { ok: false, reason: 'not_provided', available: [] };
    const available = [...new Set(candidates.map((c) => `${c.provider} (${formatDependency({ name, ...c })})`))].slice(0, 5);
    return { ok: false, reason: 'version_not_satisfied', available };
  };

  const evaluate = async (dep: RichDep): Promise<Verdict> => {
    switch (dep.op) {
      case 'simple':
        return checkSimple(dep.name, { flags: dep.flags, evr: dep.evr });
      case 'and':
      case 'with': {
        for (const part of dep.args) {
          const v = await evaluate(part);
          if (!v.ok) return v;
        }
        return OK;
      }
      case 'or': {
        let last: Verdict = { ok: false, reason: 'not_provided', available: [] };
        for (const part of dep.args) {
          last = await evaluate(part);
          if (last.ok) return OK;
        }
        return last;
      }
      case 'without':
        return evaluate(dep.args[0]!);
      case 'if':
      case 'unless':
        // The requirement depends on what is installed on the client: not decidable here,
        // so it only fails when neither branch can ever be met.
        if ((await evaluate(dep.args[0]!)).ok) return OK;
        if (dep.args[2] && (await evaluate(dep.args[2])).ok) return OK;
        return dep.args[2] ? { ok: false, reason: 'not_provided', available: [] } : OK;
    }
  };

  const missing: MissingRelation[] = [];
  const run = async (deps: readonly RpmDependency[], kind: MissingRelation['kind']): Promise<void> => {
    const seen = new Set<string>();
    for (const dep of deps) {
      const relation = formatDependency(dep);
      if (seen.has(relation)) continue;
      seen.add(relation);
      const parsed = dep.name.startsWith('(') ? parseRichDependency(dep.name) : null;
      const verdict = parsed
        ? await evaluate(parsed)
        : await checkSimple(dep.name, { flags: dep.flags, evr: dep.evr });
      if (!verdict.ok) missing.push({ relation, kind, reason: verdict.reason, available: verdict.available });
    }
  };
  // Legacy weak requires (MISSINGOK) never block an install.
  await run(pkg.requires.filter((d) => !(d.flags & Sense.MISSINGOK)), 'requires');
  await run([...(pkg.recommends ?? []), ...pkg.requires.filter((d) => d.flags & Sense.MISSINGOK)], 'recommends');
  return {
    all_satisfied: missing.length === 0,
    missing,
    install_blocked: missing.some((m) => m.kind === 'requires'),
  };
}

/** A package as the in-memory index needs it. */
export interface IndexedPackage {
  /** Label reported as the provider, e.g. `bash-5.1-2.x86_64`. */
  label: string;
  provides: readonly { name: string; flags: number; evr: string }[];
  files: readonly Pick<RpmFile, 'path'>[];
}

/** Builds a RelationIndex over packages held in memory (also a template for a SQL-backed one). */
export function buildRelationIndex(packages: Iterable<IndexedPackage>): RelationIndex {
  const provides = new Map<string, ProvideCandidate[]>();
  const files = new Map<string, string[]>();
  for (const p of packages) {
    for (const pr of p.provides) {
      const list = provides.get(pr.name) ?? [];
      list.push({ flags: pr.flags, evr: pr.evr, provider: p.label });
      provides.set(pr.name, list);
    }
    for (const f of p.files) {
      const list = files.get(f.path) ?? [];
      list.push(p.label);
      files.set(f.path, list);
    }
  }
  return {
    providers: (name) => provides.get(name) ?? [],
    fileOwners: (path) => files.get(path) ?? [],
  };
}
