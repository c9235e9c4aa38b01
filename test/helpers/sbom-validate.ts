/**
 * Validators for produced documents:
 *  - CycloneDX 1.5: @cyclonedx/cyclonedx-library's strict JSON validator (the official schema,
 *    additional properties refused), plus the references the schema cannot check (every
 *    `dependencies`/`affects` ref names a bom-ref of the document; bom-refs unique).
 *  - SPDX 2.3: no npm package ships the SPDX 2.3 JSON schema, so these are required-field and
 *    cardinality checks written from the SPDX 2.3 specification (clauses 6, 7, 10, 11).
 *  - SARIF 2.1.0: the OASIS JSON schema (sarif-2.1.0-rtm.5.json, shipped by @microsoft/jest-sarif),
 *    draft-04, with ajv-draft-04.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as CDX from '@cyclonedx/cyclonedx-library';
import * as AjvDraft04 from 'ajv-draft-04';
import addFormats from 'ajv-formats';

type Json = Record<string, any>;

export async function cyclonedxProblems(text: string): Promise<string[]> {
  const validator = new CDX.Validation.JsonStrictValidator(CDX.Spec.Version.v1dot5);
  const errors = await validator.validate(text);
  const problems: string[] = errors ? [JSON.stringify(errors).slice(0, 2000)] : [];
  const doc = JSON.parse(text) as Json;
  const refs: string[] = [];
  const walk = (c: Json) => {
    if (c['bom-ref']) refs.push(c['bom-ref']);
    for (const inner of c.components ?? []) walk(inner);
  };
  if (doc.metadata?.component) walk(doc.metadata.component);
  for (const c of doc.components ?? []) walk(c);
  const known = new Set(refs);
  if (known.size !== refs.length) problems.push('bom-refs are not unique');
  for (const d of doc.dependencies ?? []) {
    for (const ref of [d.ref, ...(d.dependsOn ?? [])]) if (!known.has(ref)) problems.push(`dependency ref ${ref} is not a component`);
  }
  for (const v of doc.vulnerabilities ?? []) for (const a of v.affects ?? []) if (!known.has(a.ref)) problems.push(`affects ref ${a.ref} is not a component`);
  return problems;
}

const SPDX_ID = /^SPDXRef-[A-Za-z0-9.-]+$/;
const CHECKSUM_LENGTH: Record<string, number> = { SHA1: 40, SHA224: 56, SHA256: 64, SHA384: 96, SHA512: 128, MD5: 32 };
const CATEGORIES = new Set(['SECURITY', 'PACKAGE-MANAGER', 'PERSISTENT-ID', 'OTHER']);
const PURPOSES = new Set(['APPLICATION', 'FRAMEWORK', 'LIBRARY', 'CONTAINER', 'OPERATING-SYSTEM', 'DEVICE', 'FIRMWARE', 'SOURCE', 'ARCHIVE', 'FILE', 'INSTALL', 'OTHER']);
const RELATIONSHIPS = new Set(['DESCRIBES', 'DESCRIBED_BY', 'CONTAINS', 'CONTAINED_BY', 'DEPENDS_ON', 'DEPENDENCY_OF', 'OTHER']);

/** SPDX 2.3 required fields and cardinalities; [] when the document conforms. */
export function spdxProblems(doc: Json): string[] {
  const p: string[] = [];
  const need = (cond: unknown, what: string) => { if (!cond) p.push(what); };
  const oneString = (o: Json, key: string, where: string) => need(typeof o[key] === 'string' && o[key].length > 0, `${where}: ${key} must be exactly one non-empty string`);
  need(doc.spdxVersion === 'SPDX-2.3', '6.1 spdxVersion must be SPDX-2.3');
  need(doc.dataLicense === 'CC0-1.0', '6.2 dataLicense must be CC0-1.0');
  need(doc.SPDXID === 'SPDXRef-DOCUMENT', '6.3 SPDXID must be SPDXRef-DOCUMENT');
  oneString(doc, 'name', '6.4 document');
  need(typeof doc.documentNamespace === 'string' && /^[a-z][a-z0-9+.-]*:\/\/[^#\s]+$/i.test(doc.documentNamespace), '6.5 documentNamespace must be an absolute URI without #');
  need(doc.creationInfo && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(doc.creationInfo.created), '6.9 created must be YYYY-MM-DDThh:mm:ssZ');
  need(Array.isArray(doc.creationInfo?.creators) && doc.creationInfo.creators.length > 0 && doc.creationInfo.creators.every((c: string) => /^(Tool|Organization|Person): \S/.test(c)), '6.8 creators: one or more Tool:/Organization:/Person:');
  const ids = new Set<string>(['SPDXRef-DOCUMENT']);
  const licenceRefsUsed = new Set<string>();
  for (const [i, pkg] of (doc.packages ?? []).entries()) {
    const w = `package ${i} (${pkg.name})`;
    oneString(pkg, 'name', `7.1 ${w}`);
    need(typeof pkg.SPDXID === 'string' && SPDX_ID.test(pkg.SPDXID), `7.2 ${w}: SPDXID`);
    need(!ids.has(pkg.SPDXID), `7.2 ${w}: SPDXID ${pkg.SPDXID} not unique`);
    ids.add(pkg.SPDXID);
    oneString(pkg, 'downloadLocation', `7.7 ${w}`);
    if (pkg.versionInfo !== undefined) need(typeof pkg.versionInfo === 'string', `7.3 ${w}: versionInfo`);
    if (pkg.supplier !== undefined) need(/^(NOASSERTION|(Person|Organization): .+)$/.test(pkg.supplier), `7.5 ${w}: supplier`);
    if (pkg.filesAnalyzed === false) need(pkg.packageVerificationCode === undefined && pkg.hasFiles === undefined, `7.8/7.9 ${w}: no verification code or files when filesAnalyzed is false`);
    for (const c of pkg.checksums ?? []) need(CHECKSUM_LENGTH[c.algorithm] === undefined || new RegExp(`^[0-9a-f]{${CHECKSUM_LENGTH[c.algorithm]}}$`).test(c.checksumValue), `7.10 ${w}: checksum ${c.algorithm}`);
    for (const key of ['licenseConcluded', 'licenseDeclared', 'copyrightText']) {
      if (pkg[key] !== undefined) need(typeof pkg[key] === 'string' && pkg[key].length > 0, `7.13-7.17 ${w}: ${key}`);
    }
    for (const key of ['licenseConcluded', 'licenseDeclared']) for (const ref of String(pkg[key] ?? '').match(/LicenseRef-[A-Za-z0-9.-]+/g) ?? []) licenceRefsUsed.add(ref);
    if (pkg.primaryPackagePurpose !== undefined) need(PURPOSES.has(pkg.primaryPackagePurpose), `7.24 ${w}: primaryPackagePurpose`);
    for (const ref of pkg.externalRefs ?? []) {
      need(CATEGORIES.has(ref.referenceCategory), `7.21 ${w}: referenceCategory ${ref.referenceCategory}`);
      need(typeof ref.referenceType === 'string' && ref.referenceType.length > 0, `7.21 ${w}: referenceType`);
      need(typeof ref.referenceLocator === 'string' && !/\s/.test(ref.referenceLocator), `7.21 ${w}: referenceLocator without spaces`);
      if (ref.referenceType === 'purl') need(ref.referenceCategory === 'PACKAGE-MANAGER' && /^pkg:[a-z]+\//.test(ref.referenceLocator), `7.21 ${w}: purl locator`);
      if (ref.referenceCategory === 'SECURITY') need(['cpe22Type', 'cpe23Type', 'advisory', 'fix', 'url', 'swid'].includes(ref.referenceType), `F.2 ${w}: security reference type ${ref.referenceType}`);
    }
  }
  let describes = 0;
  for (const [i, r] of (doc.relationships ?? []).entries()) {
    need(RELATIONSHIPS.has(r.relationshipType), `11.1 relationship ${i}: type ${r.relationshipType}`);
    need(ids.has(r.spdxElementId), `11.1 relationship ${i}: unknown spdxElementId ${r.spdxElementId}`);
    need(ids.has(r.relatedSpdxElement) || ['NOASSERTION', 'NONE'].includes(r.relatedSpdxElement), `11.1 relationship ${i}: unknown relatedSpdxElement ${r.relatedSpdxElement}`);
    if (r.spdxElementId === 'SPDXRef-DOCUMENT' && r.relationshipType === 'DESCRIBES') describes++;
  }
  need(describes > 0, '6.x the document must DESCRIBE at least one element');
  for (const id of doc.documentDescribes ?? []) need(ids.has(id), `documentDescribes names unknown ${id}`);
  const extracted = new Set<string>();
  for (const e of doc.hasExtractedLicensingInfos ?? []) {
    need(/^LicenseRef-[A-Za-z0-9.-]+$/.test(e.licenseId), `10.1 licenseId ${e.licenseId}`);
    need(typeof e.extractedText === 'string' && e.extractedText.length > 0, `10.2 extractedText of ${e.licenseId}`);
    need(!extracted.has(e.licenseId), `10.1 licenseId ${e.licenseId} not unique`);
    extracted.add(e.licenseId);
  }
  for (const ref of licenceRefsUsed) need(extracted.has(ref), `10.1 ${ref} is used but has no extracted licensing info`);
  return p;
}

type Validate = ((doc: unknown) => boolean) & { errors?: unknown };
let sarifValidator: Validate | null = null;

export function sarifProblems(doc: unknown): string[] {
  if (!sarifValidator) {
    const Ajv04 = (AjvDraft04 as unknown as { default: new (options: object) => { compile(schema: unknown): Validate } }).default;
    const require = createRequire(import.meta.url);
    const path = require.resolve('@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json');
    // The schema's `language` pattern is not a valid unicode-mode regular expression.
    const ajv = new Ajv04({ strict: false, allErrors: true, unicodeRegExp: false });
    (addFormats as unknown as { default: (a: unknown) => void }).default(ajv);
    sarifValidator = ajv.compile(JSON.parse(readFileSync(path, 'utf8')));
  }
  const validate = sarifValidator;
  return validate(doc) ? [] : [JSON.stringify(validate.errors).slice(0, 2000)];
}
