/**
 * The antivirus, cve, signature and dependencies steps called directly, without HTTP, on real
 * .deb files: a real clamd finds EICAR in one ar member; the cve step maps each assessment onto
 * the upload state; the signature step stores a held package out of the index and publishes an
 * accepted one into the signed index; the dependencies step looks at what the distribution
 * publishes. (format and provenance: test/services/admission.test.ts.)
 */
import assert from 'node:assert/strict';
import { createReadStream } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { buildDeb } from '../../harness/debs.js';
import { createClamdScanner } from '../../src/adapters/clamav/index.js';
import { packageById } from '../../src/adapters/db/packages.table.js';
import { hashStream } from '../../src/adapters/storage/hash-stream.js';
import { findDistribution } from '../../src/domain/distributions.js';
import { noFindings, type UploadState } from '../../src/domain/pipeline/types.js';
import { antivirusStep } from '../../src/services/pipeline/antivirus.js';
import { cveStep, noCveScanner } from '../../src/services/pipeline/cve.js';
import { dependenciesStep } from '../../src/services/pipeline/dependencies.js';
import type { CveAssessment, PipelineDeps } from '../../src/services/pipeline/deps.js';
import { formatStep } from '../../src/services/pipeline/format.js';
import { signatureStep } from '../../src/services/pipeline/signature.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { EICAR, startClamd, type RunningClamd } from '../helpers/clamd.js';
import { makeTempDir } from '../helpers/tmp.js';

