/**
 * Package URLs (https://github.com/package-url/purl-spec): `pkg:type/namespace/name@version?qualifiers#subpath`.
 * Each component is percent-encoded except the unreserved characters; the colon stays literal
 * (the spec: "unambiguous unencoded everywhere"), so a Debian epoch reads `1:2.3-1`, while `+`
 * becomes `%2B` as every purl implementation expects. Qualifier keys are lower case and sorted;
 * empty qualifier values are dropped.
 */
import type { Distribution } from '../distributions.js';

export interface PurlParts {
  type: string;
  namespace?: string | null;
  name: string;
  version?: string | null;
  qualifiers?: Record<string, string | number | null | undefined>;
  subpath?: string | null;
}

/** Characters no component encodes (encodeURIComponent's unreserved set less `!'()*`): most names and versions are only these. */
const PLAIN = /^[A-Za-z0-9._~-]*$/;
const encode = (text: string): string =>
  PLAIN.test(text) ? text : encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).replace(/%3A/g, ':');

export function purl(parts: PurlParts): string {
  let out = `pkg:${parts.type.toLowerCase()}/`;
  if (parts.namespace) out += parts.namespace.includes('/') ? `${parts.namespace.split('/').filter(Boolean).map(encode).join('/')}/` : `${encode(parts.namespace)}/`;
  out += encode(parts.name);
  if (parts.version) out += `@${encode(parts.version)}`;
  // Every package and dependency edge of an export has a purl: built without intermediate arrays of entries.
  const qualifiers: Array<[string, string]> = [];
  for (const key of Object.keys(parts.qualifiers ?? {})) {
    const value = parts.qualifiers![key];
    if (value !== null && value !== undefined && value !== '') qualifiers.push([key.toLowerCase(), String(value)]);
  }
  if (qualifiers.length > 1) qualifiers.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (let i = 0; i < qualifiers.length; i++) out += `${i === 0 ? '?' : '&'}${qualifiers[i]![0]}=${encode(qualifiers[i]![1])}`;
  if (parts.subpath) out += `#${parts.subpath.split('/').filter((s) => s && s !== '.' && s !== '..').map(encode).join('/')}`;
  return out;
}

/** The purl namespace (vendor) of a distribution's packages. */
export function vendorOf(dist: Pick<Distribution, 'scannerDistro'>): string {
  const id = dist.scannerDistro.split(/[:/]/, 1)[0]!;
  return id === 'rockylinux' ? 'rocky' : id;
}

/**
 * The `distro` qualifier: the codename for APT distributions (the spec's `distro=jessie`), the
 * vendor and release for RPM ones (`distro=fedora-42`, `rocky-9`).
 */
export function distroQualifier(dist: Pick<Distribution, 'codename' | 'format' | 'scannerDistro'>): string {
  if (dist.format === 'deb') return dist.codename;
  const release = dist.scannerDistro.slice(dist.scannerDistro.lastIndexOf(':') + 1);
  return `${vendorOf(dist)}-${release}`;
}

/** `pkg:deb/debian/curl@7.50.3-1?arch=amd64&distro=bookworm`: the epoch stays in the version. */
export function debPurl(pkg: { name: string; version: string; arch: string }, dist: Pick<Distribution, 'codename' | 'format' | 'scannerDistro'>): string {
  return purl({ type: 'deb', namespace: vendorOf(dist), name: pkg.name, version: pkg.version, qualifiers: { arch: pkg.arch, distro: distroQualifier(dist) } });
}

/** `pkg:rpm/rocky/curl@7.76.1-26.el9?arch=x86_64&distro=rocky-9&epoch=1`: the epoch is a qualifier. */
export function rpmPurl(pkg: { name: string; version: string; arch: string }, dist: Pick<Distribution, 'codename' | 'format' | 'scannerDistro'>): string {
  const m = /^(\d+):(.*)$/.exec(pkg.version);
  return purl({
    type: 'rpm', namespace: vendorOf(dist), name: pkg.name, version: m ? m[2]! : pkg.version,
    qualifiers: { arch: pkg.arch, distro: distroQualifier(dist), epoch: m ? m[1] : null },
  });
}

export function packagePurl(pkg: { format: string; name: string; version: string; arch: string }, dist: Pick<Distribution, 'codename' | 'format' | 'scannerDistro'>): string {
  return pkg.format === 'rpm' ? rpmPurl(pkg, dist) : debPurl(pkg, dist);
}
