/**
 * The two formats' rules for the closure walk (resolve.ts): Debian relations with dpkg version
 * comparison and exact-version Provides (as apt); RPM requires against provides and file
 * provides with rpm's range overlap, rich `or`/`and`/`with`/`if`/`unless` dependencies; and
 * Debian's architecture qualifiers (`:any` only from a `Multi-Arch: allowed` package).
 */
import { parseProvides, parseRelations, type Relation, type RelationGroup } from '../deb/relations.js';
import { compareDebianVersions, parseDebianVersion, satisfiesRelation, type DebianVersion } from '../deb/version.js';
import { rangesOverlap, type DepRange } from '../rpm/relations.js';
import { parseRichDependency, type RichDep } from '../rpm/rich.js';
import { Sense } from '../rpm/tags.js';
import { compareEvr, parseEvr } from '../rpm/vercmp.js';
import type { DebCatalogRelations, RpmCatalogRelations, RpmRelation } from './catalog.js';
import type { CatalogPackage, Requirement, ResolverFormat } from './resolve.js';

/** Catalog and target look-ups by name; the service backs them with (memoised) queries. */
export interface NameLookups {
  /** Catalog packages called `name`. */
  byName(name: string): Promise<CatalogPackage[]>;
  /** Catalog packages providing `name` (Provides or, RPM, a file path), with the provided version/flags. */
  providers(name: string): Promise<Array<{ pkg: CatalogPackage; version: string | null; flags: number | null }>>;
  /** The target distribution's rows for `name`: its own packages (kind `package`), provides and files. */
  target(name: string): Promise<Array<{ kind: string; version: string | null; flags: number | null }>>;
  /** Loads the three look-ups for many names at once. */
  prefetch?(names: string[]): Promise<void>;
  /** The three look-ups of `name` when already loaded, so the walk needs no promise; else undefined. */
  loaded?(name: string): LoadedName | undefined;
}

/** What {@link NameLookups} answers for one name. */
export interface LoadedName {
  byName: CatalogPackage[];
  providers: Array<{ pkg: CatalogPackage; version: string | null; flags: number | null }>;
  target: Array<{ kind: string; version: string | null; flags: number | null }>;
}

/**
 * A cache of what is the same for every resolution, by text: parsed versions, parsed relation
 * fields. Emptied when full, so it stays small (the texts of a few large closures).
 */
class TextMemo<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly max: number) {}
  get(text: string, make: (text: string) => V): V {
    let value = this.map.get(text);
    if (value === undefined) {
      value = make(text);
      if (this.map.size >= this.max) this.map.clear();
      this.map.set(text, value);
    }
    return value;
  }
}

/**
 * A version parsed once: policy-conforming versions as their parts, anything else (which dpkg
 * only warns about, or refuses) as the text, which the comparison then reads as it always did.
 */
const versions = new TextMemo<DebianVersion | string>(50_000);
const parseVersionOrKeep = (text: string): DebianVersion | string => {
  try {
    return parseDebianVersion(text);
  } catch {
    return text;
  }
};
const parsedVersion = (text: string): DebianVersion | string => versions.get(text, parseVersionOrKeep);
const compareDebVersionsCached = (a: string, b: string): number => compareDebianVersions(parsedVersion(a), parsedVersion(b));

const debMatches = (rel: Relation, version: string | null): boolean =>
  rel.constraint === null || (version !== null && satisfiesRelation(parsedVersion(version), rel.constraint.op, parsedVersion(rel.constraint.version)));

/** Relation fields parsed once by text (an unreadable one keeps its error, thrown again). */
type ParsedField = RelationGroup[] | { error: unknown };
const fieldParser = (name: string) => (text: string): ParsedField => {
  try {
    return parseRelations(text, name);
  } catch (error) {
    return { error };
  }
};
const relationFields = {
  'Pre-Depends': { memo: new TextMemo<ParsedField>(5_000), parse: fieldParser('Pre-Depends') },
  Depends: { memo: new TextMemo<ParsedField>(5_000), parse: fieldParser('Depends') },
};
function relationField(field: string | null, name: keyof typeof relationFields): RelationGroup[] {
  if (field === null || field === undefined) return [];
  const parsed = relationFields[name].memo.get(field, relationFields[name].parse);
  if (!Array.isArray(parsed)) throw parsed.error;
  return parsed;
}

