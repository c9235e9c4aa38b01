import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { backends, bearer, startTestApp, type TestApp } from '../helpers/app.js';
import { buildDeb, makeTar, writeArArchive } from '../../harness/debs.js';
import { multipartBody } from '../../harness/multipart.js';
import { buildRpm } from '../../harness/rpms.js';
import { makeTempDir } from '../helpers/tmp.js';

const run = promisify(execFile);

/** Every file below `dir` (recursively); [] when it does not exist. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

/** A .deb assembled by hand: debian-binary, control.tar.gz with `control`, data.tar.gz. */
async function craftDeb(dir: string, file: string, control: string, data: Record<string, string | Buffer> = { './usr/share/doc/x/README': 'x\n' }, dataCompression: 'gzip' | 'xz' = 'gzip') {
  const controlTar = await makeTar(dir, { './control': control });
  const dataTar = await makeTar(dir, data, dataCompression);
  return writeArArchive(join(dir, file), [
    { name: 'debian-binary', data: Buffer.from('2.0\n') },
    { name: 'control.tar.gz', data: controlTar },
    { name: `data.tar.${dataCompression === 'gzip' ? 'gz' : 'xz'}`, data: dataTar },
  ]);
}

const control = (fields: Record<string, string>) =>
  Object.entries({ Package: 'crafted', Version: '1.0-1', Architecture: 'amd64', Maintainer: 'T <t@example.invalid>', Description: 'crafted package', ...fields })
    .map(([k, v]) => `${k}: ${v}\n`)
    .join('');

/** A minimal source RPM built by the real rpmbuild -bs. */
async function buildSrpm(dir: string): Promise<string> {
  const top = join(dir, 'srpm-top');
  await mkdir(join(top, 'SPECS'), { recursive: true });
  const spec = join(top, 'SPECS', 'srctest.spec');
  await writeFile(spec, 'Name: srctest\nVersion: 1.0\nRelease: 1\nSummary: s\nLicense: MIT\n\n%description\nsource package\n\n%files\n');
  await run('rpmbuild', ['-bs', '--quiet', '--define', `_topdir ${top}`, spec]);
  const [srpm] = await readdir(join(top, 'SRPMS'));
  return join(top, 'SRPMS', srpm!);
}

