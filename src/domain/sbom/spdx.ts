/**
 * SPDX 2.3 JSON (https://spdx.github.io/spdx-spec/v2.3/). Every package and every embedded
 * component is a `packages` entry with its purl as a PACKAGE-MANAGER reference; the document
 * DESCRIBES its root (the package, or the distribution as an OPERATING-SYSTEM package that
 * CONTAINS every package); packages CONTAIN their embedded components and DEPEND_ON the packages
 * they need. Vulnerabilities are SECURITY external references (`advisory`, `url`) on the affected
 * package, with severity, CVSS, EPSS, KEV and the review analysis in the reference comment.
 */
import * as crypto from 'node:crypto';
import { analysisOf, analysisText } from './analysis.js';
import { advisoryUrl, affectedInner, distinctComponents, innerRef, vulnerabilityUrl, webUrl } from './common.js';
import { licenseRefId, spdxLicense } from './license.js';
import type { DocumentPlan, InnerComponent, SbomMeta, SbomPackage, SbomVulnerability } from './model.js';

type Json = Record<string, unknown>;

export const DOCUMENT_ID = 'SPDXRef-DOCUMENT';

/** One-shot digest (Node ≥ 20.12) rather than a Hash object per id: an export computes several per package. */
const sha256Hex: (text: string) => string = typeof crypto.hash === 'function'
  ? (text) => crypto.hash('sha256', text, 'hex')
  : (text) => crypto.createHash('sha256').update(text).digest('hex');

