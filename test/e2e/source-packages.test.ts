import assert from 'node:assert/strict';
import { copyFile, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { basename, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { aptSandbox, exec } from '../helpers/apt.js';
import { backends, bearer, startTestApp, type TestApp } from '../helpers/app.js';
import { multipartBody } from '../../harness/multipart.js';
import { buildSourcePackage, type BuiltSource } from '../../harness/source-packages.js';
import { EICAR, EICAR_SIGNATURE, startClamd, type RunningClamd } from '../helpers/clamd.js';
import { makeTempDir } from '../helpers/tmp.js';
import { patchSettings, startFeedServer, writeOsvFeed, type FeedServer } from '../security/support.js';

/** The stanzas of a Sources file by package and version, each as its fields in order. */
function stanzas(text: string): Map<string, Array<[string, string]>> {
  const out = new Map<string, Array<[string, string]>>();
  for (const block of text.split(/\n\n+/).filter((b) => b.trim() !== '')) {
    const fields: Array<[string, string]> = [];
    for (const line of block.split('\n')) {
      if (/^[ \t]/.test(line)) fields[fields.length - 1]![1] += `\n${line}`;
      else {
        const at = line.indexOf(':');
        fields.push([line.slice(0, at), line.slice(at + 1).trim()]);
      }
    }
    const get = (n: string) => fields.find((f) => f[0] === n)?.[1];
    out.set(`${get('Package')} ${get('Version')}`, fields);
  }
  return out;
}

// Both database backends: the shared-file bookkeeping reads rows with LIKE and JSON text.
for (const backend of backends()) {
  describe(`source packages (${backend}): upload of a .dsc (or .changes) with its files, Sources, real apt-get source`, () => {
    let t: TestApp;
    let base: string;
    let admin: string;
    let work: { dir: string; cleanup: () => Promise<void> };
    let quilt: BuiltSource;
    let quilt2: BuiltSource;
    let native: BuiltSource;

    const send = async (file: string, files: readonly string[], fields: Record<string, string> = {}, names?: readonly string[]) => {
      const form = await multipartBody({ distribution: 'jammy', ...fields }, { path: file, filename: basename(file) }, files.map((p, i) => ({ path: p, filename: names?.[i] ?? basename(p) })));
      return t.app.inject({ method: 'POST', url: '/upload', headers: { ...bearer(admin), ...form.headers }, payload: form.payload });
    };
    const repoPath = (path: string) => join(t.ctx.repo.files.repoDir, path);
    const tempFiles = async () => (await readdir(t.ctx.repo.files.tempDir)).filter((n) => !n.startsWith('.'));

    before(async () => {
      work = await makeTempDir('tollgate-sources-e2e-');
      quilt = await buildSourcePackage(join(work.dir, 'quilt'), { name: 'hello-src', version: '1:2.4.1+ds1-1~acme1', format: '3.0 (quilt)', binaries: ['hello-bin', 'hello-doc'] });
      // The next revision of the same upstream version: it shares the .orig tarball.
      await mkdir(join(work.dir, 'quilt2'), { recursive: true });
      await copyFile(quilt.files.find((f) => f.endsWith('.orig.tar.gz'))!, join(work.dir, 'quilt2', 'hello-src_2.4.1+ds1.orig.tar.gz'));
      quilt2 = await buildSourcePackage(join(work.dir, 'quilt2'), { name: 'hello-src', version: '1:2.4.1+ds1-1~acme2', format: '3.0 (quilt)', binaries: ['hello-bin', 'hello-doc'], changes: true });
      native = await buildSourcePackage(join(work.dir, 'native'), { name: 'acme-tool', version: '0.3', format: '3.0 (native)', sign: true });
      t = await startTestApp({ backend });
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
      admin = await t.tokenFor('admin');
    });
    after(async () => {
      await t?.close();
      await work?.cleanup();
    });

    it('publishes a 3.0 (quilt) source package uploaded as its .dsc plus files, in main/source/Sources', async () => {
      const dscSha = (await exec('sha256sum', [quilt.dsc])).stdout.split(' ')[0]!;
      const res = await send(quilt.dsc, quilt.files, { sha256: dscSha });
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json();
      assert.deepEqual([body.status, body.name, body.version, body.arch, body.sha256], ['published', 'hello-src', '1:2.4.1+ds1-1~acme1', 'source', dscSha]);
      assert.match(body.steps[0].message, /valid source package \(\.dsc and 2 file\(s\)/);
      assert.equal(body.pipeline.provenance, 'verified');
      for (const f of [quilt.dsc, ...quilt.files]) {
        const published = await readFile(repoPath(`apt/pool/main/h/hello-src/${basename(f)}`));
        assert.ok(published.equals(await readFile(f)), basename(f));
      }
      const release = await readFile(repoPath('apt/dists/jammy/Release'), 'utf8');
      for (const v of ['Sources', 'Sources.gz', 'Sources.xz']) assert.match(release, new RegExp(` main/source/${v.replace('.', '\\.')}$`, 'm'));
      const sources = await readFile(repoPath('apt/dists/jammy/main/source/Sources'), 'utf8');
      assert.match(sources, /^Package: hello-src\nFormat: 3\.0 \(quilt\)\n/);
      assert.match(sources, /^Directory: pool\/main\/h\/hello-src$/m);
      // Never in a binary index or Contents.
      assert.doesNotMatch(await readFile(repoPath('apt/dists/jammy/main/binary-amd64/Packages'), 'utf8'), /hello-src/);
      assert.deepEqual(await tempFiles(), []);
    });

    it('takes a source-only .changes naming the .dsc and its files, checked against the .changes', async () => {
      const res = await send(quilt2.changes!, [quilt2.dsc, ...quilt2.files]);
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json();
      assert.deepEqual([body.status, body.name, body.version, body.arch], ['published', 'hello-src', '1:2.4.1+ds1-1~acme2', 'source']);
      // The answer's file is the .dsc, not the .changes.
      assert.equal(body.sha256, (await exec('sha256sum', [quilt2.dsc])).stdout.split(' ')[0]);
      // The same .dsc and files again: the stored result (200), nothing new kept.
      const again = await send(quilt2.dsc, quilt2.files);
      assert.equal(again.statusCode, 200, again.body);
      assert.equal(again.json().version, '1:2.4.1+ds1-1~acme2');
      assert.deepEqual(await tempFiles(), []);
      // A clear-signed .dsc, as real ones are (the signature is not required, and not checked).
      assert.match(await readFile(native.dsc, 'utf8'), /^-----BEGIN PGP SIGNED MESSAGE-----\n/);
      const native1 = await send(native.dsc, native.files);
      assert.equal(native1.statusCode, 201, native1.body);
      assert.equal(native1.json().arch, 'source');
    });

    it('refuses a missing file, a file whose bytes differ from the .dsc, and a .changes that disagrees: 422, nothing stored', async () => {
      const before = await t.ctx.db.selectFrom('packages').select('id').execute();
      const missing = await send(native.dsc, []);
      assert.equal(missing.statusCode, 422, missing.body);
      assert.equal(missing.json().code, 'source_file_missing');
      assert.match(missing.json().detail, /acme-tool_0\.3\.tar\.xz/);

      const other = await buildSourcePackage(join(work.dir, 'other'), { name: 'acme-tool', version: '0.4', format: '3.0 (native)' });
      const tampered = join(work.dir, 'tampered.tar.xz');
      await copyFile(other.files[0]!, tampered);
      const mismatch = await send(native.dsc.replace('acme-tool_0.3.dsc', 'acme-tool_0.3.dsc'), [tampered], { distribution: 'noble' }, ['acme-tool_0.3.tar.xz']);
      assert.equal(mismatch.statusCode, 422, mismatch.body);
      assert.equal(mismatch.json().code, 'source_checksum_mismatch');
      assert.equal(typeof mismatch.json().detail, 'string');

      const changesWrong = await send(quilt2.changes!, [quilt2.dsc, quilt2.files[0]!, tampered], {}, [basename(quilt2.dsc), basename(quilt2.files[0]!), basename(quilt2.files[1]!)]);
      assert.equal(changesWrong.statusCode, 422, changesWrong.body);
      assert.equal(changesWrong.json().code, 'source_checksum_mismatch');

      const after = await t.ctx.db.selectFrom('packages').select('id').execute();
      assert.equal(after.length, before.length);
      assert.deepEqual(await readdir(repoPath('apt/pool/main/a/acme-tool')), ['acme-tool_0.3.dsc', 'acme-tool_0.3.tar.xz']);
      assert.deepEqual(await tempFiles(), []);
    });

    it('writes the same stanzas as apt-ftparchive sources on the same pool', async () => {
      const ours = stanzas(await readFile(repoPath('apt/dists/jammy/main/source/Sources'), 'utf8'));
      const ref = await exec('apt-ftparchive', ['sources', 'pool'], repoPath('apt'));
      assert.equal(ref.code, 0, ref.stderr);
      const theirs = stanzas(ref.stdout);
      assert.deepEqual([...ours.keys()].sort(), ['acme-tool 0.3', 'hello-src 1:2.4.1+ds1-1~acme1', 'hello-src 1:2.4.1+ds1-1~acme2']);
      assert.deepEqual([...theirs.keys()].sort(), [...ours.keys()].sort());
      for (const [key, fields] of ours) assert.deepEqual(fields, theirs.get(key), key);
    });

    it('is fetched, checked and unpacked by a real apt-get source', async () => {
      const keyring = join(work.dir, 'tollgate.gpg');
      await writeFile(keyring, Buffer.from(await (await fetch(`${base}/repo/keys/tollgate.gpg`)).arrayBuffer()));
      const apt = await aptSandbox(join(work.dir, 'apt'));
      await apt.setSource(`deb-src [signed-by=${keyring}] ${base}/repo/apt jammy main`);
      const update = await apt.update();
      assert.equal(update.code, 0, update.stderr + update.stdout);
      assert.doesNotMatch(update.stderr, /^(W|E):/m, update.stderr);
      const got = await apt.source('hello-src=1:2.4.1+ds1-1~acme1');
      assert.equal(got.code, 0, got.stderr + got.stdout);
      const downloaded = await readdir(join(apt.dir, 'downloads'));
      for (const f of [quilt.dsc, ...quilt.files]) assert.ok(downloaded.includes(basename(f)), `${basename(f)} in ${downloaded.join(', ')}`);
      assert.ok(downloaded.includes('hello-src-2.4.1+ds1'), 'unpacked by dpkg-source');
      assert.equal(await readFile(join(apt.dir, 'downloads', 'hello-src-2.4.1+ds1', 'debian', 'source', 'format'), 'utf8'), '3.0 (quilt)\n');
      const nativeGot = await apt.source('acme-tool', { downloadOnly: true });
      assert.equal(nativeGot.code, 0, nativeGot.stderr + nativeGot.stdout);
      assert.ok((await readdir(join(apt.dir, 'downloads'))).includes('acme-tool_0.3.tar.xz'));
      // A file whose bytes no longer match Sources is refused by apt's hash check.
      await writeFile(repoPath('apt/pool/main/a/acme-tool/acme-tool_0.3.tar.xz'), 'tampered');
      const bad = await exec('sh', ['-c', 'rm -f acme-tool_0.3*'], join(apt.dir, 'downloads'));
      assert.equal(bad.code, 0);
      const refused = await apt.source('acme-tool', { downloadOnly: true });
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr + refused.stdout, /Hash Sum mismatch|File has unexpected size/);
      await copyFile(native.files[0]!, repoPath('apt/pool/main/a/acme-tool/acme-tool_0.3.tar.xz'));
    });

    it('lists it under arch source; delete keeps the .orig tarball another revision still names, then removes it with the last one', async () => {
      const listed = await t.app.inject({ method: 'GET', url: '/artifacts/hello-src', headers: bearer(admin) });
      assert.equal(listed.statusCode, 200, listed.body);
      assert.match(listed.body, /"arch":"source"/);
      const all = await t.app.inject({ method: 'GET', url: '/artifacts', headers: bearer(admin) });
      assert.match(all.body, /"hello-src"/);
      // Its install instructions are a deb-src line and apt-get source.
      const install = (await t.app.inject({ method: 'GET', url: '/artifacts/acme-tool/install', headers: bearer(admin) })).json();
      assert.match(install.source_line, /^deb-src \[signed-by=/);
      assert.equal(install.commands.at(-1), 'apt-get source acme-tool=0.3');
      const orig = 'apt/pool/main/h/hello-src/hello-src_2.4.1+ds1.orig.tar.gz';
      const del = await t.app.inject({ method: 'DELETE', url: `/artifacts/hello-src/${encodeURIComponent('1:2.4.1+ds1-1~acme1')}`, headers: bearer(admin) });
      assert.equal(del.statusCode, 200, del.body);
      const left = await readdir(repoPath('apt/pool/main/h/hello-src'));
      assert.deepEqual(left.sort(), ['hello-src_2.4.1+ds1-1~acme2.debian.tar.xz', 'hello-src_2.4.1+ds1-1~acme2.dsc', 'hello-src_2.4.1+ds1.orig.tar.gz']);
      const sources = await readFile(repoPath('apt/dists/jammy/main/source/Sources'), 'utf8');
      assert.doesNotMatch(sources, /acme1/);
      assert.match(sources, /^Version: 1:2\.4\.1\+ds1-1~acme2$/m);
      const last = await t.app.inject({ method: 'DELETE', url: '/artifacts/hello-src', headers: bearer(admin) });
      assert.equal(last.statusCode, 200, last.body);
      assert.equal((await exec('test', ['-e', repoPath(orig)])).code, 1);
      // The store keeps only the native package's .dsc and tarball.
      const stored = await exec('sh', ['-c', `find '${join(t.ctx.repo.files.repoDir, '..', 'store')}' -type f | wc -l`]);
      assert.equal(stored.stdout.trim(), '2');
    });

    it('is promoted with all its files; the target Sources lists it', async () => {
      const res = await t.app.inject({ method: 'POST', url: '/distributions/promote', headers: bearer(admin), payload: { name: 'acme-tool', version: '0.3', from_distribution: 'jammy', to_distribution: 'noble' } });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().promoted[0].result, 'copied');
      const sources = await readFile(repoPath('apt/dists/noble/main/source/Sources'), 'utf8');
      assert.match(sources, /^Package: acme-tool$/m);
      assert.match(sources, /^Directory: pool\/main\/a\/acme-tool$/m);
      assert.deepEqual((await readdir(repoPath('apt/pool/main/a/acme-tool'))).sort(), ['acme-tool_0.3.dsc', 'acme-tool_0.3.tar.xz']);
      // Deleting it from jammy keeps the files noble still publishes.
      const del = await t.app.inject({ method: 'DELETE', url: '/artifacts/acme-tool?distribution=jammy', headers: bearer(admin) });
      assert.equal(del.statusCode, 200, del.body);
      assert.deepEqual((await readdir(repoPath('apt/pool/main/a/acme-tool'))).sort(), ['acme-tool_0.3.dsc', 'acme-tool_0.3.tar.xz']);
      assert.doesNotMatch(await readFile(repoPath('apt/dists/jammy/main/source/Sources'), 'utf8'), /acme-tool/);
    });

    it('sync-index puts back a source file missing from the pool', async () => {
      const tarball = repoPath('apt/pool/main/a/acme-tool/acme-tool_0.3.tar.xz');
      await rm(tarball);
      const res = await t.app.inject({ method: 'POST', url: '/artifacts/admin/sync-index', headers: bearer(admin) });
      assert.equal(res.statusCode, 200, res.body);
      assert.ok(res.json().relinked >= 1, res.body);
      assert.deepEqual(res.json().missing_files, []);
      assert.ok((await readFile(tarball)).equals(await readFile(native.files[0]!)));
    });

    it('in a distribution of its own: listed in each component\'s Sources; retiring it removes the files only it published', async () => {
      const created = await t.app.inject({ method: 'POST', url: '/distributions', headers: bearer(admin), payload: { codename: 'acme-src', format: 'deb', components: ['main', 'extra'], architectures: ['amd64', 'arm64'] } });
      assert.equal(created.statusCode, 201, created.body);
      const built = await buildSourcePackage(join(work.dir, 'retire'), { name: 'retire-me', version: '1.0', format: '3.0 (native)' });
      const res = await send(built.dsc, built.files, { distribution: 'acme-src', component: 'extra' });
      assert.equal(res.statusCode, 201, res.body);
      assert.match(await readFile(repoPath('apt/dists/acme-src/extra/source/Sources'), 'utf8'), /^Directory: pool\/extra\/r\/retire-me$/m);
      assert.equal(await readFile(repoPath('apt/dists/acme-src/main/source/Sources'), 'utf8'), '');
      const release = await readFile(repoPath('apt/dists/acme-src/Release'), 'utf8');
      for (const index of ['main/source/Sources.xz', 'extra/source/Sources.xz', 'extra/binary-arm64/Packages.xz']) assert.match(release, new RegExp(` ${index.replace(/\./g, '\\.')}$`, 'm'));
      assert.deepEqual((await readdir(repoPath('apt/pool/extra/r/retire-me'))).sort(), ['retire-me_1.0.dsc', 'retire-me_1.0.tar.xz']);
      const retired = await t.app.inject({ method: 'DELETE', url: '/distributions/acme-src', headers: bearer(admin) });
      assert.ok(retired.statusCode < 300, retired.body);
      assert.deepEqual(await readdir(repoPath('apt/pool/extra/r/retire-me')), []);
    });
  });
}

describe('source packages: the CVE step matches the source package by name and version', () => {
  let t: TestApp;
  let admin: string;
  let work: { dir: string; cleanup: () => Promise<void> };
  let feeds: FeedServer;

  before(async () => {
    work = await makeTempDir('tollgate-sources-cve-');
    // Ubuntu advisories name source packages: this one is fixed in 1:2.4.1+ds1-2.
    await writeOsvFeed(join(work.dir, 'osv.json'), [
      { id: 'USN-9001-1', ecosystem: 'Ubuntu:22.04:LTS', pkg: 'vuln-src', cves: ['CVE-2026-9001'], fixed: '1:2.4.1+ds1-2', severity: 'high' },
    ]);
    feeds = await startFeedServer(work.dir);
    t = await startTestApp();
    admin = await t.tokenFor('admin');
    await patchSettings(t, admin, { vuln_feeds: [{ name: 'test', url: feeds.url('osv.json'), format: 'osv' }] });
    const sync = await t.app.inject({ method: 'POST', url: '/import/sync-security', headers: bearer(admin) });
    assert.equal(sync.statusCode, 200, sync.body);
  });
  after(async () => {
    await t?.close();
    await feeds?.close();
    await work?.cleanup();
  });

  it('holds an affected source version for review (policy: high → review), out of Sources; a fixed one is published', async () => {
    const send = async (built: BuiltSource) => {
      const form = await multipartBody({ distribution: 'jammy' }, { path: built.dsc, filename: basename(built.dsc) }, built.files.map((p) => ({ path: p, filename: basename(p) })));
      return t.app.inject({ method: 'POST', url: '/upload', headers: { ...bearer(admin), ...form.headers }, payload: form.payload });
    };
    const affected = await buildSourcePackage(join(work.dir, 'a'), { name: 'vuln-src', version: '1:2.4.1+ds1-1', format: '3.0 (quilt)' });
    const res = await send(affected);
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    assert.deepEqual([body.status, body.arch, body.findings.high, body.pipeline.cve_scan], ['pending_review', 'source', 1, 'pending_review']);
    assert.match(JSON.stringify(body.reasons), /CVE-2026-9001/);
    const sources = await readFile(join(t.ctx.repo.files.repoDir, 'apt/dists/jammy/main/source/Sources'), 'utf8').catch(() => '');
    assert.doesNotMatch(sources, /vuln-src/);
    assert.equal((await exec('test', ['-e', join(t.ctx.repo.files.repoDir, 'apt/pool/main/v/vuln-src/vuln-src_2.4.1+ds1.orig.tar.gz')])).code, 1, 'a held package is not in the pool');

    // Accepting the risk publishes it with all its files.
    const decide = await t.app.inject({ method: 'POST', url: `/security/packages/vuln-src/${encodeURIComponent('1:2.4.1+ds1-1')}/decide`, headers: bearer(admin), payload: { action: 'accept_risk', justification: 'internal build only' } });
    assert.equal(decide.statusCode, 200, decide.body);
    const listed = await readdir(join(t.ctx.repo.files.repoDir, 'apt/pool/main/v/vuln-src'));
    assert.deepEqual(listed.sort(), ['vuln-src_2.4.1+ds1-1.debian.tar.xz', 'vuln-src_2.4.1+ds1-1.dsc', 'vuln-src_2.4.1+ds1.orig.tar.gz']);

    await mkdir(join(work.dir, 'b'), { recursive: true });
    await copyFile(affected.files.find((f) => f.endsWith('.orig.tar.gz'))!, join(work.dir, 'b', 'vuln-src_2.4.1+ds1.orig.tar.gz'));
    const fixed = await send(await buildSourcePackage(join(work.dir, 'b'), { name: 'vuln-src', version: '1:2.4.1+ds1-2', format: '3.0 (quilt)' }));
    assert.equal(fixed.statusCode, 201, fixed.body);
    assert.equal(fixed.json().status, 'published');
    assert.equal(fixed.json().findings.high, 0);
  });
});

describe('source packages: the antivirus scans every file (real clamd)', () => {
  let clamd: RunningClamd;
  let t: TestApp;
  let admin: string;
  let work: { dir: string; cleanup: () => Promise<void> };

  before(async () => {
    work = await makeTempDir('tollgate-sources-av-');
    clamd = await startClamd();
    t = await startTestApp({ env: { CLAMAV_SOCKET: clamd.socket } });
    admin = await t.tokenFor('admin');
  });
  after(async () => {
    await t?.close();
    await clamd?.stop();
    await work?.cleanup();
  });

  it('quarantines a source package whose .orig tarball holds EICAR: every file in quarantine, none in the pool or Sources', async () => {
    const built = await buildSourcePackage(join(work.dir, 'evil'), { name: 'evil-src', version: '1.0-1', format: '3.0 (quilt)', files: { 'README': 'hello\n', 'data/eicar.txt': `${EICAR}\n` } });
    const form = await multipartBody({ distribution: 'jammy' }, { path: built.dsc, filename: basename(built.dsc) }, built.files.map((p) => ({ path: p, filename: basename(p) })));
    const res = await t.app.inject({ method: 'POST', url: '/upload', headers: { ...bearer(admin), ...form.headers }, payload: form.payload });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    assert.deepEqual([body.status, body.arch, body.pipeline.antivirus], ['quarantined', 'source', 'infected']);
    assert.match(body.reasons.join('; '), new RegExp(`${EICAR_SIGNATURE}.*evil-src_1\\.0\\.orig\\.tar\\.gz`));
    const quarantined = await readdir(join(t.ctx.repo.files.repoDir, '..', 'quarantine'));
    for (const f of [built.dsc, ...built.files]) {
      const sha = (await exec('sha256sum', [f])).stdout.split(' ')[0]!;
      assert.ok(quarantined.includes(sha), `${basename(f)} in quarantine`);
    }
    assert.equal((await exec('test', ['-e', join(t.ctx.repo.files.repoDir, 'apt/pool/main/e/evil-src')])).code, 1);
    assert.doesNotMatch(await readFile(join(t.ctx.repo.files.repoDir, 'apt/dists/jammy/main/source/Sources'), 'utf8').catch(() => ''), /evil-src/);
    // A clean one passes with every file scanned.
    const clean = await buildSourcePackage(join(work.dir, 'clean'), { name: 'clean-src', version: '1.0', format: '3.0 (native)' });
    const cleanForm = await multipartBody({ distribution: 'jammy' }, { path: clean.dsc, filename: basename(clean.dsc) }, [{ path: clean.files[0]!, filename: basename(clean.files[0]!) }]);
    const ok = await t.app.inject({ method: 'POST', url: '/upload', headers: { ...bearer(admin), ...cleanForm.headers }, payload: cleanForm.payload });
    assert.equal(ok.statusCode, 201, ok.body);
    assert.deepEqual([ok.json().status, ok.json().pipeline.antivirus], ['published', 'clean']);
    assert.match(ok.json().steps.find((s: { name: string }) => s.name === 'antivirus').message, /in 2 part\(s\)/);
  });
});
