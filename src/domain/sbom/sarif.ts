/**
 * SARIF 2.1.0 (OASIS) for code scanning: one rule per CVE (help text, CVSS as the
 * `security-severity` property GitHub ranks by), one result per affected package, located by the
 * package's purl (logical location) and its path in the published tree (physical location: GitHub
 * and GitLab refuse results without one). Findings a review accepted are reported with an
 * accepted external suppression, not dropped, so the log still says they exist.
 */
import { createHash } from 'node:crypto';
import { analysisOf, analysisText, decisionFor } from './analysis.js';
import { cvssMethod, representativeScore, vulnerabilityUrl } from './common.js';
import type { SbomPackage, SbomVulnerability } from './model.js';

type Json = Record<string, unknown>;

export type SarifPackage = Pick<SbomPackage, 'purl' | 'name' | 'version' | 'arch' | 'distribution' | 'status' | 'vulnerabilities' | 'decision'> & { poolPath: string };

const LEVEL: Record<string, 'error' | 'warning' | 'note'> = { critical: 'error', high: 'error', medium: 'warning', low: 'note', negligible: 'note' };

function rule(v: SbomVulnerability): Json {
  const score = representativeScore(v);
  const lines = [
    `${v.id}: ${v.summary || 'no summary published'}`,
    `Severity: ${v.severity}${v.cvssScore !== null ? `, CVSS ${v.cvssScore}` : ''}${v.cvssVector ? ` (${v.cvssVector})` : ''}.`,
    v.epss !== null ? `EPSS: ${v.epss}.` : null,
    v.inKev ? 'Listed in the CISA Known Exploited Vulnerabilities catalogue.' : null,
    `Details: ${vulnerabilityUrl(v.id)}`,
  ].filter(Boolean) as string[];
  return {
    id: v.id,
    name: v.id.replace(/[^A-Za-z0-9]/g, ''),
    shortDescription: { text: `${v.id} (${v.severity})` },
    fullDescription: { text: v.summary || v.id },
    helpUri: vulnerabilityUrl(v.id),
    help: { text: lines.join('\n'), markdown: lines.map((l) => `- ${l}`).join('\n') },
    defaultConfiguration: { level: LEVEL[v.severity] ?? 'warning' },
    properties: {
      'security-severity': score.toFixed(1),
      tags: ['security', 'vulnerability', v.severity],
      ...(v.cvssVector ? { cvss_vector: v.cvssVector, cvss_method: cvssMethod(v.cvssVector) } : {}),
    },
  };
}

function result(pkg: SarifPackage, v: SbomVulnerability, ruleIndex: number): Json {
  const decision = decisionFor(pkg, v.id);
  const accepted = decision && (decision.action === 'accept_risk' || decision.action === 'exception');
  const fix = v.fixedVersion ? ` Fixed in ${v.fixedVersion}.` : '';
  return {
    ruleId: v.id,
    ruleIndex,
    level: LEVEL[v.severity] ?? 'warning',
    message: { text: `${pkg.name} ${pkg.version} (${pkg.arch}, ${pkg.distribution}) is affected by ${v.id} (${v.severity}) through ${v.affectedComponent ?? pkg.name} ${v.installedVersion ?? pkg.version}.${fix}` },
    locations: [{
      physicalLocation: { artifactLocation: { uri: pkg.poolPath }, region: { startLine: 1 } },
      logicalLocations: [{ name: pkg.purl, fullyQualifiedName: pkg.purl, kind: 'package' }],
    }],
    partialFingerprints: { 'tollgatePackageFinding/v1': createHash('sha256').update(`${pkg.purl} ${v.id}`).digest('hex') },
    ...(accepted ? { suppressions: [{ kind: 'external', status: 'accepted', justification: analysisText(analysisOf(pkg, v)) }] } : {}),
    properties: {
      purl: pkg.purl,
      status: pkg.status,
      analysis: analysisText(analysisOf(pkg, v)),
      ...(v.epss !== null ? { epss: v.epss } : {}),
      ...(v.inKev !== null ? { cisa_kev: v.inKev } : {}),
    },
  };
}

export function sarifLog(packages: readonly SarifPackage[], toolVersion: string, informationUri: string): Json {
  const rules: Json[] = [];
  const index = new Map<string, number>();
  const results: Json[] = [];
  for (const pkg of packages) {
    for (const v of pkg.vulnerabilities) {
      let at = index.get(v.id);
      if (at === undefined) {
        at = rules.length;
        index.set(v.id, at);
        rules.push(rule(v));
      }
      results.push(result(pkg, v, at));
    }
  }
  return {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [{
      tool: { driver: { name: 'Tollgate', semanticVersion: toolVersion.replace(/^v/, ''), informationUri, rules } },
      results,
    }],
  };
}