/** SPDXIDs allow letters, digits, `.` and `-`: a readable slug plus a digest of the ref keeps them unique. */
export function spdxId(ref: string, label: string): string {
  const slug = label.replace(/[^A-Za-z0-9.-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 80);
  return `SPDXRef-${slug}-${sha256Hex(ref).slice(0, 12)}`;
}

/**
 * Ids just computed, by what they are computed from: a package's id is written in its entry, its
 * relationships and the next packages' edges, an embedded component's in its entry and its
 * relationships. A document comes package by package, so only recent ids repeat; kept few, the
 * entries die young instead of piling up in V8's old space (4,096 of them added ~35 MiB there per
 * SPDX export).
 */
const ids = new Map<string, string>();
function memoId(key: string, make: () => string): string {
  let id = ids.get(key);
  if (id === undefined) {
    if (ids.size >= 64) ids.clear();
    ids.set(key, (id = make()));
  }
  return id;
}

/** Derived from the ref alone, so a package known only as a dependency edge gets the same id. */
export const packageSpdxId = (pkg: Pick<SbomPackage, 'ref'>) => dependencyId(pkg.ref);
const innerSpdxId = (pkg: SbomPackage, c: InnerComponent) => {
  const ref = innerRef(pkg, c);
  const label = `${c.ecosystem}-${c.name}-${c.version ?? ''}`;
  return memoId(`${label} ${ref}`, () => spdxId(ref, label));
};

/** The licence as SPDX writes it, and the LicenseRef it needs extracted text for (free-text licences). */
function declared(text: string | null): { value: string; ref: { id: string; text: string } | null } {
  if (!text) return { value: 'NOASSERTION', ref: null };
  const expression = spdxLicense(text);
  if (expression) return { value: expression, ref: null };
  const id = licenseRefId(text);
  return { value: id, ref: { id, text } };
}

/** LicenseRefs an expression uses (Debian copyright names outside the SPDX list arrive as LicenseRefs). */
function refsIn(expression: string): string[] {
  return expression.match(/LicenseRef-[A-Za-z0-9.-]+/g) ?? [];
}

function securityRefs(pkg: SbomPackage, v: SbomVulnerability): Json[] {
  const analysis = analysisOf(pkg, v);
  const facts = [
    `severity ${v.severity}`,
    v.cvssScore !== null ? `CVSS ${v.cvssScore}${v.cvssVector ? ` (${v.cvssVector})` : ''}` : null,
    v.epss !== null ? `EPSS ${v.epss}${v.epssPercentile !== null ? ` (percentile ${v.epssPercentile})` : ''}` : null,
    v.inKev === null ? null : v.inKev ? 'in CISA KEV' : 'not in CISA KEV',
    v.fixedVersion ? `fixed in ${v.fixedVersion}` : v.fixState ? `fix state ${v.fixState}` : null,
    `analysis: ${analysisText(analysis)}`,
  ].filter(Boolean).join('; ');
  const refs: Json[] = [{ referenceCategory: 'SECURITY', referenceType: 'advisory', referenceLocator: vulnerabilityUrl(v.id), comment: `${v.id}: ${facts}` }];
  if (v.advisoryId && v.advisoryId !== v.id) {
    refs.push({ referenceCategory: 'SECURITY', referenceType: 'url', referenceLocator: advisoryUrl(v.advisoryId), comment: `${v.advisoryId} (${v.id})` });
  }
  return refs;
}

function innerPackage(pkg: SbomPackage, c: InnerComponent): Json {
  const licence = declared(c.license);
  const refs: Json[] = [{ referenceCategory: 'PACKAGE-MANAGER', referenceType: 'purl', referenceLocator: c.purl }];
  for (const v of pkg.vulnerabilities) if (affectedInner(pkg, v) === c) refs.push(...securityRefs(pkg, v));
  return {
    SPDXID: innerSpdxId(pkg, c),
    name: c.namespace ? `${c.namespace}/${c.name}` : c.name,
    ...(c.version ? { versionInfo: c.version } : {}),
    supplier: 'NOASSERTION',
    downloadLocation: 'NOASSERTION',
    filesAnalyzed: false,
    licenseConcluded: 'NOASSERTION',
    licenseDeclared: licence.value,
    copyrightText: 'NOASSERTION',
    sourceInfo: `found in ${c.foundIn}`,
    externalRefs: refs,
    primaryPackagePurpose: c.role === 'main' ? 'APPLICATION' : 'LIBRARY',
  };
}

export function spdxPackages(pkg: SbomPackage): Json[] {
  const licence = declared(pkg.license);
  const homepage = webUrl(pkg.homepage);
  const inner = distinctComponents(pkg.components);
  const refs: Json[] = [{ referenceCategory: 'PACKAGE-MANAGER', referenceType: 'purl', referenceLocator: pkg.purl }];
  for (const v of pkg.vulnerabilities) if (!affectedInner(pkg, v)) refs.push(...securityRefs(pkg, v));
  const main: Json = {
    SPDXID: packageSpdxId(pkg),
    name: pkg.name,
    versionInfo: pkg.version,
    packageFileName: pkg.filename,
    supplier: pkg.supplier ? `Organization: ${pkg.supplier.replace(/[\r\n]+/g, ' ')}` : 'NOASSERTION',
    downloadLocation: 'NOASSERTION',
    filesAnalyzed: false,
    checksums: [{ algorithm: 'SHA256', checksumValue: pkg.sha256 }],
    ...(homepage ? { homepage } : {}),
    ...(pkg.sourceName ? { sourceInfo: `built from source package ${pkg.sourceName}${pkg.sourceVersion ? ` ${pkg.sourceVersion}` : ''}` } : {}),
    licenseConcluded: 'NOASSERTION',
    licenseDeclared: licence.value,
    copyrightText: 'NOASSERTION',
    ...(pkg.summary ? { summary: pkg.summary } : {}),
    ...(pkg.description ? { description: pkg.description } : {}),
    externalRefs: refs,
    primaryPackagePurpose: 'INSTALL',
  };
  return [main, ...inner.map((c) => innerPackage(pkg, c))];
}

export function spdxRelationships(pkg: SbomPackage): Json[] {
  const id = packageSpdxId(pkg);
  const inner = distinctComponents(pkg.components);
  const out: Json[] = inner.map((c) => ({ spdxElementId: id, relationshipType: 'CONTAINS', relatedSpdxElement: innerSpdxId(pkg, c) }));
  for (const main of inner.filter((c) => c.role === 'main')) {
    for (const dep of inner.filter((c) => c.role === 'dependency' && c.foundIn === main.foundIn)) {
      out.push({ spdxElementId: innerSpdxId(pkg, main), relationshipType: 'DEPENDS_ON', relatedSpdxElement: innerSpdxId(pkg, dep) });
    }
  }
  for (const ref of new Set(pkg.dependsOn)) {
    out.push({ spdxElementId: id, relationshipType: 'DEPENDS_ON', relatedSpdxElement: dependencyId(ref) });
  }
  return out;
}

/** The SPDXID of a package ref (a purl): a readable name-version slug and a digest of the whole ref. */
export function dependencyId(ref: string): string {
  return memoId(ref, () => {
    const m = /^pkg:[^/]+\/(?:[^/]+\/)*([^/@?#]+)@([^?#]+)/.exec(ref);
    const name = m ? decodeURIComponent(m[1]!) : ref;
    const version = m ? decodeURIComponent(m[2]!) : '';
    return spdxId(ref, `Package-${name}-${version}`);
  });
}

/** LicenseRefs the package uses, each with its text; `seen` keeps them unique across the document. */
function extractedLicences(pkg: SbomPackage, seen: Set<string>): Json[] {
  const out: Json[] = [];
  const add = (id: string, text: string) => {
    if (seen.has(id)) return;
    seen.add(id);
    out.push({ licenseId: id, extractedText: text, name: text.slice(0, 200) });
  };
  for (const text of [pkg.license, ...pkg.components.map((c) => c.license)]) {
    if (!text) continue;
    const d = declared(text);
    if (d.ref) add(d.ref.id, d.ref.text);
    else for (const id of refsIn(d.value)) add(id, `Licence named ${id.replace(/^LicenseRef-|-[0-9a-f]+$/g, '')} in the package's copyright file`);
  }
  return out;
}

export function spdxPlan(meta: SbomMeta, root: SbomPackage | null): DocumentPlan {
  const subject = meta.subject;
  const seen = new Set<string>();
  const rootId = root ? packageSpdxId(root) : spdxId(`distribution:${subject.distribution}`, `Distribution-${subject.distribution}`);
  const rootPackages = root
    ? spdxPackages(root)
    : [{
      SPDXID: rootId, name: subject.name, versionInfo: subject.version, supplier: 'NOASSERTION', downloadLocation: 'NOASSERTION',
      filesAnalyzed: false, licenseConcluded: 'NOASSERTION', licenseDeclared: 'NOASSERTION', copyrightText: 'NOASSERTION',
      description: subject.description, primaryPackagePurpose: 'OPERATING-SYSTEM',
    }];
  const describes = { spdxElementId: DOCUMENT_ID, relationshipType: 'DESCRIBES', relatedSpdxElement: rootId };
  return {
    head: {
      spdxVersion: 'SPDX-2.3',
      dataLicense: 'CC0-1.0',
      SPDXID: DOCUMENT_ID,
      name: root ? `${root.name}-${root.version}-${root.arch}` : `${subject.distribution}-packages`,
      documentNamespace: `${meta.namespaceBase.replace(/\/+$/, '')}/spdx/${encodeURIComponent(subject.distribution)}/${encodeURIComponent(subject.name)}-${meta.serial}`,
      creationInfo: { created: meta.timestamp.replace(/\.\d+Z$/, 'Z'), creators: [`Tool: tollgate-${meta.toolVersion}`] },
      documentDescribes: [rootId],
    },
    sections: [
      { key: 'packages', items: spdxPackages },
      { key: 'relationships', items: (pkg) => (root ? spdxRelationships(pkg) : [{ spdxElementId: rootId, relationshipType: 'CONTAINS', relatedSpdxElement: packageSpdxId(pkg) }, ...spdxRelationships(pkg)]) },
      { key: 'hasExtractedLicensingInfos', items: (pkg) => extractedLicences(pkg, seen) },
    ],
    leading: {
      packages: rootPackages,
      relationships: root ? [describes, ...spdxRelationships(root)] : [describes],
      hasExtractedLicensingInfos: root ? extractedLicences(root, seen) : [],
    },
  };
}
