import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { aptSandbox, exec } from '../helpers/apt.js';
import { backends, bearer, startTestApp, type TestApp } from '../helpers/app.js';
import { buildDeb } from '../../harness/debs.js';
import { findPackage } from '../../src/adapters/db/packages.table.js';
import { multipartBody } from '../../harness/multipart.js';
import { makeTempDir } from '../helpers/tmp.js';
import type { PackageFiles } from '../../src/adapters/storage/interfaces.js';

const COUNT = 20;

/**
 * Runs `first` until it calls `files[method]`, holds that call, runs `meanwhile`, and lets the
 * call go on 300 ms later: the other work reaches the held step's moment exactly. Answers both.
 */
async function whileHeldAt<A, B>(files: PackageFiles, method: 'publish' | 'unpublish', first: () => Promise<A>, meanwhile: () => Promise<B>): Promise<[A, B]> {
  const original = files[method].bind(files) as (...args: string[]) => Promise<void>;
  let release = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  let reached = () => {};
  const atCall = new Promise<void>((resolve) => (reached = resolve));
  let calls = 0;
  Object.assign(files, {
    [method]: async (...args: string[]) => {
      if (++calls === 1) {
        reached();
        await gate;
      }
      return original(...args);
    },
  });
  try {
    const held = first();
    await Promise.race([atCall, held.then(() => Promise.reject(new Error(`${method} was never called`)))]);
    const other = meanwhile();
    await new Promise((resolve) => setTimeout(resolve, 300));
    release();
    return await Promise.all([held, other]);
  } finally {
    delete (files as Partial<Record<typeof method, unknown>>)[method];
  }
}