for (const backend of backends()) {
  describe(`POST /upload refuses malformed packages and bad requests (${backend})`, () => {
    let t: TestApp;
    let admin: string;
    let work: { dir: string; cleanup: () => Promise<void> };
    let goodDeb: string;
    let goodRpm: string;

    const upload = async (path: string | null, fields: Record<string, string>) => {
      const form = await multipartBody(fields, path ? { path, filename: 'pkg.deb' } : undefined);
      return t.app.inject({ method: 'POST', url: '/upload', headers: { ...bearer(admin), ...form.headers }, payload: form.payload });
    };

    /** The answer is a `rejected` upload result with `code` in its reasons; nothing was kept. */
    const assertRejected = async (path: string, distribution: string, code: RegExp, step = 'format') => {
      const res = await upload(path, { distribution });
      assert.equal(res.statusCode, 422, res.body);
      const body = res.json();
      assert.equal(body.status, 'rejected', res.body);
      assert.equal(body.distribution, distribution);
      assert.ok(body.reasons.some((r: string) => code.test(r)), `reasons ${JSON.stringify(body.reasons)} should match ${code}`);
      // DECISIONS §1: the 422 carries the error fields beside the upload result fields.
      assert.ok(body.reasons[0].startsWith(`${body.code}: `), `code ${body.code} names the first reason ${body.reasons[0]}`);
      assert.match(body.detail, /^[A-Z]/);
      assert.deepEqual(body.steps.map((s: { name: string }) => s.name), ['format', 'provenance', 'antivirus', 'cve', 'signature', 'dependencies']);
      const failed = body.steps.find((s: { status: string }) => s.status === 'failed');
      assert.equal(failed?.name, step, res.body);
      for (const s of body.steps.slice(body.steps.indexOf(failed) + 1)) assert.equal(s.status, 'skipped');
      await assertNothingStored();
      return body;
    };

    const assertNothingStored = async () => {
      const rows = await t.ctx.db.selectFrom('packages').select('name').execute();
      assert.deepEqual(rows, []);
      assert.deepEqual(await filesUnder(join(t.dataDir, 'store')), []);
      assert.deepEqual(await filesUnder(join(t.dataDir, 'quarantine')), []);
      assert.deepEqual(await filesUnder(join(t.dataDir, 'tmp')), [], 'temp files are removed');
      assert.deepEqual((await filesUnder(join(t.dataDir, 'repo'))).filter((f) => /\.(deb|rpm)$/.test(f)), []);
    };

    before(async () => {
      work = await makeTempDir('tollgate-malformed-');
      // The payload is checked at upload here (test/services/deferred-file-lists covers the default, after it).
      t = await startTestApp({ backend, env: { DEB_PAYLOAD_CHECK: 'upload' } });
      admin = await t.tokenFor('admin');
      goodDeb = await buildDeb(work.dir, { name: 'goodpkg', version: '1.0-1' });
      goodRpm = await buildRpm(work.dir, { name: 'goodrpm', version: '1.0', arch: 'x86_64', files: { '/usr/share/goodrpm/a': 'a\n' }, noAutoReqProv: true });
    });
    after(async () => {
      await t.close();
      await work.cleanup();
    });

    describe('malformed .deb files', () => {
      it('rejects a truncated ar archive', async () => {
        const bytes = await readFile(goodDeb);
        const path = join(work.dir, 'truncated.deb');
        await writeFile(path, bytes.subarray(0, Math.floor(bytes.length / 2)));
        await assertRejected(path, 'jammy', /^truncated_archive: /);
        // a member whose declared size runs past the end of the file
        const lying = await writeArArchive(join(work.dir, 'lying.deb'), [
          { name: 'debian-binary', data: Buffer.from('2.0\n') },
          { name: 'control.tar.gz', data: Buffer.from('abc'), declaredSize: '999999' },
        ]);
        await assertRejected(lying, 'jammy', /^truncated_archive: .*999999/);
      });

      it('rejects random bytes, a text file and an .rpm sent to an APT distribution', async () => {
        const random = join(work.dir, 'random.deb');
        await writeFile(random, randomBytes(4096));
        await assertRejected(random, 'jammy', /^unknown_format: /);
        const text = join(work.dir, 'readme.deb');
        await writeFile(text, 'This is not a package.\n'.repeat(50));
        await assertRejected(text, 'noble', /^unknown_format: /);
        await assertRejected(goodRpm, 'jammy', /^wrong_format: /);
        await assertRejected(goodDeb, 'rocky9', /^wrong_format: /);
      });

      it('rejects an ar archive that is not a .deb (bad debian-binary, missing members)', async () => {
        const noDebianBinary = await writeArArchive(join(work.dir, 'nodb.deb'), [{ name: 'hello.txt', data: Buffer.from('hi\n') }]);
        await assertRejected(noDebianBinary, 'jammy', /^missing_debian_binary: /);
        const badVersion = await writeArArchive(join(work.dir, 'badver.deb'), [
          { name: 'debian-binary', data: Buffer.from('9.9\n') },
          { name: 'control.tar.gz', data: await makeTar(work.dir, { './control': control({}) }) },
          { name: 'data.tar.gz', data: await makeTar(work.dir, { './x': 'x' }) },
        ]);
        await assertRejected(badVersion, 'jammy', /^unsupported_deb_version: /);
        const onlyBinary = await writeArArchive(join(work.dir, 'onlydb.deb'), [{ name: 'debian-binary', data: Buffer.from('2.0\n') }]);
        await assertRejected(onlyBinary, 'jammy', /^missing_control_member: /);
      });

      it('rejects an oversized control file', async () => {
        const path = await craftDeb(work.dir, 'bigcontrol.deb', control({ Description: `big\n ${'y'.repeat(2 * 1024 * 1024)}` }));
        await assertRejected(path, 'jammy', /^control_too_large: /);
      });

      it('rejects a decompression bomb in data.tar without unpacking it', async () => {
        const started = Date.now();
        const path = await craftDeb(work.dir, 'bomb.deb', control({}), { './usr/share/zeros': Buffer.alloc(96 * 1024 * 1024) }, 'xz');
        assert.ok((await readFile(path)).length < 200_000, 'the bomb is small on the wire');
        await assertRejected(path, 'jammy', /^decompression_bomb: /);
        assert.ok(Date.now() - started < 30_000);
      });

      it('rejects bad package names, versions and architectures', async () => {
        const cases: Array<[Record<string, string>, RegExp]> = [
          [{ Package: 'Upper_Case' }, /^invalid_package_name: /],
          [{ Package: 'a' }, /^invalid_package_name: /],
          [{ Package: '../evil' }, /^invalid_package_name: /],
          [{ Package: 'a/b' }, /^invalid_package_name: /],
          [{ Version: 'abc' }, /^invalid_version: /],
          [{ Version: '1.0 beta' }, /^invalid_version: /],
          [{ Version: '1.0/../../x' }, /^invalid_version: /],
          [{ Architecture: '../amd64' }, /^invalid_architecture: /],
          [{ Package: '' }, /^bad_control_field: /],
        ];
        let i = 0;
        for (const [fields, code] of cases) {
          const path = await craftDeb(work.dir, `bad${i++}.deb`, control(fields));
          await assertRejected(path, 'jammy', code);
        }
      });

      it('rejects an architecture the distribution does not accept (i386 into jammy)', async () => {
        const i386 = await buildDeb(work.dir, { name: 'i386pkg', version: '1.0', arch: 'i386' });
        const body = await assertRejected(i386, 'jammy', /^wrong_architecture: /);
        assert.equal(body.arch, 'i386');
        assert.equal(body.code, 'wrong_architecture');
        assert.equal(body.detail, 'Architecture i386 is not accepted in jammy (amd64, all)');
      });
    });

    describe('malformed .rpm files', () => {
      it('rejects an aarch64 package in rocky9', async () => {
        const arm = await buildRpm(work.dir, { name: 'armpkg', version: '1.0', arch: 'aarch64', files: { '/usr/share/armpkg/a': 'a\n' }, noAutoReqProv: true });
        const body = await assertRejected(arm, 'rocky9', /^wrong_architecture: /);
        assert.equal(body.arch, 'aarch64');
      });

      it('rejects a source RPM', async () => {
        await assertRejected(await buildSrpm(work.dir), 'rocky9', /^source_package: /);
      });

      it('rejects truncated and corrupted headers', async () => {
        const bytes = await readFile(goodRpm);
        const short = join(work.dir, 'short.rpm');
        await writeFile(short, bytes.subarray(0, 50));
        await assertRejected(short, 'rocky9', /^truncated_header: /);
        const cut = join(work.dir, 'cut.rpm');
        await writeFile(cut, bytes.subarray(0, 400));
        await assertRejected(cut, 'rocky9', /^truncated_header: /);
        // garbage over the main header's index entries
        const corrupt = Buffer.from(bytes);
        const sigCount = corrupt.readUInt32BE(96 + 8);
        const sigStore = corrupt.readUInt32BE(96 + 12);
        const mainStart = 96 + 16 + sigCount * 16 + sigStore + ((8 - (sigStore % 8)) % 8);
        assert.deepEqual([...corrupt.subarray(mainStart, mainStart + 3)], [0x8e, 0xad, 0xe8], 'main header located');
        corrupt.fill(0xab, mainStart + 16, mainStart + 16 + 256);
        const corruptPath = join(work.dir, 'corrupt.rpm');
        await writeFile(corruptPath, corrupt);
        await assertRejected(corruptPath, 'rocky9', /^bad_header_index: /);
        // a wrong header magic
        const badMagic = Buffer.from(bytes);
        badMagic.writeUInt8(0x00, mainStart);
        const badMagicPath = join(work.dir, 'badmagic.rpm');
        await writeFile(badMagicPath, badMagic);
        await assertRejected(badMagicPath, 'rocky9', /^bad_header_magic: /);
      });

      it('rejects absurd index counts and store sizes without allocating them', async () => {
        const bytes = await readFile(goodRpm);
        const huge = Buffer.from(bytes);
        huge.writeUInt32BE(0xffffffff, 96 + 8);
        const hugePath = join(work.dir, 'hugeindex.rpm');
        await writeFile(hugePath, huge);
        await assertRejected(hugePath, 'rocky9', /^bad_header_index: .*4294967295/);
        const store = Buffer.from(bytes);
        store.writeUInt32BE(0xfffffff0, 96 + 12);
        const storePath = join(work.dir, 'hugestore.rpm');
        await writeFile(storePath, store);
        await assertRejected(storePath, 'rocky9', /^header_too_large: /);
      });
    });

    describe('bad requests', () => {
      const assertError = (res: { statusCode: number; json(): unknown; body: string }, status: number, code?: string) => {
        assert.equal(res.statusCode, status, res.body);
        const body = res.json() as { detail: unknown; code: unknown; errors?: Array<{ loc: string[] }> };
        assert.equal(typeof body.detail, 'string');
        assert.match(String(body.code), /^[a-z_]+$/);
        if (code) assert.equal(body.code, code);
        return body;
      };

      it('answers 422 with field errors for a missing file or distribution and a malformed sha256', async () => {
        const noFile = assertError(await upload(null, { distribution: 'jammy' }), 422, 'validation_error');
        assert.deepEqual(noFile.errors!.map((e) => e.loc), [['body', 'file']]);
        const noDist = assertError(await upload(goodDeb, {}), 422, 'validation_error');
        assert.deepEqual(noDist.errors!.map((e) => e.loc), [['body', 'distribution']]);
        const badSha = assertError(await upload(goodDeb, { distribution: 'jammy', sha256: 'xyz' }), 422, 'validation_error');
        assert.deepEqual(badSha.errors!.map((e) => e.loc), [['body', 'sha256']]);
        await assertNothingStored();
      });

      it('answers 4xx for an unknown distribution, not a 500', async () => {
        const body = assertError(await upload(goodDeb, { distribution: 'sid' }), 422, 'unknown_distribution');
        assert.match(String(body.detail), /sid/);
        assertError(await upload(goodDeb, { distribution: '../../etc' }), 422, 'unknown_distribution');
        await assertNothingStored();
      });

      it('rejects a file whose SHA-256 is not the one claimed, at the provenance step', async () => {
        const wrong = createHash('sha256').update('something else').digest('hex');
        const res = await upload(goodDeb, { distribution: 'jammy', sha256: wrong });
        assert.equal(res.statusCode, 422, res.body);
        const body = res.json();
        assert.equal(body.status, 'rejected');
        assert.equal(body.pipeline.format, 'valid');
        assert.equal(body.pipeline.provenance, 'mismatch');
        assert.equal(body.steps[1].status, 'failed');
        assert.ok(body.reasons.some((r: string) => r.startsWith('checksum_mismatch: ') && r.includes(wrong)));
        assert.equal(body.code, 'checksum_mismatch');
        assert.match(body.detail, new RegExp(`^SHA-256 mismatch: expected ${wrong}`));
        await assertNothingStored();
      });

      it('answers a non-multipart body with a 4xx error body', async () => {
        const json = await t.app.inject({ method: 'POST', url: '/upload', headers: bearer(admin), payload: { distribution: 'jammy', file: 'AAAA' } });
        assert.ok(json.statusCode >= 400 && json.statusCode < 500, json.body);
        assertError(json, json.statusCode);
        const text = await t.app.inject({ method: 'POST', url: '/upload', headers: { ...bearer(admin), 'content-type': 'text/plain' }, payload: 'hello' });
        assert.ok(text.statusCode >= 400 && text.statusCode < 500, text.body);
        assertError(text, text.statusCode);
        const broken = await t.app.inject({ method: 'POST', url: '/upload', headers: { ...bearer(admin), 'content-type': 'multipart/form-data; boundary=xyz' }, payload: '--xyz\r\nContent-Disposition: form-data; name="distribution"\r\n\r\njam' });
        assertError(broken, 400, 'malformed_multipart');
        const cutFile = await multipartBody({ distribution: 'jammy' }, { path: goodDeb });
        const cut = await t.app.inject({ method: 'POST', url: '/upload', headers: { ...bearer(admin), ...cutFile.headers }, payload: cutFile.payload.subarray(0, cutFile.payload.length - 300) });
        assertError(cut, 400, 'malformed_multipart');
        const noBoundary = await t.app.inject({ method: 'POST', url: '/upload', headers: { ...bearer(admin), 'content-type': 'multipart/form-data' }, payload: 'x' });
        assert.ok(noBoundary.statusCode >= 400 && noBoundary.statusCode < 500, noBoundary.body);
        assertError(noBoundary, noBoundary.statusCode);
        await assertNothingStored();
      });
    });
  });
}

