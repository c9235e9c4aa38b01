/**
 * Package relationship fields (Debian Policy §7.1): Depends, Pre-Depends, Recommends,
 * Suggests, Breaks, Conflicts, Provides, Replaces, Enhances.
 *
 *   Depends: libc6 (>= 2.34), python3:any | python3-minimal, default-mta | mail-transport-agent
 *
 * A field is a comma-separated list of groups; a group is a '|'-separated list of alternatives;
 * an alternative is `name[:archqual] [(op version)] [[arch list]] [<profiles>…]`. Architecture
 * restrictions and build profiles only matter in source packages: they are parsed and kept but
 * ignored when checking.
 */
import { PackageFormatError } from '../errors.js';
import { isValidDebianVersion, type VersionRelation } from './version.js';

/** One alternative of a relation group. */
export interface Relation {
  name: string;
  /** `any`, `native` or an architecture name, from `name:qualifier`. */
  archQualifier: string | null;
  /** Version constraint; the obsolete '<' and '>' are kept as written (they mean '<=' and '>='). */
  constraint: { op: VersionRelation; version: string } | null;
  /** `[amd64 !i386]` restriction list as written, without brackets (source packages only). */
  archRestriction: string | null;
  /** `<!nocheck> <stage1>` restriction formulas as written (source packages only). */
  profiles: string | null;
}

/** A comma-separated entry: satisfied when any alternative is. */
export interface RelationGroup {
  alternatives: Relation[];
  /** The group as written, whitespace normalised (used in messages). */
  text: string;
}

const NAME = /^[a-z0-9][a-z0-9+.-]*$/;
const ARCH_QUALIFIER = /^[a-z0-9][a-z0-9-]*$/;
const OPERATORS: readonly VersionRelation[] = ['<<', '<=', '>=', '>>', '=', '<', '>'];
const MAX_FIELD_LENGTH = 1024 * 1024;

/** Parses a relationship field; an empty or absent field gives []. Throws bad_control_field. */
export function parseRelations(field: string | null | undefined, fieldName = 'relation'): RelationGroup[] {
  if (field === null || field === undefined) return [];
  if (field.length > MAX_FIELD_LENGTH) throw new PackageFormatError('bad_control_field', `${fieldName} field is too long`);
  const flat = field.replace(/\s+/g, ' ').trim();
  if (flat === '') return [];
  return flat.split(',').map((groupText) => {
    const text = groupText.trim();
    if (text === '') throw new PackageFormatError('bad_control_field', `${fieldName}: empty entry in ${JSON.stringify(flat)}`);
    return { text, alternatives: text.split('|').map((alt) => parseRelation(alt.trim(), fieldName)) };
  });
}

/** Parses a single alternative, e.g. `libc6:amd64 (>= 2.34) [amd64] <!nocheck>`. */
export function parseRelation(text: string, fieldName = 'relation'): Relation {
  const fail = (why: string): never => {
    throw new PackageFormatError('bad_control_field', `${fieldName}: ${why} in ${JSON.stringify(text)}`);
  };
  const match = /^([^\s:(\[<]+)(?::([^\s(\[<]+))?\s*(?:\(\s*([<>=]+)\s*([^)\s]+)\s*\))?\s*(?:\[([^\]]*)\])?\s*((?:<[^>]*>\s*)*)$/.exec(text);
  if (!match) return fail('unparsable relation');
  const [, name = '', qualifier, op, version, archRestriction, profiles] = match;
  if (!NAME.test(name)) fail(`invalid package name ${JSON.stringify(name)}`);
  if (qualifier !== undefined && !ARCH_QUALIFIER.test(qualifier)) fail(`invalid architecture qualifier ${JSON.stringify(qualifier)}`);
  let constraint: Relation['constraint'] = null;
  if (op !== undefined) {
    if (!(OPERATORS as readonly string[]).includes(op)) fail(`unknown operator ${JSON.stringify(op)}`);
    if (version === undefined || !isValidDebianVersion(version)) fail(`invalid version ${JSON.stringify(version ?? '')}`);
    constraint = { op: op as VersionRelation, version: version ?? '' };
  }
  return {
    name,
    archQualifier: qualifier ?? null,
    constraint,
    archRestriction: archRestriction === undefined ? null : archRestriction.trim(),
    profiles: profiles === undefined || profiles.trim() === '' ? null : profiles.trim(),
  };
}

/** Writes one alternative back in canonical form (`name:qual (op version)`), restrictions dropped. */
export function formatRelation(relation: Relation): string {
  const qualifier = relation.archQualifier === null ? '' : `:${relation.archQualifier}`;
  const constraint = relation.constraint === null ? '' : ` (${relation.constraint.op} ${relation.constraint.version})`;
  return `${relation.name}${qualifier}${constraint}`;
}

/** One `Provides` entry: a virtual name, optionally with the exact version it provides. */
export interface ProvidedName {
  name: string;
  version: string | null;
}

/** Parses a Provides field: only plain names or `name (= version)` are allowed. */
export function parseProvides(field: string | null | undefined): ProvidedName[] {
  return parseRelations(field, 'Provides').map((group) => {
    const [only, ...more] = group.alternatives;
    if (only === undefined || more.length > 0) {
      throw new PackageFormatError('bad_control_field', `Provides: alternatives are not allowed in ${JSON.stringify(group.text)}`);
    }
    if (only.constraint !== null && only.constraint.op !== '=') {
      throw new PackageFormatError('bad_control_field', `Provides: only "=" versions are allowed in ${JSON.stringify(group.text)}`);
    }
    return { name: only.name, version: only.constraint?.version ?? null };
  });
}
