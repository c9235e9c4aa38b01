/**
 * DEB_PAYLOAD_CHECK=background (the default): a .deb is published from its control file, and its
 * payload is read behind the upload — the file list reaches Contents by the next publish (an
 * append, never a full rewrite, never twice), and a malformed payload quarantines the package.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { pino } from 'pino';
import { buildDeb, makeTar, writeArArchive } from '../../harness/debs.js';
import { waitFor } from '../../harness/service.js';
import { listDebPayload } from '../../src/domain/deb/reader.js';
import { DeferredFileLists } from '../../src/services/packages/deferred-file-lists.js';
import { multipartBody } from '../../harness/multipart.js';
import { exec } from '../helpers/apt.js';
import { backends, bearer, startTestApp, type TestApp } from '../helpers/app.js';
import { makeTempDir } from '../helpers/tmp.js';

/** `package\tpath` pairs of a Contents file, each line kept (duplicates would show). */
function contentsLines(text: string): string[] {
  return text.split('\n').filter(Boolean).flatMap((line) => {
    const m = /^(.*?)\s+(\S+)$/.exec(line)!;
    return m[2]!.split(',').map((pkg) => `${pkg.slice(pkg.lastIndexOf('/') + 1)}\t${m[1]}`);
  }).sort();
}

/** A .deb whose data.tar.xz starts as xz should but holds a 96 MiB run of zeros (ratio > 1000). */
async function bombDeb(dir: string): Promise<string> {
  const control = 'Package: bomb\nVersion: 1.0-1\nArchitecture: amd64\nMaintainer: T <t@example.invalid>\nDescription: zeros\n';
  return writeArArchive(join(dir, 'bomb.deb'), [
    { name: 'debian-binary', data: Buffer.from('2.0\n') },
    { name: 'control.tar.gz', data: await makeTar(dir, { './control': control }) },
    { name: 'data.tar.xz', data: await makeTar(dir, { './usr/share/zeros': Buffer.alloc(96 * 1024 * 1024) }, 'xz') },
  ]);
}

