/**
 * Matching the software embedded in a package (npm modules, Python distributions, jars, Go
 * modules, crates: src/domain/sbom/inner) against the OSV advisories of their own ecosystems,
 * when the configured feeds carry them. Each component is looked up under its OSV
 * ecosystem and name and compared with that ecosystem's version order; a finding names the
 * component's purl in `affected_component` and its version in `installed_version`.
 *
 * Version orders implement what OSV `ECOSYSTEM`/`SEMVER` ranges need, not each ecosystem's full
 * grammar: SemVer 2.0 precedence (npm, crates.io, Go without its `v`), PEP 440 for the common
 * forms (release, a/b/rc, .post, .dev, epoch), Maven's ComparableVersion for numeric items and the
 * well-known qualifiers. A version a scheme cannot read is skipped, as the matcher skips them.
 */
import { evaluateAdvisory, findingFromAdvisory } from './matcher.js';
import { severityRank, type AdvisoryRow, type Finding } from './types.js';
import type { VersionScheme } from './version-scheme.js';

/** What the matcher needs of an embedded component (a subset of the SBOM's InnerComponent). */
export interface ComponentRef {
  ecosystem: string;
  namespace: string | null;
  name: string;
  version: string | null;
  purl: string;
}

const NUMERIC = /^\d+$/;
const cmp = (a: number, b: number) => (a < b ? -1 : a > b ? 1 : 0);

/** SemVer 2.0 precedence; build metadata ignored; a leading `v` (Go) accepted. */
export const SEMVER_SCHEME: VersionScheme = {
  name: 'semver',
  compare(a, b) {
    const parse = (v: string) => {
      const m = /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/.exec(v.trim());
      if (!m) throw new Error(`not a semver version: ${v}`);
      return { core: [Number(m[1]), Number(m[2]), Number(m[3])], pre: m[4] ? m[4].split('.') : [] };
    };
    const x = parse(a);
    const y = parse(b);
    for (let i = 0; i < 3; i++) if (x.core[i] !== y.core[i]) return cmp(x.core[i]!, y.core[i]!);
    // A pre-release sorts before its release.
    if (!x.pre.length || !y.pre.length) return cmp(y.pre.length, x.pre.length);
    for (let i = 0; i < Math.max(x.pre.length, y.pre.length); i++) {
      const p = x.pre[i];
      const q = y.pre[i];
      if (p === undefined || q === undefined) return p === undefined ? -1 : 1;
      if (p === q) continue;
      const pn = NUMERIC.test(p);
      const qn = NUMERIC.test(q);
      if (pn && qn) return cmp(Number(p), Number(q));
      if (pn !== qn) return pn ? -1 : 1;
      return p < q ? -1 : 1;
    }
    return 0;
  },
};

/** PEP 440 ordering of `[N!]N(.N)*[{a|b|rc}N][.postN][.devN]` (case-insensitive, common spellings). */
export const PEP440_SCHEME: VersionScheme = {
  name: 'pep440',
  compare(a, b) {
    const parse = (v: string) => {
      const m = /^v?(?:(\d+)!)?(\d+(?:\.\d+)*)(?:[-_.]?(a|alpha|b|beta|c|rc|pre|preview)[-_.]?(\d*))?(?:(?:[-_.]?(?:post|rev|r)[-_.]?(\d*))|-(\d+))?(?:[-_.]?dev[-_.]?(\d*))?(?:\+[a-z0-9.]+)?$/i.exec(v.trim());
      if (!m) throw new Error(`not a PEP 440 version: ${v}`);
      const phase = m[3] ? ({ a: 0, alpha: 0, b: 1, beta: 1 } as Record<string, number>)[m[3].toLowerCase()] ?? 2 : null;
      const post = m[5] !== undefined ? Number(m[5] || 0) : m[6] !== undefined ? Number(m[6]) : null;
      const dev = m[7] !== undefined ? Number(m[7] || 0) : null;
      // Sort keys as PEP 440 defines them: a dev release of a final version sorts before its pre-releases.
      const pre: [number, number] = phase !== null ? [phase, Number(m[4] || 0)] : post === null && dev !== null ? [-1, 0] : [3, 0];
      return { epoch: Number(m[1] ?? 0), release: m[2]!.split('.').map(Number), pre, post: post === null ? -1 : post, dev: dev === null ? Infinity : dev };
    };
    const x = parse(a);
    const y = parse(b);
    if (x.epoch !== y.epoch) return cmp(x.epoch, y.epoch);
    for (let i = 0; i < Math.max(x.release.length, y.release.length); i++) {
      const c = cmp(x.release[i] ?? 0, y.release[i] ?? 0);
      if (c) return c;
    }
    return cmp(x.pre[0], y.pre[0]) || cmp(x.pre[1], y.pre[1]) || cmp(x.post, y.post) || cmp(x.dev, y.dev);
  },
};

/** Maven qualifiers in ComparableVersion order; unknown ones sort after them, alphabetically. */
const MAVEN_QUALIFIERS = ['alpha', 'beta', 'milestone', 'rc', 'snapshot', '', 'sp'];
const MAVEN_ALIASES: Record<string, string> = { a: 'alpha', b: 'beta', m: 'milestone', cr: 'rc', ga: '', final: '', release: '' };