describe('POST /upload beyond MAX_UPLOAD_MB', () => {
  let t: TestApp;
  let work: { dir: string; cleanup: () => Promise<void> };
  before(async () => {
    work = await makeTempDir('tollgate-toolarge-');
    t = await startTestApp({ env: { MAX_UPLOAD_MB: '1' } });
  });
  after(async () => {
    await t.close();
    await work.cleanup();
  });

  it('answers 413 with the error body and keeps no temp file', async () => {
    const path = join(work.dir, 'big.deb');
    await writeFile(path, Buffer.concat([Buffer.from('!<arch>\n'), randomBytes(2 * 1024 * 1024)]));
    const form = await multipartBody({ distribution: 'jammy' }, { path });
    const res = await t.app.inject({ method: 'POST', url: '/upload', headers: { ...bearer(await t.tokenFor('uploader')), ...form.headers }, payload: form.payload });
    assert.equal(res.statusCode, 413, res.body);
    assert.equal(typeof res.json().detail, 'string');
    assert.match(res.json().code, /^[a-z_]+$/);
    assert.deepEqual(await filesUnder(join(t.dataDir, 'tmp')), []);
    assert.deepEqual(await filesUnder(join(t.dataDir, 'store')), []);
    const stream = await t.app.inject({ method: 'POST', url: '/upload/stream', headers: { ...bearer(await t.tokenFor('uploader')), ...form.headers }, payload: form.payload });
    assert.equal(stream.statusCode, 413, stream.body);
  });
});