for (const backend of backends()) {
  describe(`concurrent uploads into one distribution (${backend})`, () => {
    let t: TestApp;
    let work: { dir: string; cleanup: () => Promise<void> };
    let base: string;
    let admin: string;

    before(async () => {
      work = await makeTempDir('tollgate-concurrency-');
      t = await startTestApp({ backend });
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
      admin = await t.tokenFor('admin');
    });
    after(async () => {
      await t.close();
      await work.cleanup();
    });

    const upload = async (path: string, distribution = 'bookworm') => {
      const form = await multipartBody({ distribution }, { path });
      return t.app.inject({ method: 'POST', url: '/upload', headers: { ...bearer(admin), ...form.headers }, payload: form.payload });
    };
    /** SHA-256 of what the published tree serves at a pool path (`apt/pool/…`). */
    const servedSha256 = async (poolPath: string) => createHash('sha256').update(await readFile(join(t.dataDir, 'repo', poolPath))).digest('hex');

    it(`publishes all ${COUNT} parallel uploads in the signed index, appending rather than rewriting`, async () => {
      const debs = await Promise.all(
        Array.from({ length: COUNT }, (_, i) => buildDeb(work.dir, { name: `par-${String(i).padStart(2, '0')}`, version: `1.${i}-1`, arch: i % 5 === 0 ? 'all' : 'amd64' })),
      );
      // One upload first so the later ones can be appended to an index this process wrote.
      const first = await multipartBody({ distribution: 'bookworm' }, { path: debs[0]! });
      assert.equal((await t.app.inject({ method: 'POST', url: '/upload', headers: { ...bearer(admin), ...first.headers }, payload: first.payload })).statusCode, 201);
      const answers = await Promise.all(
        debs.slice(1).map(async (path) => {
          const form = await multipartBody({ distribution: 'bookworm' }, { path });
          const res = await fetch(`${base}/upload`, { method: 'POST', headers: { ...bearer(admin), ...form.headers }, body: form.payload });
          return { status: res.status, body: (await res.json()) as { status: string } };
        }),
      );
      for (const a of answers) {
        assert.equal(a.status, 201);
        assert.equal(a.body.status, 'published');
      }

      const keyring = join(work.dir, 'key.gpg');
      await writeFile(keyring, Buffer.from(await (await fetch(`${base}/repo/keys/tollgate.gpg`)).arrayBuffer()));
      const apt = await aptSandbox(join(work.dir, 'apt'));
      await apt.setSource(`deb [signed-by=${keyring}] ${base}/repo/apt bookworm main`);
      const update = await apt.update();
      assert.equal(update.code, 0, update.stderr);
      for (let i = 0; i < COUNT; i++) {
        const policy = await apt.policy(`par-${String(i).padStart(2, '0')}`);
        assert.match(policy.stdout, new RegExp(`Candidate: 1\\.${i}-1`), `par-${i} missing from the signed index`);
      }
      // Each compressed variant decodes to the very Packages file the Release lists.
      const dir = join(t.dataDir, 'repo', 'apt', 'dists', 'bookworm', 'main', 'binary-amd64');
      const plain = await exec('cat', [join(dir, 'Packages')]);
      assert.equal((await exec('sh', ['-c', `xz -dc ${join(dir, 'Packages.xz')}`])).stdout, plain.stdout);
      assert.equal((await exec('sh', ['-c', `gzip -dc ${join(dir, 'Packages.gz')}`])).stdout, plain.stdout);
      assert.equal((plain.stdout.match(/^Package: /gm) ?? []).length, COUNT);
      const metrics = (await t.app.inject('/metrics')).body;
      assert.match(metrics, /tollgate_publish_duration_seconds_count\{format="deb",mode="append"\} [1-9]/);
    });

    it('two uploads of one name, version and arch with other bytes, at once (one distribution, or two sharing the pool): one published, one refused, the pool file the published one', async () => {
      for (let round = 0; round < 8; round++) {
        const name = `race-${round}`;
        const version = '1.5.0+ds1-1+b4';
        // Odd rounds: two distributions, whose rows do not collide but whose pool path is the same.
        const distributions = round % 2 ? ['bookworm', 'jammy'] : ['bookworm', 'bookworm'];
        const debs = await Promise.all(['one', 'two'].map((variant) =>
          buildDeb(work.dir, { name, version, fileName: `${name}-${variant}.deb`, files: { [`usr/share/${name}/${variant}`]: `${variant}\n` } })));
        const answers = await Promise.all(debs.map(async (path, i) => ({
          status: (await upload(path, distributions[i]!)).statusCode,
          distribution: distributions[i]!,
          sha256: createHash('sha256').update(await readFile(path)).digest('hex'),
        })));
        assert.deepEqual(answers.map((a) => a.status).sort(), [201, 409], `round ${round}`);
        const winner = answers.find((a) => a.status === 201)!;
        // A distribution nothing was published to yet has no index at all.
        const stanzaIn = async (codename: string) => (await readFile(join(t.dataDir, 'repo', 'apt', 'dists', codename, 'main', 'binary-amd64', 'Packages'), 'utf8').catch(() => ''))
          .split('\n\n').find((stanza) => stanza.startsWith(`Package: ${name}\n`));
        const stanza = (await stanzaIn(winner.distribution))!;
        assert.match(stanza, new RegExp(`^SHA256: ${winner.sha256}$`, 'm'));
        if (round % 2) assert.equal(await stanzaIn(answers.find((a) => a.status === 409)!.distribution), undefined);
        const filename = /^Filename: (.+)$/m.exec(stanza)![1]!;
        assert.equal(await servedSha256(`apt/${filename}`), winner.sha256, `round ${round}: the pool file is not the indexed package's`);
      }
    });

    it('a deletion deciding whether its pool file goes holds the path: an upload of the same package meanwhile keeps its file', async () => {
      const name = 'held-delete';
      const version = '2:0.9~rc1-3';
      const path = await buildDeb(work.dir, { name, version });
      assert.equal((await upload(path)).statusCode, 201);
      // The deletion is held just before it removes the pool file (nothing names it any more), and
      // the same package uploaded again meanwhile: without the lock it links its file and writes
      // its row then, and the held deletion removes the file its row names.
      const [deleted, uploaded] = await whileHeldAt(t.ctx.repo.files, 'unpublish',
        () => t.app.inject({ method: 'DELETE', url: `/artifacts/${name}/${encodeURIComponent(version)}?distribution=bookworm`, headers: bearer(admin) }),
        () => upload(path));
      assert.equal(deleted.statusCode, 200, deleted.body);
      assert.equal(uploaded.statusCode, 201, uploaded.body);
      const row = await t.ctx.db.selectFrom('packages').select(['sha256', 'pool_path']).where('name', '=', name).executeTakeFirstOrThrow();
      assert.equal(await servedSha256(row.pool_path), row.sha256, 'the new row\'s pool file');
    });

    it('a quarantine deciding whether the pool file goes holds the path: the same package uploaded to another distribution meanwhile keeps its file', async () => {
      const name = 'held-quarantine';
      const version = '1.5.0+ds1-1+b4';
      const path = await buildDeb(work.dir, { name, version });
      assert.equal((await upload(path)).statusCode, 201);
      const [, uploaded] = await whileHeldAt(t.ctx.repo.files, 'unpublish',
        () => t.ctx.security.decisions.quarantine(name, version, { arch: 'amd64', distribution: 'bookworm' }, 'held', { username: 'admin', ip: null }),
        () => upload(path, 'jammy'));
      assert.equal(uploaded.statusCode, 201, uploaded.body);
      const row = await t.ctx.db.selectFrom('packages').select(['sha256', 'pool_path']).where('name', '=', name).where('distribution', '=', 'jammy').executeTakeFirstOrThrow();
      assert.equal(await servedSha256(row.pool_path), row.sha256, 'the jammy row\'s pool file');
      assert.ok(await t.ctx.repo.files.has(row.sha256), 'its stored file');
    });

    it('a held package entering the index takes its pool path under the lock: other bytes uploaded meanwhile to another distribution are refused', async () => {
      const name = 'held-entry';
      const version = '1:2.4.1+dfsg-0ubuntu1~22.04';
      const [heldDeb, otherDeb] = await Promise.all(['held', 'other'].map((variant) =>
        buildDeb(work.dir, { name, version, fileName: `${name}-${variant}.deb`, files: { [`usr/share/${name}/${variant}`]: `${variant}\n` } })));
      assert.equal((await upload(heldDeb!)).statusCode, 201);
      // As if it had been held for review: out of the index, its file in the store only.
      await t.ctx.repo.fileLists.idle(); // its file list is stored under the distribution's lock, taken before the package row's
      await t.ctx.db.updateTable('packages').set({ status: 'pending_review' }).where('name', '=', name).execute();
      const held = (await findPackage(t.ctx.db, 'bookworm', name, version, 'amd64'))!;
      await t.ctx.repo.files.unpublish(held.pool_path);
      // The approval held at its link (the upload's own link goes through).
      const [, uploaded] = await whileHeldAt(t.ctx.repo.files, 'publish',
        () => t.ctx.security.transitions.apply(held, { status: 'published' }),
        () => upload(otherDeb!, 'jammy'));
      assert.equal(uploaded.statusCode, 409, uploaded.body);
      assert.equal(uploaded.json().code, 'pool_conflict');
      const rows = await t.ctx.db.selectFrom('packages').select(['sha256', 'pool_path', 'status']).where('name', '=', name).execute();
      assert.deepEqual(rows.map((r) => r.status), ['published']);
      assert.equal(await servedSha256(rows[0]!.pool_path), rows[0]!.sha256);
    });

    it('a retirement removing the pool files only it uses holds each path: the same package uploaded to another distribution meanwhile keeps its file', async () => {
      const path = await buildDeb(work.dir, { name: 'held-retire', version: '0.9~rc1+dfsg-2' });
      assert.equal((await upload(path, 'noble')).statusCode, 201);
      const [retired, uploaded] = await whileHeldAt(t.ctx.repo.files, 'unpublish',
        () => t.app.inject({ method: 'DELETE', url: '/distributions/noble', headers: bearer(admin) }),
        () => upload(path, 'jammy'));
      assert.equal(retired.statusCode, 200, retired.body);
      assert.equal(uploaded.statusCode, 201, uploaded.body);
      const row = await t.ctx.db.selectFrom('packages').select(['sha256', 'pool_path']).where('name', '=', 'held-retire').where('distribution', '=', 'jammy').executeTakeFirstOrThrow();
      assert.equal(await servedSha256(row.pool_path), row.sha256, 'the jammy row\'s pool file');
    });
  });
}