/**
 * Whether a package of this architecture and Multi-Arch kind can answer a relation with this
 * architecture qualifier (the target has one native architecture plus `all`): `name:any` only
 * from a package that declares `Multi-Arch: allowed` (dpkg and apt refuse it otherwise, native or
 * not); `name:<arch>` from that architecture; `:native` and no qualifier from any accepted one.
 */
export function debArchQualifierMet(rel: Pick<Relation, 'archQualifier'>, pkg: Pick<CatalogPackage, 'arch' | 'relations'>): boolean {
  const qualifier = rel.archQualifier;
  if (qualifier === null || qualifier === 'native') return true;
  if (qualifier === 'any') return (pkg.relations as DebCatalogRelations).multiArch?.trim().toLowerCase() === 'allowed';
  return pkg.arch === qualifier;
}

const providesCache = new WeakMap<CatalogPackage, Array<{ name: string; version: string | null }>>();

function debProvides(pkg: CatalogPackage): Array<{ name: string; version: string | null }> {
  let provided = providesCache.get(pkg);
  if (!provided) {
    try {
      provided = parseProvides((pkg.relations as DebCatalogRelations).provides);
    } catch {
      provided = [];
    }
    providesCache.set(pkg, provided);
  }
  return provided;
}

/** A package's Pre-Depends and Depends, kept while the package is (catalog packages outlive one resolution). */
const debRequirements = new WeakMap<CatalogPackage, RelationGroup[] | { error: unknown }>();

export function debFormat(lookups: NameLookups, accepted: readonly string[]): ResolverFormat<Relation> {
  const archOk = (pkg: CatalogPackage) => accepted.includes(pkg.arch);
  const candidates = (alt: Relation, byName: LoadedName['byName'], providers: LoadedName['providers']): CatalogPackage[] => {
    const real = byName.filter((p) => archOk(p) && debArchQualifierMet(alt, p) && debMatches(alt, p.version));
    real.sort((a, b) => compareDebVersionsCached(b.version, a.version));
    const virtual = providers.filter((p) => archOk(p.pkg) && debArchQualifierMet(alt, p.pkg) && debMatches(alt, p.version)).map((p) => p.pkg);
    virtual.sort((a, b) => a.name.localeCompare(b.name) || compareDebVersionsCached(b.version, a.version));
    return virtual.length === 0 ? real : [...real, ...virtual];
  };
  const present = (alt: Relation, target: LoadedName['target']): boolean => target.some((row) => debMatches(alt, row.version));
  return {
    requirements(pkg) {
      let known = debRequirements.get(pkg);
      if (known === undefined) {
        const rel = pkg.relations as DebCatalogRelations;
        try {
          const pre = relationField(rel.preDepends, 'Pre-Depends');
          const depends = relationField(rel.depends, 'Depends');
          known = pre.length === 0 ? depends : depends.length === 0 ? pre : [...pre, ...depends];
        } catch (error) {
          known = { error };
        }
        debRequirements.set(pkg, known);
      }
      if (!Array.isArray(known)) throw known.error;
      return known;
    },
    nameOf: (alt) => alt.name,
    namesOf: (pkg) => [pkg.name, ...debProvides(pkg).map((p) => p.name)],
    prefetch: lookups.prefetch?.bind(lookups),
    satisfiedBy(alt, pkg) {
      if (!debArchQualifierMet(alt, pkg)) return false;
      if (pkg.name === alt.name && debMatches(alt, pkg.version)) return true;
      for (const p of debProvides(pkg)) if (p.name === alt.name && debMatches(alt, p.version)) return true;
      return false;
    },
    async candidates(alt) {
      return candidates(alt, await lookups.byName(alt.name), await lookups.providers(alt.name));
    },
    candidatesNow(alt) {
      const loaded = lookups.loaded?.(alt.name);
      return loaded && candidates(alt, loaded.byName, loaded.providers);
    },
    async presentInTarget(alt) {
      return present(alt, await lookups.target(alt.name));
    },
    presentInTargetNow(alt) {
      const loaded = lookups.loaded?.(alt.name);
      return loaded && present(alt, loaded.target);
    },
  };
}

const evrOrder = (a: string, b: string) => compareEvr(parseEvr(a), parseEvr(b));

/** One alternative of an RPM requirement: a plain (versioned) name or a file path. */
export type RpmAlternative = RpmRelation;

/**
 * Rich dependencies as requirement groups: `and` splits, `or` gives alternatives, `with` asks for
 * its first part; `if`/`unless` become conditionals the walk decides once the rest is selected.
 * `without` only narrows what another part matches, so it pulls nothing in.
 */