describe('pipeline steps called directly', () => {
  let t: TestApp;
  let clamd: RunningClamd;
  let work: { dir: string; cleanup: () => Promise<void> };
  let built = 0;

  before(async () => {
    work = await makeTempDir('tollgate-steps-');
    clamd = await startClamd();
    t = await startTestApp();
  });
  after(async () => {
    await t.close();
    await clamd.stop();
    await work.cleanup();
  });

  /** An upload of a freshly built .deb as the format step leaves it. */
  const inspected = async (spec: { name: string; version?: string; depends?: string; files?: Record<string, string> }, codename = 'jammy'): Promise<UploadState> => {
    const dir = join(work.dir, `${spec.name}-${++built}`);
    await mkdir(dir, { recursive: true });
    const path = await buildDeb(dir, { version: '1.0-1', files: { [`usr/share/${spec.name}/f`]: spec.name }, ...spec });
    const file = await hashStream(createReadStream(path), { tempDir: t.ctx.repo.files.tempDir, maxBytes: 1 << 30 });
    const state: UploadState = {
      distribution: findDistribution(codename)!, component: 'main', path: file.path,
      file: { size: file.size, md5: file.md5, sha1: file.sha1, sha256: file.sha256, sha512: file.sha512 },
      claimedSha256: null, pkg: null, outcome: null, cveStatus: 'not_scanned', findings: noFindings(),
      findingDetails: [], reasons: [], slaDeadline: null, duplicateOf: null, storedPackageId: null, rejection: null,
      rpmSignature: null, served: null,
    };
    assert.equal((await formatStep({ files: t.ctx.repo.files }).run(state)).status, 'passed');
    return state;
  };
  const deps = (over: Partial<PipelineDeps> = {}): PipelineDeps => ({
    db: t.ctx.db, files: t.ctx.repo.files, publisher: t.ctx.repo.publisher, antivirus: null, cve: noCveScanner, rpmSigning: t.ctx.repo.rpmSigning, catalogs: t.ctx.repo.catalogs, uploadedBy: 'steps', log: pino({ level: 'silent' }), ...over,
  });

  it('antivirus: skipped without clamd; clean; EICAR in the data member quarantines and names it', async () => {
    const state = await inspected({ name: 'av-clean' });
    assert.deepEqual(await antivirusStep(deps()).run(state), { name: 'antivirus', status: 'skipped', message: 'antivirus not configured (CLAMAV_SOCKET or CLAMAV_HOST)', value: 'skipped' });
    const scanner = createClamdScanner({ socket: clamd.socket });
    const clean = await antivirusStep(deps({ antivirus: scanner })).run(state);
    assert.equal(clean.value, 'clean');
    assert.equal(state.outcome, null);

    const evil = await inspected({ name: 'av-evil', files: { 'usr/share/av-evil/readme.txt': `hello\n${EICAR}\n` } });
    const found = await antivirusStep(deps({ antivirus: scanner })).run(evil);
    assert.equal(found.status, 'failed');
    assert.equal(found.value, 'infected');
    assert.equal(evil.outcome, 'quarantined');
    assert.match(evil.reasons[0]!, /Eicar-Test-Signature\S* found in data\.tar/);
  });

  it('cve: no database → skipped and not_scanned; an assessment is copied onto the state, its outcome kept', async () => {
    const state = await inspected({ name: 'cve-pkg' });
    const skipped = await cveStep(deps()).run(state);
    assert.equal(skipped.status, 'skipped');
    assert.equal(state.cveStatus, 'not_scanned');

    const held: CveAssessment = {
      outcome: 'pending_review', cveStatus: 'pending_review', counts: { ...noFindings(), high: 1 },
      findings: [{ cve_id: 'CVE-2026-7777', advisory_id: 'DSA-7777-1', severity: 'high', severity_source: 'cvss_v3', cvss_score: 7.5, cvss_vector: null, epss: 0.3, epss_percentile: 0.9, in_kev: false, affected_component: 'cve-pkg', installed_version: '1.0-1', fixed_version: '1.0-2', fix_state: 'fixed', summary: 'test', action: 'review' }],
      reasons: ['CVE-2026-7777 high: policy review'], slaDeadline: '2026-12-25T00:00:00+00:00', message: '1 finding: review',
    };
    let asked: unknown[] = [];
    const result = await cveStep(deps({ cve: { assess: async (...args) => { asked = args; return held; } } })).run(state);
    assert.deepEqual(asked, [state.pkg, state.distribution, state.path], 'the scanner gets the package, the distribution and the file');
    assert.deepEqual(result, { name: 'cve', status: 'failed', message: '1 finding: review', value: 'pending_review' });
    assert.equal(state.outcome, 'pending_review');
    assert.equal(state.cveStatus, 'pending_review');
    assert.equal(state.findings.high, 1);
    assert.equal(state.findingDetails[0]!.cve_id, 'CVE-2026-7777');
    assert.equal(state.slaDeadline, '2026-12-25T00:00:00+00:00');

    const warned = await inspected({ name: 'cve-warn' });
    const warning = await cveStep(deps({ cve: { assess: async () => ({ ...held, outcome: 'published', cveStatus: 'warnings' }) } })).run(warned);
    assert.equal(warning.status, 'warning');
    assert.equal(warned.outcome, null, 'a warning does not change the outcome');
  });

  it('signature: a held package is stored out of the index; an accepted one is admitted and the signed index lists it', async () => {
    const held = await inspected({ name: 'sig-held' }, 'noble');
    held.outcome = 'pending_review';
    const stored = await signatureStep(deps()).run(held);
    assert.deepEqual({ status: stored.status, value: stored.value }, { status: 'skipped', value: 'not_published' });
    assert.equal((await packageById(t.ctx.db, held.storedPackageId!))?.status, 'pending_review');

    const ok = await inspected({ name: 'sig-ok' }, 'noble');
    const signed = await signatureStep(deps()).run(ok);
    assert.deepEqual({ status: signed.status, value: signed.value }, { status: 'passed', value: 'signed' });
    assert.equal(ok.outcome, 'published');
    await t.ctx.repo.publisher.idle();
    const packages = await readFile(join(t.dataDir, 'repo', 'apt', 'dists', 'noble', 'main', 'binary-amd64', 'Packages'), 'utf8');
    assert.match(packages, /^Package: sig-ok$/m);
    assert.doesNotMatch(packages, /^Package: sig-held$/m);

    // The same bytes again (a concurrent upload that lost the race): a duplicate, not a second row.
    const again = await inspected({ name: 'sig-ok' }, 'noble');
    const duplicate = await signatureStep(deps()).run(again);
    assert.equal(duplicate.value, 'duplicate');
    assert.equal(again.duplicateOf, ok.storedPackageId);
  });

  it('dependencies: satisfied by what the distribution publishes, reported missing otherwise (not blocking)', async () => {
    const lib = await inspected({ name: 'dep-lib', version: '2.0-1' }, 'focal');
    assert.equal((await signatureStep(deps()).run(lib)).value, 'signed');

    const app = await inspected({ name: 'dep-app', depends: 'dep-lib (>= 2.0)' }, 'focal');
    assert.deepEqual(await dependenciesStep(deps()).run(app), { name: 'dependencies', status: 'passed', message: 'all dependencies are published in the distribution', value: 'satisfied' });
    const newer = await inspected({ name: 'dep-app2', depends: 'dep-lib (>= 3.0), dep-absent' }, 'focal');
    const missing = await dependenciesStep(deps()).run(newer);
    assert.equal(missing.status, 'warning');
    assert.equal(missing.value, 'missing');
    assert.equal(missing.message, 'missing in focal: dep-lib (>= 3.0); dep-absent');
    assert.equal(newer.outcome, null);
  });
});
