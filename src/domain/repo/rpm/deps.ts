/**
 * Which dependency entries primary.xml lists, and how, following createrepo_c's rules:
 * rpmlib() requires are dropped, requires on the package's own "primary" files are dropped,
 * requires identical to one of its provides are dropped, consecutive duplicates are dropped,
 * only the highest libc.so.6(...) require is kept (listed last), and legacy MISSINGOK requires
 * become recommends. `pre="1"` marks requires needed by scriptlets.
 */
import type { RpmDependency, RpmPackage } from '../../rpm/package.js';
import { rpmvercmp } from '../../rpm/vercmp.js';
import { PRE_MASK, Sense } from '../../rpm/tags.js';

/** One `<rpm:entry>` as createrepo_c writes it. */
export interface PrimaryDependency {
  name: string;
  /** LT, GT, EQ, LE, GE; undefined when unversioned. */
  flags?: 'LT' | 'GT' | 'EQ' | 'LE' | 'GE';
  epoch?: string;
  ver?: string;
  rel?: string;
  pre: boolean;
}

/** The dependency lists of primary.xml, in the order createrepo_c writes them. */
export interface PrimaryDependencies {
  provides: PrimaryDependency[];
  requires: PrimaryDependency[];
  conflicts: PrimaryDependency[];
  obsoletes: PrimaryDependency[];
  suggests: PrimaryDependency[];
  enhances: PrimaryDependency[];
  recommends: PrimaryDependency[];
  supplements: PrimaryDependency[];
}

/** Files that primary.xml lists (the rest only appear in filelists.xml). */
export function isPrimaryFile(path: string): boolean {
  return path.startsWith('/etc/') || path === '/usr/lib/sendmail' || path.includes('bin/');
}

/** The comparison flag name for the low four bits, as createrepo_c maps them. */
export function flagName(flags: number): PrimaryDependency['flags'] {
  switch (flags & 0xf) {
    case Sense.LESS:
      return 'LT';
    case Sense.GREATER:
      return 'GT';
    case Sense.EQUAL:
      return 'EQ';
    case Sense.LESS | Sense.EQUAL:
      return 'LE';
    case Sense.GREATER | Sense.EQUAL:
      return 'GE';
    default:
      return undefined;
  }
}

/**
 * Splits a dependency EVR the createrepo_c way (release after the FIRST '-', epoch "0" when
 * absent). Returns null for a non-numeric epoch: createrepo_c drops such a dependency.
 */
export function splitDependencyEvr(evr: string): { epoch?: string; ver?: string; rel?: string } | null {
  if (evr === '') return {};
  let epoch: string | undefined;
  let rest = evr;
  const colon = evr.indexOf(':');
  if (colon >= 0) {
    const head = evr.slice(0, colon);
    // strtol() semantics: optional blanks and sign, then digits, must end right at ':'.
    if (head !== '' && !/^\s*[+-]?\d+$/.test(head)) return null;
    if (head !== '') epoch = head;
    rest = evr.slice(colon + 1);
  }
  epoch ??= '0';
  const dash = rest.indexOf('-');
  if (dash < 0) return { epoch, ver: rest };
  const rel = rest.slice(dash + 1);
  return { epoch, ver: rest.slice(0, dash), ...(rel !== '' ? { rel } : {}) };
}

function toEntry(dep: RpmDependency, pre: boolean): PrimaryDependency | null {
  const parts = splitDependencyEvr(dep.evr);
  if (parts === null) return null;
  const flags = flagName(dep.flags);
  return {
    name: dep.name,
    ...(flags ? { flags } : {}),
    ...(parts.epoch ? { epoch: parts.epoch } : {}),
    ...(parts.ver ? { ver: parts.ver } : {}),
    ...(parts.rel ? { rel: parts.rel } : {}),
    pre,
  };
}

/** Orders libc.so.6(...) requires by the version in the first parentheses; > 0 when `a` is higher. */
function compareLibcRequire(a: string, b: string): number {
  const versionOf = (s: string): string | null | undefined => {
    const open = s.indexOf('(');
    if (open < 0) return undefined; // no parentheses: lowest
    const close = s.indexOf(')', open);
    if (close < 0) return undefined;
    if (close === open + 1) return null; // "()": lowest among versioned ones
    let digit = open + 1;
    while (digit < s.length && !(s[digit]! >= '0' && s[digit]! <= '9')) digit++;
    if (digit > close) return null;
    return s.slice(digit, close);
  };
  const va = versionOf(a);
  const vb = versionOf(b);
  if (va === vb) return 0;
  if (va === undefined) return -1;
  if (vb === undefined) return 1;
  if (va === null) return -1;
  if (vb === null) return 1;
  return rpmvercmp(va, vb);
}

/** Computes the dependency lists primary.xml shows for a package. */
export function primaryDependencies(pkg: Pick<RpmPackage, 'files' | 'provides' | 'requires' | 'conflicts' | 'obsoletes' | 'suggests' | 'enhances' | 'recommends' | 'supplements'>): PrimaryDependencies {
  const key = (d: RpmDependency): string => `${d.name}\0${flagName(d.flags) ?? ''}\0${d.evr}`;
  const convert = (deps: readonly RpmDependency[]): PrimaryDependency[] =>
    deps.flatMap((d) => toEntry(d, false) ?? []);

  const provided = new Set(pkg.provides.map(key));
  const files = new Set(pkg.files.map((f) => f.path));
  const requires: PrimaryDependency[] = [];
  const legacyRecommends: PrimaryDependency[] = [];
  // Last kept require per name, for the duplicate check.
  const lastByName = new Map<string, { flags: string; evr: string; pre: boolean }>();
  let libc: PrimaryDependency | null = null;

  for (const dep of pkg.requires) {
    if (dep.name.startsWith('rpmlib(')) continue;
    if (dep.name.startsWith('/') && files.has(dep.name) && isPrimaryFile(dep.name)) continue;
    if (provided.has(key(dep))) continue;
    const pre = (dep.flags & PRE_MASK) !== 0;
    const flags = flagName(dep.flags) ?? '';
    const last = lastByName.get(dep.name);
    if (last && last.flags === flags && last.evr === dep.evr && last.pre === pre) continue;
    const entry = toEntry(dep, pre);
    if (!entry) continue;
    if (dep.flags & Sense.MISSINGOK) {
      legacyRecommends.push({ ...entry, pre: false });
      continue;
    }
    if (dep.name.startsWith('libc.so.6')) {
      if (!libc || compareLibcRequire(dep.name, libc.name) > 0) libc = entry;
      continue;
    }
    requires.push(entry);
    lastByName.set(dep.name, { flags, evr: dep.evr, pre });
  }
  if (libc) requires.push(libc);

  return {
    provides: convert(pkg.provides),
    requires,
    conflicts: convert(pkg.conflicts),
    obsoletes: convert(pkg.obsoletes),
    suggests: convert(pkg.suggests),
    enhances: convert(pkg.enhances),
    // createrepo_c handles requires before recommends, so the legacy ones come first.
    recommends: [...legacyRecommends, ...convert(pkg.recommends)],
    supplements: convert(pkg.supplements),
  };
}
