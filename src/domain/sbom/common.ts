/** Small helpers shared by the CycloneDX, SPDX and SARIF builders. */
import type { InnerComponent, SbomPackage, SbomVulnerability } from './model.js';

/** An http(s) URL or null: schema validators check `iri-reference`, and package metadata is free text. */
export function webUrl(text: string | null | undefined): string | null {
  if (!text) return null;
  try {
    const url = new URL(text.trim());
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

/** Where a vulnerability id is described. */
export function vulnerabilityUrl(id: string): string {
  return /^CVE-\d{4}-\d+$/.test(id) ? `https://nvd.nist.gov/vuln/detail/${id}` : `https://osv.dev/vulnerability/${encodeURIComponent(id)}`;
}

export function advisoryUrl(id: string): string {
  return `https://osv.dev/vulnerability/${encodeURIComponent(id)}`;
}

/** CycloneDX rating method of a CVSS vector. */
export function cvssMethod(vector: string | null): 'CVSSv2' | 'CVSSv3' | 'CVSSv31' | 'CVSSv4' | 'other' {
  if (!vector) return 'other';
  if (vector.startsWith('CVSS:4.0/')) return 'CVSSv4';
  if (vector.startsWith('CVSS:3.1/')) return 'CVSSv31';
  if (vector.startsWith('CVSS:3.0/')) return 'CVSSv3';
  if (/^AV:[LAN]\//.test(vector)) return 'CVSSv2';
  return 'other';
}

/** A score for severity-only findings (GitHub's `security-severity` bands: 9+, 7+, 4+, 0.1+). */
export function representativeScore(v: Pick<SbomVulnerability, 'cvssScore' | 'severity'>): number {
  if (v.cvssScore !== null && Number.isFinite(v.cvssScore)) return v.cvssScore;
  return ({ critical: 9.5, high: 8.0, medium: 5.5, low: 2.0 } as Record<string, number>)[v.severity] ?? 0;
}

/** The document reference of an inner component: unique per package, the same component in two packages differs. */
export function innerRef(pkg: Pick<SbomPackage, 'ref'>, c: Pick<InnerComponent, 'purl' | 'foundIn'>): string {
  return `${pkg.ref}|${c.purl}`;
}

/**
 * Inner components without repeats: a module found twice (two node_modules folders) is listed
 * once, at the first place it was found.
 */
export function distinctComponents(components: readonly InnerComponent[]): readonly InnerComponent[] {
  // Called several times per package: a short list without repeats (the usual case) is returned as it is.
  if (components.length <= 16 && components.every((c, i) => components.findIndex((o) => o.purl === c.purl) === i)) return components;
  const seen = new Set<string>();
  return components.filter((c) => (seen.has(c.purl) ? false : (seen.add(c.purl), true)));
}

/** The component a finding names, when it is an inner component (matched by purl or name). */
export function affectedInner(pkg: SbomPackage, v: SbomVulnerability): InnerComponent | null {
  if (!v.affectedComponent) return null;
  return distinctComponents(pkg.components).find((c) => c.purl === v.affectedComponent || c.name === v.affectedComponent) ?? null;
}