function richRequirements(dep: RichDep, text: string): Requirement<RpmAlternative>[] {
  if (dep.op === 'simple') return [{ text, alternatives: [{ name: dep.name, flags: dep.flags, evr: dep.evr }] }];
  if (dep.op === 'and') return dep.args.flatMap((a) => richRequirements(a, text));
  // An `or` of conditionals or conjunctions is read as the alternatives of its plain parts.
  if (dep.op === 'or') return [{ text, alternatives: dep.args.flatMap((a) => richRequirements(a, text).flatMap((r) => r.alternatives)) }];
  if (dep.op === 'with') return dep.args[0] ? richRequirements(dep.args[0], text) : [];
  if ((dep.op === 'if' || dep.op === 'unless') && dep.args[0] && dep.args[1]) {
    return [{
      text,
      alternatives: [],
      conditional: {
        when: richRequirements(dep.args[1], text),
        negate: dep.op === 'unless',
        then: richRequirements(dep.args[0], text),
        otherwise: dep.args[2] ? richRequirements(dep.args[2], text) : [],
      },
    }];
  }
  return [];
}

export function rpmFormat(lookups: NameLookups, accepted: readonly string[]): ResolverFormat<RpmAlternative> {
  const archOk = (pkg: CatalogPackage) => accepted.includes(pkg.arch);
  const selfRange = (pkg: CatalogPackage): DepRange => ({ flags: Sense.EQUAL, evr: pkg.version });
  const candidates = (alt: RpmAlternative, byName: LoadedName['byName'], providers: LoadedName['providers']): CatalogPackage[] => {
    const real = byName.filter((p) => archOk(p) && rangesOverlap(selfRange(p), alt));
    real.sort((a, b) => evrOrder(b.version, a.version));
    const provided = providers
      .filter((p) => archOk(p.pkg) && (alt.name.startsWith('/') || rangesOverlap({ flags: p.flags ?? 0, evr: p.version ?? '' }, alt)))
      .map((p) => p.pkg);
    provided.sort((a, b) => a.name.localeCompare(b.name) || evrOrder(b.version, a.version));
    return [...real, ...provided];
  };
  const present = (alt: RpmAlternative, target: LoadedName['target']): boolean => target.some((row) =>
    row.kind === 'file' ? alt.name.startsWith('/') : rangesOverlap({ flags: row.flags ?? (row.version ? Sense.EQUAL : 0), evr: row.version ?? '' }, alt));
  return {
    requirements(pkg) {
      const seen = new Set<string>();
      const out: Requirement<RpmAlternative>[] = [];
      for (const req of (pkg.relations as RpmCatalogRelations).requires) {
        const key = `${req.name}\0${req.flags & (Sense.LESS | Sense.GREATER | Sense.EQUAL)}\0${req.evr}`;
        if (seen.has(key) || req.name.startsWith('rpmlib(')) continue;
        seen.add(key);
        const text = req.evr ? `${req.name} ${['', '<', '>', '', '=', '<=', '>=', ''][(req.flags >> 1) & 7] ?? ''} ${req.evr}` : req.name;
        const rich = req.name.startsWith('(') ? parseRichDependency(req.name) : null;
        out.push(...(rich ? richRequirements(rich, req.name) : [{ text: text.replace(/\s+/g, ' ').trim(), alternatives: [req] }]));
      }
      return out;
    },
    nameOf: (alt) => alt.name,
    namesOf: (pkg) => {
      const rel = pkg.relations as RpmCatalogRelations;
      return [pkg.name, ...rel.provides.map((p) => p.name), ...rel.files];
    },
    prefetch: lookups.prefetch?.bind(lookups),
    satisfiedBy(alt, pkg) {
      const rel = pkg.relations as RpmCatalogRelations;
      if (pkg.name === alt.name && rangesOverlap(selfRange(pkg), alt)) return true;
      if (alt.name.startsWith('/')) return rel.files.includes(alt.name);
      return rel.provides.some((p) => p.name === alt.name && rangesOverlap(p, alt));
    },
    async candidates(alt) {
      return candidates(alt, await lookups.byName(alt.name), await lookups.providers(alt.name));
    },
    candidatesNow(alt) {
      const loaded = lookups.loaded?.(alt.name);
      return loaded && candidates(alt, loaded.byName, loaded.providers);
    },
    async presentInTarget(alt) {
      return present(alt, await lookups.target(alt.name));
    },
    presentInTargetNow(alt) {
      const loaded = lookups.loaded?.(alt.name);
      return loaded && present(alt, loaded.target);
    },
  };
}
