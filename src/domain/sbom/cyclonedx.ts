/**
 * CycloneDX 1.5 JSON (https://cyclonedx.org/docs/1.5/json/). Packages are `library` components
 * identified by their purl; what the payload embeds is nested under each package (`components`);
 * `dependencies` holds the package graph and each Go binary's module graph; `vulnerabilities`
 * has one entry per CVE and package (the review decision is per package, so is the analysis).
 */
import { analysisOf } from './analysis.js';
import { advisoryUrl, affectedInner, cvssMethod, distinctComponents, innerRef, vulnerabilityUrl, webUrl } from './common.js';
import { spdxLicense } from './license.js';
import type { DocumentPlan, InnerComponent, SbomMeta, SbomPackage, SbomVulnerability } from './model.js';

type Json = Record<string, unknown>;

const prop = (name: string, value: unknown) => ({ name, value: String(value) });

function licenses(text: string | null): Json[] | undefined {
  if (!text) return undefined;
  const expression = spdxLicense(text);
  return expression ? [{ expression }] : [{ license: { name: text } }];
}

function innerComponent(pkg: SbomPackage, c: InnerComponent): Json {
  const licence = licenses(c.license);
  return {
    type: 'library',
    'bom-ref': innerRef(pkg, c),
    ...(c.namespace ? { group: c.namespace } : {}),
    name: c.name,
    ...(c.version ? { version: c.version } : {}),
    ...(licence ? { licenses: licence } : {}),
    purl: c.purl,
    properties: [prop('tollgate:found_in', c.foundIn), prop('tollgate:ecosystem', c.ecosystem)],
  };
}

export function cyclonedxComponent(pkg: SbomPackage): Json {
  const homepage = webUrl(pkg.homepage);
  const inner = distinctComponents(pkg.components);
  const properties = [
    prop('tollgate:distribution', pkg.distribution),
    prop('tollgate:arch', pkg.arch),
    prop('tollgate:status', pkg.status),
    prop('tollgate:filename', pkg.filename),
    prop('tollgate:size', pkg.size),
  ];
  if (pkg.sourceName) properties.push(prop('tollgate:source_name', pkg.sourceName));
  if (pkg.sourceVersion) properties.push(prop('tollgate:source_version', pkg.sourceVersion));
  const licence = licenses(pkg.license);
  return {
    type: 'library',
    'bom-ref': pkg.ref,
    ...(pkg.supplier ? { supplier: { name: pkg.supplier } } : {}),
    name: pkg.name,
    version: pkg.version,
    ...(pkg.description || pkg.summary ? { description: pkg.description || pkg.summary } : {}),
    hashes: [{ alg: 'SHA-256', content: pkg.sha256 }],
    ...(licence ? { licenses: licence } : {}),
    purl: pkg.purl,
    ...(homepage ? { externalReferences: [{ type: 'website', url: homepage }] } : {}),
    properties,
    ...(inner.length ? { components: inner.map((c) => innerComponent(pkg, c)) } : {}),
  };
}

/** The package's edges, and each Go main module's edges to the modules it was built with. */
export function cyclonedxDependencies(pkg: SbomPackage): Json[] {
  const entries: Json[] = [{ ref: pkg.ref, dependsOn: [...new Set(pkg.dependsOn)] }];
  const inner = distinctComponents(pkg.components);
  for (const main of inner.filter((c) => c.role === 'main')) {
    const deps = inner.filter((c) => c.role === 'dependency' && c.foundIn === main.foundIn).map((c) => innerRef(pkg, c));
    entries.push({ ref: innerRef(pkg, main), dependsOn: deps });
  }
  return entries;
}

function rating(v: SbomVulnerability): Json {
  const severity = v.severity === 'negligible' ? (v.cvssScore === 0 ? 'none' : 'info') : v.severity;
  const method = cvssMethod(v.cvssVector);
  return {
    ...(v.cvssScore !== null ? { score: v.cvssScore } : {}),
    severity,
    method,
    ...(v.cvssVector && method !== 'other' ? { vector: v.cvssVector } : {}),
  };
}

export function cyclonedxVulnerabilities(pkg: SbomPackage): Json[] {
  return pkg.vulnerabilities.map((v) => {
    const inner = affectedInner(pkg, v);
    const analysis = analysisOf(pkg, v);
    const properties = [];
    if (v.epss !== null) properties.push(prop('tollgate:epss', v.epss));
    if (v.epssPercentile !== null) properties.push(prop('tollgate:epss_percentile', v.epssPercentile));
    if (v.inKev !== null) properties.push(prop('tollgate:cisa_kev', v.inKev));
    if (v.fixState) properties.push(prop('tollgate:fix_state', v.fixState));
    if (v.affectedComponent) properties.push(prop('tollgate:affected_component', v.affectedComponent));
    return {
      'bom-ref': `${pkg.ref}#${v.id}`,
      id: v.id,
      source: { name: /^CVE-/.test(v.id) ? 'NVD' : 'OSV', url: vulnerabilityUrl(v.id) },
      ...(v.advisoryId && v.advisoryId !== v.id ? { references: [{ id: v.advisoryId, source: { name: 'OSV', url: advisoryUrl(v.advisoryId) } }] } : {}),
      ratings: [rating(v)],
      ...(v.summary ? { description: v.summary } : {}),
      ...(v.fixedVersion ? { recommendation: `Upgrade to ${v.fixedVersion} or later` } : {}),
      advisories: [{ url: vulnerabilityUrl(v.id) }, ...(v.advisoryId && v.advisoryId !== v.id ? [{ url: advisoryUrl(v.advisoryId) }] : [])],
      ...(analysis ? { analysis } : {}),
      affects: [{
        ref: inner ? innerRef(pkg, inner) : pkg.ref,
        versions: [{ version: (inner?.version ?? v.installedVersion) || pkg.version, status: 'affected' }],
      }],
      ...(properties.length ? { properties } : {}),
    };
  });
}

/**
 * The document plan: `root` is the package a per-package SBOM is about (its metadata component,
 * its graph and its vulnerabilities lead); for a distribution export the root is the distribution
 * itself and every package comes through the sections.
 */
export function cyclonedxPlan(meta: SbomMeta, root: SbomPackage | null): DocumentPlan {
  const subject = meta.subject;
  const distributionRef = `distribution:${subject.distribution}`;
  const metadataComponent = root
    ? cyclonedxComponent(root)
    : { type: 'operating-system', 'bom-ref': distributionRef, name: subject.name, version: subject.version, description: subject.description };
  return {
    head: {
      $schema: 'http://cyclonedx.org/schema/bom-1.5.schema.json',
      bomFormat: 'CycloneDX',
      specVersion: '1.5',
      serialNumber: `urn:uuid:${meta.serial}`,
      version: 1,
      metadata: {
        timestamp: meta.timestamp,
        tools: { components: [{ type: 'application', name: 'tollgate', version: meta.toolVersion }] },
        component: metadataComponent,
        properties: [prop('tollgate:distribution', subject.distribution)],
      },
    },
    sections: [
      { key: 'components', items: (pkg) => [cyclonedxComponent(pkg)] },
      { key: 'dependencies', items: cyclonedxDependencies },
      { key: 'vulnerabilities', items: cyclonedxVulnerabilities },
    ],
    leading: root ? { dependencies: cyclonedxDependencies(root), vulnerabilities: cyclonedxVulnerabilities(root) } : {},
  };
}
