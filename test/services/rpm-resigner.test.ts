/**
 * The background re-signing, called directly: an RPM stored before packages were signed (an
 * unsigned file at the old-style path, `signed_by` null) gets a signed copy at a path of its own
 * and the repodata moves to it; the old path goes after the grace period; a package whose stored
 * file is missing is reported, not retried forever, and does not stop the others.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { bumpGeneration } from '../../src/adapters/db/distributions.table.js';
import { packageRows } from '../../src/adapters/db/packages.table.js';
import { verifyRpmSignature } from '../../src/adapters/signing/rpm-signatures.js';
import { hashStream } from '../../src/adapters/storage/hash-stream.js';
import { findDistribution } from '../../src/domain/distributions.js';
import { rpmHandler } from '../../src/services/formats/rpm.js';
import { multipartBody } from '../../harness/multipart.js';
import { buildRpm } from '../../harness/rpms.js';
import { backends, bearer, startTestApp, type TestApp } from '../helpers/app.js';
import { makeTempDir } from '../helpers/tmp.js';

for (const backend of backends()) {
  describe(`RPM re-signing (${backend})`, () => {
    let t: TestApp;
    let work: { dir: string; cleanup: () => Promise<void> };
    before(async () => {
      work = await makeTempDir('tollgate-resign-');
      t = await startTestApp({ backend, env: { RPM_RESIGN_GRACE_SECONDS: '0' } });
    });
    after(async () => {
      await t.close();
      await work.cleanup();
    });

    const primaryHrefs = async () => {
      const root = join(t.dataDir, 'repo', 'rpm', 'rocky9', 'x86_64');
      const repomd = await readFile(join(root, 'repodata', 'repomd.xml'), 'utf8');
      const href = /<location href="(repodata\/[0-9a-f]{64}-primary\.xml\.gz)"/.exec(repomd)![1]!;
      return [...gunzipSync(await readFile(join(root, href))).toString('utf8').matchAll(/<location href="([^"]+)"/g)].map((m) => m[1]!);
    };

    it('signs a package stored unsigned, moves repodata to the signed copy, reports a missing file', async () => {
      const admin = await t.tokenFor('admin');
      const legacy = await buildRpm(work.dir, { name: 'resign-legacy', version: '1.0+ds1', release: '1.el9', arch: 'noarch', files: { '/usr/share/legacy/a': 'a\n' }, noAutoReqProv: true });
      const lost = await buildRpm(work.dir, { name: 'resign-lost', version: '2.0~rc1', release: '1.el9', arch: 'noarch', files: { '/usr/share/lost/b': 'b\n' }, noAutoReqProv: true });
      for (const path of [legacy, lost]) {
        const form = await multipartBody({ distribution: 'rocky9' }, { path });
        const res = await t.app.inject({ method: 'POST', url: '/upload', headers: { ...bearer(admin), ...form.headers }, payload: form.payload });
        assert.equal(res.statusCode, 201, res.body);
      }
      const { db, repo } = t.ctx;
      const dist = findDistribution('rocky9')!;

      // As a row stored before signing existed: the uploaded file itself, at the path without a digest folder.
      const [legacyRow] = await packageRows(db, 'resign-legacy');
      const file = await hashStream(createReadStream(legacy), { tempDir: repo.files.tempDir });
      const { path: tempPath, ...facts } = file;
      await repo.files.keep(tempPath, facts.sha256);
      const pkg = await rpmHandler.inspect(legacy);
      const oldPath = rpmHandler.poolPath(pkg, dist, 'main', null);
      await repo.files.publish(facts.sha256, oldPath);
      await db.updateTable('packages').set({
        ...facts, pool_path: oldPath, signed_by: null, metadata: JSON.stringify(pkg.metadata), index_entry: rpmHandler.indexEntry(pkg, facts, oldPath, 0),
      }).where('id', '=', legacyRow!.id).execute();
      // Signed by a key since rotated away, and its stored file lost.
      const [lostRow] = await packageRows(db, 'resign-lost');
      await db.updateTable('packages').set({ signed_by: 'F'.repeat(40) }).where('id', '=', lostRow!.id).execute();
      await repo.files.forget(lostRow!.sha256);
      await bumpGeneration(db, 'rocky9');
      await repo.publisher.request('rocky9');
      assert.ok((await primaryHrefs()).includes(oldPath.replace('rpm/rocky9/x86_64/', '')));

      await repo.resigner.start();
      const progress = await repo.resigner.progress();
      assert.equal(progress.running, false);
      assert.equal(progress.packages, 2);
      assert.equal(progress.signed_with_active_key, 1);
      assert.deepEqual(progress.failures.map((f) => [f.name, /missing/.test(f.reason)]), [['resign-lost', true]]);

      const [signed] = await packageRows(db, 'resign-legacy');
      const signer = repo.keyring.current()!;
      assert.equal(signed!.signed_by, signer.fingerprint);
      assert.equal(signed!.upload_sha256, legacyRow!.upload_sha256, 'the provenance stays');
      assert.match(signed!.pool_path, /^rpm\/rocky9\/x86_64\/Packages\/r\/[0-9a-f]{16}\/resign-legacy-1\.0\+ds1-1\.el9\.noarch\.rpm$/);
      assert.ok((await primaryHrefs()).includes(signed!.pool_path.replace('rpm/rocky9/x86_64/', '')));
      const served = join(t.dataDir, 'repo', signed!.pool_path);
      assert.equal(createHash('sha256').update(await readFile(served)).digest('hex'), signed!.sha256);
      await verifyRpmSignature(served, signer.publicKeyArmored);

      // Grace 0: the old path goes once the new repodata is out.
      const deadline = Date.now() + 10_000;
      while (await repo.files.isPublished(oldPath)) {
        assert.ok(Date.now() < deadline, 'the unsigned file is no longer served');
        await new Promise((r) => setTimeout(r, 50));
      }
      // A second run has nothing to do but the package it cannot sign.
      await repo.resigner.start();
      assert.equal((await repo.resigner.progress()).failures.length, 1);
      assert.equal((await packageRows(db, 'resign-legacy'))[0]!.sha256, signed!.sha256);
    });
  });
}
