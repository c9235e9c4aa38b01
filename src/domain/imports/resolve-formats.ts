/**
 * The two formats' rules for the closure walk (resolve.ts): Debian relations with dpkg version
 * comparison and exact-version Provides (as apt); RPM requires against provides and file
 * provides with rpm's range overlap, rich `or`/`and`/`with`/`if`/`unless` dependencies; and
 * Debian's architecture qualifiers (`:any` only from a `Multi-Arch: allowed` package).
 */
import { parseProvides, parseRelations, type Relation, type RelationGroup } from '../deb/relations.js';
import { compareDebianVersions, isValidDebianVersion, parseDebianVersion, satisfiesRelation, type DebianVersion, type VersionRelation } from '../deb/version.js';
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
      this.remember(text, value);
    }
    return value;
  }
  peek(text: string): V | undefined {
    return this.map.get(text);
  }
  remember(text: string, value: V): void {
    if (this.map.size >= this.max) this.map.clear();
    this.map.set(text, value);
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

/** Whether a version is well-formed, by text (relations name the same few versions again and again). */
const validVersions = new TextMemo<boolean>(50_000);
/**
 * Relation groups read by parseRelationsFast, by text, shared between the fields that contain
 * them (read-only): most of a closure's fields repeat the same groups (`libc6 (>= 2.34)`,
 * `libqt5core5a (>= 5.15.1)`…). Reading each group once took kde-full's first resolution from
 * 11.2 to 8.7 MiB allocated, most of the difference parsed objects it then kept.
 */
const groupMemo = new TextMemo<RelationGroup>(50_000);

const isNameStart = (c: number) => (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39);
/** Package names: [a-z0-9][a-z0-9+.-]* (relations.ts' NAME). */
const isNameChar = (c: number) => isNameStart(c) || c === 0x2b || c === 0x2e || c === 0x2d;
/** Architecture qualifiers: [a-z0-9][a-z0-9-]* (relations.ts' ARCH_QUALIFIER). */
const isQualifierChar = (c: number) => isNameStart(c) || c === 0x2d;
const OPERATORS: ReadonlySet<string> = new Set(['<<', '<=', '>=', '>>', '=', '<', '>']);

/**
 * parseRelations for the shape binary packages' fields have: `name[:arch] [(op version)]`
 * alternatives joined by `|`, groups by `,`, printable ASCII and single spaces (so no
 * architecture restriction or build profile, which would not fit that shape). Gives the same
 * groups as parseRelations without its regular expressions (it was most of a first resolution's
 * time); for anything else (other whitespace, restrictions or profiles, an empty group, an invalid
 * name, qualifier, operator or version) it returns null and parseRelations reads the field, errors
 * included. The groups are shared with other fields that contain them (groupMemo): read-only.
 * Exported for the tests that hold the two equal.
 */
export function parseRelationsFast(field: string): RelationGroup[] | null {
  const n = field.length;
  if (n === 0 || n > 1024 * 1024 || field.charCodeAt(0) === 0x20 || field.charCodeAt(n - 1) === 0x20) return null;
  for (let i = 0; i < n; i++) {
    const c = field.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || (c === 0x20 && field.charCodeAt(i + 1) === 0x20)) return null;
  }
  const groups: RelationGroup[] = [];
  let at = 0;
  while (at <= n) {
    let end = field.indexOf(',', at);
    if (end === -1) end = n;
    // The group without the spaces around it (single spaces only, by the check above).
    let from = at;
    let to = end;
    if (field.charCodeAt(from) === 0x20) from++;
    if (to > from && field.charCodeAt(to - 1) === 0x20) to--;
    if (to <= from) return null;
    const text = field.slice(from, to);
    const known = groupMemo.peek(text);
    if (known !== undefined) {
      groups.push(known);
      at = end + 1;
      continue;
    }
    const alternatives: Relation[] = [];
    let alt = from;
    while (alt <= to) {
      let altEnd = field.indexOf('|', alt);
      if (altEnd === -1 || altEnd > to) altEnd = to;
      let a = alt;
      let b = altEnd;
      if (field.charCodeAt(a) === 0x20) a++;
      if (b > a && field.charCodeAt(b - 1) === 0x20) b--;
      const relation = parseAlternative(field, a, b);
      if (relation === null) return null;
      alternatives.push(relation);
      alt = altEnd + 1;
    }
    const group = { text, alternatives };
    groupMemo.remember(text, group);
    groups.push(group);
    at = end + 1;
  }
  return groups;
}

/** One alternative, `field[a, b)`, or null when parseRelation should read it. */
function parseAlternative(field: string, a: number, b: number): Relation | null {
  let i = a;
  if (i >= b || !isNameStart(field.charCodeAt(i))) return null;
  while (i < b && isNameChar(field.charCodeAt(i))) i++;
  const name = field.slice(a, i);
  let archQualifier: string | null = null;
  if (i < b && field.charCodeAt(i) === 0x3a /* : */) {
    const q = ++i;
    if (i >= b || !isNameStart(field.charCodeAt(i))) return null;
    while (i < b && isQualifierChar(field.charCodeAt(i))) i++;
    archQualifier = field.slice(q, i);
  }
  let constraint: Relation['constraint'] = null;
  if (i < b) {
    if (field.charCodeAt(i) === 0x20) i++;
    if (field.charCodeAt(i) !== 0x28 /* ( */) return null;
    i++;
    if (field.charCodeAt(i) === 0x20) i++;
    const o = i;
    while (i < b && (field.charCodeAt(i) === 0x3c || field.charCodeAt(i) === 0x3d || field.charCodeAt(i) === 0x3e)) i++;
    const op = field.slice(o, i);
    if (!OPERATORS.has(op)) return null;
    if (field.charCodeAt(i) === 0x20) i++;
    const v = i;
    while (i < b && field.charCodeAt(i) !== 0x20 && field.charCodeAt(i) !== 0x29 /* ) */) i++;
    const version = field.slice(v, i);
    if (version === '' || !validVersions.get(version, isValidDebianVersion)) return null;
    if (field.charCodeAt(i) === 0x20) i++;
    if (i !== b - 1 || field.charCodeAt(i) !== 0x29) return null;
    i = b;
    constraint = { op: op as VersionRelation, version };
  }
  if (i !== b) return null;
  return { name, archQualifier, constraint, archRestriction: null, profiles: null };
}

/**
 * Runs the relation and version parsers on these texts past their memos. For the resolver's
 * warm-up: after its first round the walk finds every text memoised, so the parsers themselves
 * would not run often enough to be compiled before a real catalog's new texts reach them.
 */
export function exerciseParsers(fields: readonly string[], versions: readonly string[]): void {
  for (const field of fields) relationFields.Depends.parse(field);
  for (const version of versions) {
    parseVersionOrKeep(version);
    isValidDebianVersion(version);
  }
}

/** Relation fields parsed once by text (an unreadable one keeps its error, thrown again). */
type ParsedField = RelationGroup[] | { error: unknown };
const fieldParser = (name: string) => (text: string): ParsedField => {
  try {
    return parseRelationsFast(text) ?? parseRelations(text, name);
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