for (const backend of backends()) {
  describe(`.deb payloads read after the upload (${backend})`, () => {
    let t: TestApp;
    let admin: string;
    let work: { dir: string; cleanup: () => Promise<void> };
    const dist = join('apt', 'dists', 'noble');

    const upload = async (path: string) => {
      const form = await multipartBody({ distribution: 'noble' }, { path });
      return t.app.inject({ method: 'POST', url: '/upload', headers: { ...bearer(admin), ...form.headers }, payload: form.payload });
    };
    const repoFile = (rel: string) => readFile(join(t.ctx.repo.files.repoDir, dist, rel));
    const contents = async () => contentsLines(gunzipSync(await repoFile('main/Contents-amd64.gz')).toString());
    const fullPublishes = async () => {
      const text = await t.ctx.metrics.registry.metrics();
      return Number(/^tollgate_publish_duration_seconds_count\{format="deb",mode="full"\} (\d+)/m.exec(text)?.[1] ?? 0);
    };
    /** Uploads a package per name, each with the one file `usr/share/<name>/<file>`, and waits until their payloads are read and published. */
    const uploadAndRead = async (names: string[], version: string, file: string) => {
      for (const name of names) {
        const path = await buildDeb(work.dir, { name, version, files: { [`usr/share/${name}/${file}`]: `${file}\n` } });
        assert.equal((await upload(path)).statusCode, 201);
      }
      await t.ctx.repo.fileLists.idle();
      await t.ctx.repo.publisher.idle();
    };
    const listedGeneration = async (name: string) =>
      (await t.ctx.db.selectFrom('packages').select('listed_generation').where('name', '=', name).executeTakeFirstOrThrow()).listed_generation;

    before(async () => {
      work = await makeTempDir('tollgate-payloads-');
      t = await startTestApp({ backend });
      admin = await t.tokenFor('admin');
    });
    after(async () => {
      await t.close();
      await work.cleanup();
    });

    it('publishes at once, then adds the file list to Contents by an append, each line once', async () => {
      const first = await buildDeb(work.dir, { name: 'late-one', version: '1.5.0+ds1-1+b4', files: { 'usr/share/late-one/a.txt': 'a\n', 'usr/bin/late-one': '#!/bin/sh\n' } });
      const res = await upload(first);
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json().status, 'published');
      assert.match((await repoFile('main/binary-amd64/Packages')).toString(), /^Package: late-one$/m, 'in the signed index from its control file');
      await t.ctx.repo.fileLists.idle();
      assert.notEqual(await listedGeneration('late-one'), null);
      assert.deepEqual((await contents()).filter((l) => l.startsWith('late-one\t')), ['late-one\tusr/bin/late-one', 'late-one\tusr/share/late-one/a.txt']);

      const fullBefore = await fullPublishes();
      const second = await buildDeb(work.dir, { name: 'late-two', version: '2:0.9~rc1-3', files: { 'usr/share/late-two/b.txt': 'b\n' } });
      assert.equal((await upload(second)).statusCode, 201);
      await t.ctx.repo.fileLists.idle();
      await t.ctx.repo.publisher.idle();
      assert.deepEqual(await contents(), ['late-one\tusr/bin/late-one', 'late-one\tusr/share/late-one/a.txt', 'late-two\tusr/share/late-two/b.txt']);
      assert.equal(await fullPublishes(), fullBefore, 'the lists went out by appends');

      // Release vouches for the Contents now served (apt fetches it by the uncompressed digest).
      const release = (await repoFile('Release')).toString();
      const plain = gunzipSync(await repoFile('main/Contents-amd64.gz'));
      const sha = createHash('sha256').update(plain).digest('hex');
      assert.match(release, new RegExp(`^ ${sha} +${plain.length} main/Contents-amd64$`, 'm'));
      const verified = await exec('gpgv', ['--keyring', join(t.ctx.repo.files.repoDir, 'keys', 'tollgate.gpg'), join(t.ctx.repo.files.repoDir, dist, 'InRelease')]);
      assert.equal(verified.code, 0, verified.stderr);

      // A full rewrite lists the same lines (once each).
      t.ctx.repo.publisher.forget('noble');
      await t.ctx.repo.publisher.request('noble');
      assert.deepEqual(await contents(), ['late-one\tusr/bin/late-one', 'late-one\tusr/share/late-one/a.txt', 'late-two\tusr/share/late-two/b.txt']);
    });

    it('quarantines a package whose payload turns out malformed, and takes it out of the index', async () => {
      const res = await upload(await bombDeb(work.dir));
      assert.equal(res.statusCode, 201, res.body);
      await t.ctx.repo.fileLists.idle();
      await t.ctx.repo.publisher.idle();
      const row = await t.ctx.db.selectFrom('packages').select(['status', 'reasons']).where('name', '=', 'bomb').executeTakeFirstOrThrow();
      assert.equal(row.status, 'quarantined');
      assert.match(row.reasons, /payload check: decompression_bomb: /);
      assert.doesNotMatch((await repoFile('main/binary-amd64/Packages')).toString(), /^Package: bomb$/m);
      const audit = await t.app.inject({ method: 'GET', url: '/audit/package/bomb', headers: bearer(admin) });
      assert.match(audit.body, /payload check: decompression_bomb/);
    });

    it('quarantines a malformed payload on the next pass when the quarantine failed (never listed, left in the index)', async () => {
      let calls = 0;
      t.ctx.repo.fileLists.onMalformed(async (pkg, reason) => {
        calls += 1;
        if (calls === 1) throw new Error('database gone for a moment');
        await t.ctx.security.decisions.quarantine(pkg.name, pkg.version, { arch: pkg.arch, distribution: pkg.distribution }, reason, { username: 'system', ip: null });
      });
      const control = 'Package: broken-payload\nVersion: 1:2.4.1+dfsg-0ubuntu1~22.04\nArchitecture: amd64\nMaintainer: T <t@example.invalid>\nDescription: garbage data\n';
      const path = await writeArArchive(join(work.dir, 'broken-payload.deb'), [
        { name: 'debian-binary', data: Buffer.from('2.0\n') },
        { name: 'control.tar.gz', data: await makeTar(work.dir, { './control': control }) },
        { name: 'data.tar.gz', data: Buffer.concat([Buffer.from([0x1f, 0x8b, 8, 0]), Buffer.alloc(64, 0xa5)]) },
      ]);
      const res = await upload(path);
      assert.equal(res.statusCode, 201, res.body);
      await t.ctx.repo.fileLists.idle();
      assert.equal(calls, 1);
      const row = () => t.ctx.db.selectFrom('packages').select(['status', 'listed_generation']).where('name', '=', 'broken-payload').executeTakeFirstOrThrow();
      assert.equal((await row()).listed_generation, null, 'left for the next pass, not marked as read');
      await waitFor(async () => (await row()).status === 'quarantined', 'quarantined by the retry, with no upload to wake it', 10_000);
      await t.ctx.repo.fileLists.idle();
      await t.ctx.repo.publisher.idle();
      assert.notEqual((await row()).listed_generation, null);
      assert.equal(calls, 2);
      assert.doesNotMatch((await repoFile('main/binary-amd64/Packages')).toString(), /^Package: broken-payload$/m);
    });

    it('reads, at the next start, the payloads a stop left unread', async () => {
      const path = await buildDeb(work.dir, { name: 'late-three', version: '1.0-1', files: { 'usr/share/late-three/c': 'c\n' } });
      assert.equal((await upload(path)).statusCode, 201);
      await t.ctx.repo.fileLists.idle();
      // As if the service had stopped before reading it.
      await t.ctx.db.updateTable('packages').set({ listed_generation: null, files: '[]' }).where('name', '=', 'late-three').execute();
      t.ctx.repo.publisher.forget('noble');
      await t.ctx.repo.publisher.request('noble');
      assert.ok(!(await contents()).some((l) => l.startsWith('late-three\t')));
      t.ctx.repo.fileLists.kick();
      await t.ctx.repo.fileLists.idle();
      assert.ok((await contents()).includes('late-three\tusr/share/late-three/c'));
    });

    it('tries again by itself after a pass failed (a full disk refused the file list), with no upload to wake it', async () => {
      // The database refuses to record any file list, as SQLite does on a full disk.
      const refuse = backend === 'postgres'
        ? [sql`create function refuse_file_list() returns trigger language plpgsql as $$ begin raise exception 'database or disk is full'; end $$`,
          sql`create trigger refuse_file_list before update of listed_generation on packages for each row execute function refuse_file_list()`]
        : [sql`create trigger refuse_file_list before update of listed_generation on packages begin select raise(fail, 'database or disk is full'); end`];
      for (const statement of refuse) await statement.execute(t.ctx.db);
      const path = await buildDeb(work.dir, { name: 'late-retried', version: '1:2.0~beta1-1', files: { 'usr/share/late-retried/r': 'r\n' } });
      assert.equal((await upload(path)).statusCode, 201);
      await t.ctx.repo.fileLists.idle();
      assert.equal(await listedGeneration('late-retried'), null, 'the pass failed');
      await sql`drop trigger refuse_file_list${sql.raw(backend === 'postgres' ? ' on packages' : '')}`.execute(t.ctx.db);
      if (backend === 'postgres') await sql`drop function refuse_file_list`.execute(t.ctx.db);
      await waitFor(async () => (await listedGeneration('late-retried')) !== null, 'the file list recorded without another upload', 10_000);
      await t.ctx.repo.fileLists.idle();
      await t.ctx.repo.publisher.idle();
      assert.ok((await contents()).includes('late-retried\tusr/share/late-retried/r'));
    });

    it('reads on while a publish it asked for is still running (the publishes coalesce)', async () => {
      const names = ['batch-a', 'batch-b', 'batch-c', 'batch-d', 'batch-e'];
      await uploadAndRead(names, '1.0+b1', 'f');
      // Unread again, and read by a reader whose publishes do not finish until released: waiting
      // for each one, it would read one package and stop there.
      await t.ctx.db.updateTable('packages').set({ listed_generation: null, files: '[]' }).where('name', 'in', names).execute();
      let release = () => {};
      const held = new Promise<void>((resolve) => (release = resolve));
      const asked: string[] = [];
      // Each list stored as soon as read (gatherMs 0), each asking for a publish.
      const reader = new DeferredFileLists({
        db: t.ctx.db, files: t.ctx.repo.files, busy: () => false, log: pino({ level: 'silent' }), gatherMs: 0,
        publish: async (codename) => {
          asked.push(codename);
          await held;
        },
      });
      reader.kick();
      const listed = async () => (await t.ctx.db.selectFrom('packages').select('name').where('name', 'in', names).where('listed_generation', 'is not', null).execute()).length;
      await waitFor(async () => (await listed()) === names.length, 'every package of the batch read while the first publish is held', 10_000);
      assert.deepEqual(asked, names.map(() => 'noble'));
      release();
      await reader.idle();
      t.ctx.repo.publisher.forget('noble');
      await t.ctx.repo.publisher.request('noble');
      for (const name of names) assert.ok((await contents()).includes(`${name}\tusr/share/${name}/f`), name);
    });

    it('stores the lists read close together in one transaction: one generation, one publish', async () => {
      const names = ['gathered-a', 'gathered-b', 'gathered-c', 'gathered-d'];
      await uploadAndRead(names, '2.0~rc1-1', 'g');
      await t.ctx.db.updateTable('packages').set({ listed_generation: null, files: '[]' }).where('name', 'in', names).execute();
      // Rewritten in full by the publish the reader asks for: the lines were listed before the reset.
      t.ctx.repo.publisher.forget('noble');
      const asked: string[] = [];
      const reader = new DeferredFileLists({
        db: t.ctx.db, files: t.ctx.repo.files, busy: () => false, log: pino({ level: 'silent' }), gatherMs: 60_000,
        publish: async (codename) => {
          asked.push(codename);
          await t.ctx.repo.publisher.request(codename);
        },
      });
      reader.kick();
      await reader.idle();
      assert.deepEqual(asked, ['noble'], 'one publish for the four');
      const generations = new Set(await Promise.all(names.map(listedGeneration)));
      assert.equal(generations.size, 1, `one generation for the four: ${[...generations].join(', ')}`);
      assert.notEqual([...generations][0], null, 'stored');
      const lines = await contents();
      for (const name of names) assert.equal(lines.filter((l) => l === `${name}\tusr/share/${name}/g`).length, 1, name);
    });

    it('reads payloads side by side once no upload is under way, one at a time while uploads run', async () => {
      const names = ['side-a', 'side-b', 'side-c', 'side-d'];
      await uploadAndRead(names, '1:3.2.1+dfsg-2', 's');
      /** The most payloads read at once by a reader of two, over the packages made unread again. */
      const mostAtOnce = async (unread: string[], busy: boolean) => {
        await t.ctx.db.updateTable('packages').set({ listed_generation: null, files: '[]' }).where('name', 'in', unread).execute();
        // Rewritten in full by the publishes the reader asks for: the lines were listed before the reset.
        t.ctx.repo.publisher.forget('noble');
        let active = 0;
        let most = 0;
        const reader = new DeferredFileLists({
          db: t.ctx.db, files: t.ctx.repo.files, busy: () => busy, log: pino({ level: 'silent' }), readers: 2,
          publish: (codename) => t.ctx.repo.publisher.request(codename),
          listPayload: async (path) => {
            most = Math.max(most, ++active);
            try {
              // Long enough for a second reader to begin meanwhile, if it may (it waits 500 ms
              // from the pass's start for the uploads to be over).
              await new Promise((resolve) => setTimeout(resolve, 300));
              return await listDebPayload(path);
            } finally {
              active--;
            }
          },
        });
        reader.kick();
        await reader.idle();
        return most;
      };
      assert.equal(await mostAtOnce(names, false), 2);
      // Uploads under way: one read every YIELD_MS (2 s), never two at once.
      assert.equal(await mostAtOnce(names.slice(0, 2), true), 1);
      await t.ctx.repo.publisher.idle();
      const lines = await contents();
      for (const name of names) assert.equal(lines.filter((l) => l === `${name}\tusr/share/${name}/s`).length, 1, name);
    });
  });
}

describe('DEB_PAYLOAD_CHECK=upload', () => {
  it('reads the payload before answering: the same malformed package is rejected, nothing kept', async () => {
    const work = await makeTempDir('tollgate-payloads-upload-');
    const t = await startTestApp({ env: { DEB_PAYLOAD_CHECK: 'upload' } });
    try {
      const form = await multipartBody({ distribution: 'noble' }, { path: await bombDeb(work.dir) });
      const res = await t.app.inject({ method: 'POST', url: '/upload', headers: { ...bearer(await t.tokenFor('admin')), ...form.headers }, payload: form.payload });
      assert.equal(res.statusCode, 422, res.body);
      assert.equal(res.json().code, 'decompression_bomb');
      assert.deepEqual(await t.ctx.db.selectFrom('packages').select('name').execute(), []);
    } finally {
      await t.close();
      await work.cleanup();
    }
  });
});
