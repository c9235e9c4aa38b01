/**
 * The pipeline's own steps called directly (format, provenance, signature through admission),
 * without HTTP: where each admitted status puts the file, that the row, its provides and its
 * findings are written together, and the one pool rule.
 */
import assert from 'node:assert/strict';
import { createReadStream, existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { hashStream } from '../../src/adapters/storage/hash-stream.js';
import { findDistribution } from '../../src/domain/distributions.js';
import { DomainError } from '../../src/domain/errors.js';
import { noFindings, type UploadState } from '../../src/domain/pipeline/types.js';
import type { StoredFinding } from '../../src/domain/security/index.js';
import { admitPackage, type AdmittedStatus } from '../../src/services/packages/admission.js';
import { packageById } from '../../src/adapters/db/packages.table.js';
import { formatStep } from '../../src/services/pipeline/format.js';
import { provenanceStep } from '../../src/services/pipeline/provenance.js';
import { backends, startTestApp, type TestApp } from '../helpers/app.js';
import { buildDeb } from '../../harness/debs.js';
import { makeTempDir } from '../helpers/tmp.js';

const FINDING: StoredFinding = {
  cve_id: 'CVE-2026-0001', advisory_id: 'DSA-1', severity: 'high', severity_source: 'cvss_v3', cvss_score: 8.1, cvss_vector: null,
  epss: 0.2, epss_percentile: 0.9, in_kev: false, affected_component: 'adm', installed_version: '1.0-1', fixed_version: '1.0-2',
  fix_state: 'fixed', summary: 'test', action: 'review',
};

for (const backend of backends()) {
  describe(`pipeline steps and admission, called directly (${backend})`, () => {
    let t: TestApp;
    let work: { dir: string; cleanup: () => Promise<void> };
    before(async () => {
      work = await makeTempDir('tollgate-admission-');
      t = await startTestApp({ backend });
    });
    after(async () => {
      await t.close();
      await work.cleanup();
    });

    let built = 0;
    /** A validated upload of a freshly built .deb, as the format and provenance steps leave it. */
    const validated = async (name: string, version: string, content = name, codename = 'jammy', provenance: 'verified' | 'duplicate' = 'verified'): Promise<UploadState> => {
      const dir = join(work.dir, `${name}-${++built}`);
      await mkdir(dir, { recursive: true });
      const path = await buildDeb(dir, { name, version, files: { [`usr/share/${name}/f`]: content } });
      const file = await hashStream(createReadStream(path), { tempDir: t.ctx.repo.files.tempDir, maxBytes: 1 << 30 });
      const state: UploadState = {
        distribution: findDistribution(codename)!, component: 'main', path: file.path,
        file: { size: file.size, md5: file.md5, sha1: file.sha1, sha256: file.sha256, sha512: file.sha512 },
        claimedSha256: file.sha256, pkg: null, outcome: null, cveStatus: 'warnings', findings: { ...noFindings(), high: 1 },
        findingDetails: [FINDING], reasons: [], slaDeadline: '2026-12-25T00:00:00+00:00', duplicateOf: null, storedPackageId: null, rejection: null,
        rpmSignature: null, served: null,
      };
      assert.equal((await formatStep({ files: t.ctx.repo.files }).run(state)).status, 'passed');
      assert.equal((await provenanceStep({ db: t.ctx.db, rpmSigning: t.ctx.repo.rpmSigning }).run(state)).value, provenance);
      return state;
    };
    const findingRows = (id: string) => t.ctx.db.selectFrom('package_findings').select(['cve_id', 'severity']).where('package_id', '=', id).execute();
    const deps = () => ({ db: t.ctx.db, files: t.ctx.repo.files, rpmSigning: t.ctx.repo.rpmSigning });

    const cases: Array<[AdmittedStatus, { inPool: boolean; inStore: boolean; inQuarantine: boolean; sla: boolean }]> = [
      ['published', { inPool: true, inStore: true, inQuarantine: false, sla: true }],
      ['pending_review', { inPool: false, inStore: true, inQuarantine: false, sla: true }],
      ['quarantined', { inPool: false, inStore: false, inQuarantine: true, sla: false }],
    ];
    for (const [status, expected] of cases) {
      it(`admits a ${status} package: file where it belongs, row and findings in one go`, async () => {
        const state = await validated(`adm-${status.replace('_', '-')}`, '1:1.0+dfsg-1~bpo1');
        const admission = await admitPackage(deps(), state, status, 'tester');
        assert.equal(admission.kind, 'stored');
        const row = (await packageById(t.ctx.db, admission.id))!;
        assert.equal(row.status, status);
        assert.equal(row.uploaded_by, 'tester');
        assert.equal(row.sla_deadline !== null, expected.sla, 'a quarantine runs no review deadline');
        assert.deepEqual(await findingRows(admission.id), [{ cve_id: 'CVE-2026-0001', severity: 'high' }]);
        const files = t.ctx.repo.files;
        assert.equal(existsSync(join(files.repoDir, row.pool_path)), expected.inPool, 'pool link');
        assert.equal(await files.has(row.sha256), expected.inStore, 'store');
        assert.equal(existsSync(join(t.dataDir, 'quarantine', row.sha256)), expected.inQuarantine, 'quarantine');
        assert.equal(existsSync(state.path), false, 'the temp file was moved, not copied');
      });
    }

    it('promotion copies a package with its finding rows (it is not re-scanned)', async () => {
      const state = await validated('adm-promote', '4.0-1');
      const admitted = await admitPackage(deps(), state, 'published', null);
      const [result] = await t.ctx.repo.lifecycle.promote('adm-promote', '4.0-1', 'amd64', 'jammy', 'focal', { username: 'tester', ip: null });
      assert.equal(result!.result, 'copied');
      const copy = await t.ctx.db.selectFrom('packages').select('id').where('name', '=', 'adm-promote').where('distribution', '=', 'focal').executeTakeFirstOrThrow();
      assert.notEqual(copy.id, admitted.id);
      assert.deepEqual(await findingRows(copy.id), [{ cve_id: 'CVE-2026-0001', severity: 'high' }]);
    });

    it('answers a second admission of the same bytes as a duplicate, of other bytes as 409', async () => {
      const first = await validated('adm-twice', '2.0-1');
      const stored = await admitPackage(deps(), first, 'published', null);
      // Provenance sees the stored row: the step itself reports the duplicate...
      const again = await validated('adm-twice', '2.0-1', 'adm-twice', 'jammy', 'duplicate');
      assert.equal(again.duplicateOf, stored.id);
      // ...and admission, for an upload that raced past provenance, answers the same.
      const raced = await admitPackage(deps(), { ...again, duplicateOf: null }, 'published', null);
      assert.deepEqual(raced, { kind: 'duplicate', id: stored.id });
      // Other bytes under the same name/version/arch that raced past provenance: 409.
      const first409 = await validated('adm-clash', '2.0-1', 'one', 'noble');
      const second409 = await validated('adm-clash', '2.0-1', 'two', 'noble');
      await admitPackage(deps(), first409, 'pending_review', null);
      await assert.rejects(admitPackage(deps(), second409, 'pending_review', null), (e: unknown) => e instanceof DomainError && e.code === 'version_exists');
    });

    it('refuses an indexed package whose pool path another indexed package fills with other bytes, and only then', async () => {
      const published = await validated('adm-pool', '3.0-1');
      await admitPackage(deps(), published, 'published', null);
      // Same name/version/arch in another distribution shares the APT pool path.
      const inNoble = await validated('adm-pool', '3.0-1', 'rival bytes', 'noble');
      await assert.rejects(admitPackage(deps(), inNoble, 'published', null), (e: unknown) => e instanceof DomainError && e.code === 'pool_conflict');
      // Held, it does not occupy the pool: admitted.
      const held = await admitPackage(deps(), inNoble, 'pending_review', null);
      assert.equal(held.kind, 'stored');
    });

    it('moves the upload into the store only once its background fsync is done', async () => {
      const state = await validated('adm-durable', '1.5.0+ds1-1+b4');
      let synced!: () => void;
      state.durable = new Promise<void>((resolve) => { synced = resolve; });
      const admitting = admitPackage(deps(), state, 'published', null);
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(await t.ctx.repo.files.has(state.file.sha256), false, 'nothing stored while the fsync runs');
      assert.equal(existsSync(state.path), true);
      synced();
      const admission = await admitting;
      assert.equal(admission.kind, 'stored');
      assert.equal(await t.ctx.repo.files.has(state.file.sha256), true);

      // A failed fsync fails the admission: no row, nothing stored.
      const failing = await validated('adm-not-durable', '2.0-1');
      failing.durable = Promise.reject(Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' }));
      failing.durable.catch(() => undefined); // as the upload service marks it: handled, rejecting when awaited
      await assert.rejects(admitPackage(deps(), failing, 'published', null), /EIO/);
      assert.equal(await t.ctx.repo.files.has(failing.file.sha256), false);
      const rows = await t.ctx.db.selectFrom('packages').select('id').where('name', '=', 'adm-not-durable').execute();
      assert.equal(rows.length, 0);
    });
  });
}