/** Maven ordering (ComparableVersion): numeric items numerically, qualifiers by their known order. */
export const MAVEN_SCHEME: VersionScheme = {
  name: 'maven',
  compare(a, b) {
    const items = (v: string) => v.trim().toLowerCase().split(/[.-]|(?<=\d)(?=[a-z])|(?<=[a-z])(?=\d)/).filter((s) => s !== '').map((s) => (NUMERIC.test(s) ? Number(s) : (MAVEN_ALIASES[s] ?? s)));
    const rank = (q: string) => {
      const i = MAVEN_QUALIFIERS.indexOf(q);
      return i >= 0 ? [i, ''] as const : [MAVEN_QUALIFIERS.length, q] as const;
    };
    // Trailing zeros and release qualifiers say nothing (1.0.0 = 1 = 1-ga), as Maven normalises them.
    const trim = (list: Array<number | string>) => {
      while (list.length && (list[list.length - 1] === 0 || list[list.length - 1] === '')) list.pop();
      return list;
    };
    const x = trim(items(a));
    const y = trim(items(b));
    for (let i = 0; i < Math.max(x.length, y.length); i++) {
      // Missing items compare as 0 (numbers) or the release qualifier "" (strings): 1.0 = 1 = 1-ga.
      const p = x[i] ?? (typeof y[i] === 'number' ? 0 : '');
      const q = y[i] ?? (typeof x[i] === 'number' ? 0 : '');
      if (typeof p === 'number' && typeof q === 'number') {
        if (p !== q) return cmp(p, q);
        continue;
      }
      // A number is newer than any qualifier (1.0.1 > 1.0-rc1).
      if (typeof p === 'number') return 1;
      if (typeof q === 'number') return -1;
      const [rp, sp] = rank(p);
      const [rq, sq] = rank(q);
      if (rp !== rq) return cmp(rp, rq);
      if (sp !== sq) return sp < sq ? -1 : 1;
    }
    return 0;
  },
};

/** Normalised PyPI project name (PEP 503): how both sides are compared. */
const pep503 = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '-');

interface ComponentEcosystem {
  osv: string;
  scheme: VersionScheme;
  /** Names the advisories may use for a component (looked up in the database). */
  names(c: ComponentRef): string[];
  /** True when `names` are PEP 503-normalised and must be compared with normalised advisory names. */
  normalised?: true;
  /** Whether an advisory's package name is this component. */
  same(advisoryName: string, c: ComponentRef): boolean;
}

const exact = (fullName: (c: ComponentRef) => string) => ({ names: (c: ComponentRef) => [fullName(c)], same: (n: string, c: ComponentRef) => n === fullName(c) });

/** Embedded-component ecosystem (src/domain/sbom/inner) → OSV ecosystem, name and version order. */
const ECOSYSTEMS: Record<string, ComponentEcosystem> = {
  npm: { osv: 'npm', scheme: SEMVER_SCHEME, ...exact((c) => (c.namespace ? `${c.namespace}/${c.name}` : c.name)) },
  golang: { osv: 'Go', scheme: SEMVER_SCHEME, ...exact((c) => c.name) },
  cargo: { osv: 'crates.io', scheme: SEMVER_SCHEME, ...exact((c) => c.name) },
  maven: { osv: 'Maven', scheme: MAVEN_SCHEME, ...exact((c) => `${c.namespace}:${c.name}`) },
  pypi: {
    osv: 'PyPI',
    scheme: PEP440_SCHEME,
    // Advisories spell the project as published (`PyYAML`), METADATA may not: both sides normalised.
    names: (c) => [pep503(c.name)],
    normalised: true,
    same: (n, c) => pep503(n) === pep503(c.name),
  },
};

/** The OSV ecosystem of an embedded component and the names to look it up by; null when not matched. */
export function componentLookup(c: ComponentRef): { ecosystem: string; names: string[]; normalised: boolean } | null {
  const e = ECOSYSTEMS[c.ecosystem];
  if (!e || !c.version) return null;
  return { ecosystem: e.osv, names: e.names(c), normalised: e.normalised === true };
}

/** The OSV ecosystems embedded components can be matched in. */
export const COMPONENT_OSV_ECOSYSTEMS: readonly string[] = Object.values(ECOSYSTEMS).map((e) => e.osv);

/**
 * Findings of the embedded components, one per CVE (the worst-severity component wins, then the
 * first listed), leaving out CVEs in `skip` (already reported against the package itself).
 */
export function matchComponents(components: readonly ComponentRef[], rows: Iterable<AdvisoryRow>, skip: ReadonlySet<string> = new Set()): Finding[] {
  const osvNormalised = new Set(Object.values(ECOSYSTEMS).filter((e) => e.normalised).map((e) => e.osv));
  const index = new Map<string, AdvisoryRow[]>();
  for (const row of rows) {
    const key = `${row.ecosystem}\u0000${osvNormalised.has(row.ecosystem) ? pep503(row.package_name) : row.package_name}`;
    index.set(key, [...(index.get(key) ?? []), row]);
  }
  const byCve = new Map<string, Finding>();
  const seen = new Set<string>();
  for (const c of components) {
    const e = ECOSYSTEMS[c.ecosystem];
    if (!e || !c.version || seen.has(c.purl)) continue;
    seen.add(c.purl);
    for (const name of e.names(c)) {
      for (const row of index.get(`${e.osv}\u0000${name}`) ?? []) {
        if (row.ecosystem !== e.osv || !e.same(row.package_name, c)) continue;
        // The component as this ecosystem's version order reads it (Go versions keep their `v`).
        const verdict = evaluateAdvisory(e.scheme, c.version, row);
        if (!verdict) continue;
        for (const cve of row.cve_ids.length > 0 ? row.cve_ids : [row.id]) {
          if (skip.has(cve)) continue;
          const finding = findingFromAdvisory(row, cve, verdict, c.purl, c.version);
          const existing = byCve.get(cve);
          if (!existing || severityRank(finding.severity) > severityRank(existing.severity)) byCve.set(cve, finding);
        }
      }
    }
  }
  return [...byCve.values()];
}
