import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFile, mkdir, readdir, readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { exec } from '../helpers/apt.js';
import { bearer, startTestApp, type TestApp } from '../helpers/app.js';
import { dnfSandbox } from '../helpers/dnf.js';
import { multipartBody } from '../../harness/multipart.js';
import { buildRpm } from '../../harness/rpms.js';
import { makeTempDir } from '../helpers/tmp.js';
import { primaryEntries } from '../helpers/rpm-primary.js';

const sha256 = async (path: string) => createHash('sha256').update(await readFile(path)).digest('hex');

describe('RPM end to end: upload, signed repodata, a real dnf, createrepo_c agrees', () => {
  let t: TestApp;
  let base: string;
  let admin: string;
  let work: { dir: string; cleanup: () => Promise<void> };
  const rpms: string[] = [];
  const uploaded = new Map<string, { signature: { sha256: string } }>();

  const upload = async (path: string, distribution: string) => {
    const form = await multipartBody({ distribution }, { path });
    return t.app.inject({ method: 'POST', url: '/upload', headers: { ...bearer(admin), ...form.headers }, payload: form.payload });
  };

  before(async () => {
    work = await makeTempDir('tollgate-rpm-e2e-');
    t = await startTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    admin = await t.tokenFor('admin');
    rpms.push(await buildRpm(work.dir, {
      name: 'tollgate-tool', version: '2.1+git20240101~rc1', release: '3.el9', epoch: 1, arch: 'x86_64', payloadCompression: 'gzip',
      requires: ['tollgate-lib >= 1.0'], provides: ['tollgate-cli = 2.1+git20240101~rc1'],
      files: { '/usr/bin/tollgate-tool': '#!/bin/sh\necho tool\n', '/etc/tollgate-tool.conf': 'x=1\n' }, noAutoReqProv: true,
    }));
    rpms.push(await buildRpm(work.dir, {
      name: 'tollgate-lib', version: '1.4', release: '1.el9', arch: 'noarch', payloadCompression: 'zstd',
      files: { '/usr/share/tollgate/lib.txt': 'lib\n' }, noAutoReqProv: true,
    }));
  });
  after(async () => {
    await t.close();
    await work.cleanup();
  });

  it('publishes uploads, checks Requires against Provides, and rejects other architectures', async () => {
    const first = await upload(rpms[0]!, 'rocky9');
    assert.equal(first.statusCode, 201, first.body);
    uploaded.set('tollgate-tool', first.json());
    assert.equal(first.json().sha256, await sha256(rpms[0]!), 'the answer names the uploaded bytes');
    assert.equal(first.json().status, 'published');
    assert.equal(first.json().version, '1:2.1+git20240101~rc1-3.el9');
    assert.equal(first.json().pipeline.dependencies, 'missing', 'tollgate-lib is not published yet');
    const second = await upload(rpms[1]!, 'rocky9');
    assert.equal(second.json().status, 'published');
    const deps = await t.app.inject({ method: 'GET', url: '/artifacts/tollgate-tool/dependencies', headers: bearer(admin) });
    assert.deepEqual(deps.json(), { name: 'tollgate-tool', version: '1:2.1+git20240101~rc1-3.el9', distribution: 'rocky9', all_satisfied: true, install_blocked: false, missing: [] });
    const wrongDist = await upload(rpms[1]!, 'jammy');
    assert.equal(wrongDist.statusCode, 422);
    assert.equal(wrongDist.json().status, 'rejected');
  });

  it('serves repodata that dnf verifies (repo_gpgcheck) and downloads with a matching checksum', async () => {
    const dnf = await dnfSandbox(join(work.dir, 'dnf'), { id: 'tollgate-rocky9', baseurl: `${base}/repo/rpm/rocky9/x86_64/`, gpgkey: `${base}/repo/keys/tollgate.asc` });
    const cache = await dnf.makecache();
    assert.equal(cache.code, 0, cache.stderr + cache.stdout);
    const list = await dnf.list('tollgate-tool');
    assert.match(list.stdout, /tollgate-tool\.x86_64\s+1:2\.1\+git20240101~rc1-3\.el9/);
    const download = await dnf.download('tollgate-tool');
    assert.equal(download.code, 0, download.stderr);
    const [file] = await readdir(join(dnf.dir, 'downloads'));
    // What dnf gets is the signed copy the upload answered with, not the uploaded bytes.
    assert.equal(await sha256(join(dnf.dir, 'downloads', file!)), uploaded.get('tollgate-tool')!.signature.sha256);
    assert.notEqual(uploaded.get('tollgate-tool')!.signature.sha256, await sha256(rpms[0]!));
    const asc = await exec('gpgv', ['--version']);
    assert.equal(asc.code, 0);
  });

  it('gives the install command with a .repo file that has gpgcheck=1, repo_gpgcheck=1 and the key URL', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/artifacts/tollgate-tool/install', headers: bearer(admin) });
    assert.equal(res.statusCode, 200);
    assert.match(res.json().repo_file, /^gpgcheck=1$/m);
    assert.match(res.json().repo_file, /^repo_gpgcheck=1$/m);
    assert.match(res.json().repo_file, /gpgkey=.*\/repo\/keys\/tollgate\.asc/);
    assert.match(res.json().commands.at(-1), /dnf install 'tollgate-tool-2\.1\+git20240101~rc1-3\.el9\.x86_64'$/);
  });

  it('lists the same entries as createrepo_c for the same (signed) packages', async () => {
    const ref = join(work.dir, 'createrepo');
    await mkdir(join(ref, 'Packages'), { recursive: true });
    const published = join(t.dataDir, 'repo', 'rpm', 'rocky9', 'x86_64', 'Packages');
    const served = (await readdir(published, { recursive: true })).filter((f) => f.endsWith('.rpm'));
    assert.equal(served.length, rpms.length);
    for (const r of served) await copyFile(join(published, r), join(ref, 'Packages', r.split('/').at(-1)!));
    const made = await exec('createrepo_c', ['--quiet', ref]);
    assert.equal(made.code, 0, made.stderr);
    const refPrimary = (await readdir(join(ref, 'repodata'))).find((f) => f.endsWith('primary.xml.gz'))!;
    const ours = join(t.dataDir, 'repo', 'rpm', 'rocky9', 'x86_64', 'repodata');
    const repomd = await readFile(join(ours, 'repomd.xml'), 'utf8');
    const href = /<location href="repodata\/([0-9a-f]{64}-primary\.xml\.gz)"/.exec(repomd)![1]!;
    // createrepo_c reads the files from one flat folder: every field but the location must agree.
    const entries = async (path: string) => primaryEntries(gunzipSync(await readFile(path)).toString('utf8')).map(({ location: _location, ...entry }) => entry);
    const a = await entries(join(ours, href));
    const b = await entries(join(ref, 'repodata', refPrimary));
    assert.deepEqual(a, b);
  });

  it('shows deletions and promotions to dnf as it does to apt', async () => {
    const promote = await t.app.inject({ method: 'POST', url: '/distributions/promote', headers: bearer(admin), payload: { name: 'tollgate-lib', version: '1.4-1.el9', from_distribution: 'rocky9', to_distribution: 'almalinux9' } });
    assert.equal(promote.statusCode, 200, promote.body);
    const alma = await dnfSandbox(join(work.dir, 'dnf-alma'), { id: 'tollgate-alma9', baseurl: `${base}/repo/rpm/almalinux9/x86_64/`, gpgkey: `${base}/repo/keys/tollgate.asc` });
    assert.match((await alma.list('tollgate-lib')).stdout, /tollgate-lib\.noarch\s+1\.4-1\.el9/);
    const crossFormat = await t.app.inject({ method: 'POST', url: '/distributions/promote', headers: bearer(admin), payload: { name: 'tollgate-lib', version: '1.4-1.el9', from_distribution: 'rocky9', to_distribution: 'jammy' } });
    assert.equal(crossFormat.statusCode, 422);
    const del = await t.app.inject({ method: 'DELETE', url: '/artifacts/tollgate-tool', headers: bearer(admin) });
    assert.equal(del.statusCode, 200);
    const rocky = await dnfSandbox(join(work.dir, 'dnf-after-delete'), { id: 'tollgate-rocky9b', baseurl: `${base}/repo/rpm/rocky9/x86_64/`, gpgkey: `${base}/repo/keys/tollgate.asc` });
    const gone = await rocky.list('tollgate-tool');
    assert.doesNotMatch(gone.stdout, /tollgate-tool\.x86_64/);
    assert.match((await rocky.list('tollgate-lib')).stdout, /tollgate-lib\.noarch/);
  });
});
