import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { aptSandbox, exec } from '../helpers/apt.js';
import { bearer, startTestApp, type TestApp } from '../helpers/app.js';
import { buildDeb } from '../../harness/debs.js';
import { serveDir } from '../../harness/upstream.js';
import { multipartBody } from '../../harness/multipart.js';
import { makeTempDir } from '../helpers/tmp.js';

const sha256 = async (path: string) => createHash('sha256').update(await readFile(path)).digest('hex');

// A version as real archives have them: an epoch, `+` (repacks, backports) and `~` (sorts before).
const VERSION = '1:1.2.0+dfsg-3~bpo12+1';
const CANDIDATE = /Candidate: 1:1\.2\.0\+dfsg-3~bpo12\+1/;
const POOL_FILE = 'tollgate-hello_1.2.0+dfsg-3~bpo12+1_amd64.deb';

describe('APT end to end: upload, signed index, a real apt-get', () => {
  let t: TestApp;
  let base: string;
  let admin: string;
  let work: { dir: string; cleanup: () => Promise<void> };
  let debPath: string;

  const upload = async (path: string, distribution: string, extra: Record<string, string> = {}) => {
    const form = await multipartBody({ distribution, ...extra }, { path });
    return t.app.inject({ method: 'POST', url: '/upload/', headers: { ...bearer(admin), ...form.headers }, payload: form.payload });
  };

  const keyring = async (name: string) => {
    const res = await fetch(`${base}/repo/keys/tollgate.gpg`);
    assert.equal(res.status, 200);
    const path = join(work.dir, name);
    await writeFile(path, Buffer.from(await res.arrayBuffer()));
    return path;
  };

  before(async () => {
    work = await makeTempDir('tollgate-apt-e2e-');
    t = await startTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    admin = await t.tokenFor('admin');
    debPath = await buildDeb(work.dir, {
      name: 'tollgate-hello',
      version: VERSION,
      arch: 'amd64',
      description: 'greets the world\n A test package published by Tollgate.',
      files: { 'usr/bin/tollgate-hello': '#!/bin/sh\necho hello\n' },
    });
  });
  after(async () => {
    await t.close();
    await work.cleanup();
  });

  it('publishes an upload and answers 201 with every pipeline step', async () => {
    const res = await upload(debPath, 'jammy', { sha256: await sha256(debPath) });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    assert.equal(body.status, 'published');
    assert.equal(body.package, 'tollgate-hello');
    assert.equal(body.version, VERSION);
    assert.deepEqual(body.steps.map((s: { name: string }) => s.name), ['format', 'provenance', 'antivirus', 'cve', 'signature', 'dependencies']);
    assert.equal(body.pipeline.provenance, 'verified');
    assert.equal(body.pipeline.antivirus, 'skipped', 'no clamd configured: skipped, never a silent clean');
    assert.equal(body.pipeline.gpg, 'signed');
    assert.equal(body.pipeline.dependencies, 'satisfied');
  });

  it('answers an identical re-upload with 200 and a different file with the same version with 409', async () => {
    const again = await upload(debPath, 'jammy');
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.json().status, 'published');
    await mkdir(join(work.dir, 'other'));
    const other = await buildDeb(join(work.dir, 'other'), { name: 'tollgate-hello', version: VERSION, arch: 'amd64', files: { 'usr/share/doc/x': 'different' } });
    const conflict = await upload(other, 'jammy');
    assert.equal(conflict.statusCode, 409);
    assert.equal(conflict.json().code, 'version_exists');
    assert.equal(conflict.json().existing_sha256, await sha256(debPath));
    assert.equal(conflict.json().incoming_sha256, await sha256(other));
  });

  it('serves an index that gpgv verifies and apt-get accepts; the downloaded file matches', async () => {
    const key = await keyring('tollgate.gpg');
    const dists = join(t.dataDir, 'repo', 'apt', 'dists', 'jammy');
    const inRelease = await exec('gpgv', ['--keyring', key, join(dists, 'InRelease')]);
    assert.equal(inRelease.code, 0, inRelease.stderr);
    const detached = await exec('gpgv', ['--keyring', key, join(dists, 'Release.gpg'), join(dists, 'Release')]);
    assert.equal(detached.code, 0, detached.stderr);

    const apt = await aptSandbox(join(work.dir, 'client'));
    await apt.setSource(`deb [signed-by=${key}] ${base}/repo/apt jammy main`);
    await apt.updateCleanly();
    const download = await apt.download('tollgate-hello');
    assert.equal(download.code, 0, download.stderr);
    const [file] = await readdir(join(apt.dir, 'downloads'));
    // apt names the download with the epoch, percent-encoded; it fetched the pool file as %2b-encoded.
    assert.equal(file, 'tollgate-hello_1%3a1.2.0+dfsg-3~bpo12+1_amd64.deb');
    assert.equal(await sha256(join(apt.dir, 'downloads', file!)), await sha256(debPath));
  });

  it('serves a Release.gpg that apt-get accepts without InRelease (one signature serves both)', async () => {
    const key = await keyring('tollgate-detached.gpg');
    const copy = join(work.dir, 'detached-only');
    await mkdir(copy, { recursive: true });
    assert.equal((await exec('cp', ['-r', join(t.dataDir, 'repo', 'apt'), copy])).code, 0);
    await rm(join(copy, 'apt', 'dists', 'jammy', 'InRelease'));
    const mirror = await serveDir(copy);
    try {
      const apt = await aptSandbox(join(work.dir, 'client-detached'));
      await apt.setSource(`deb [signed-by=${key}] ${mirror.url}/apt jammy main`);
      await apt.updateCleanly();
      assert.ok(mirror.requests.includes('/apt/dists/jammy/Release.gpg'), mirror.requests.join(' '));
      const download = await apt.download('tollgate-hello');
      assert.equal(download.code, 0, download.stderr);
    } finally {
      await mirror.close();
    }
  });

  it('offers a promoted package in the target distribution', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/distributions/promote', headers: bearer(admin), payload: { package: 'tollgate-hello', from_dist: 'jammy', to_dist: 'noble' } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().promoted[0].result, 'copied');
    const key = await keyring('promote.gpg');
    const apt = await aptSandbox(join(work.dir, 'noble-client'));
    await apt.setSource(`deb [signed-by=${key}] ${base}/repo/apt noble main`);
    assert.equal((await apt.update()).code, 0);
    const policy = await apt.policy('tollgate-hello');
    assert.match(policy.stdout, CANDIDATE);
  });

  it('stops offering a deleted package', async () => {
    const res = await t.app.inject({ method: 'DELETE', url: `/artifacts/tollgate-hello/${encodeURIComponent(VERSION)}?distribution=jammy`, headers: bearer(admin) });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().deleted, 1);
    const key = await keyring('delete.gpg');
    const apt = await aptSandbox(join(work.dir, 'client-after-delete'));
    await apt.setSource(`deb [signed-by=${key}] ${base}/repo/apt jammy main`);
    assert.equal((await apt.update()).code, 0);
    const policy = await apt.policy('tollgate-hello');
    assert.doesNotMatch(policy.stdout, CANDIDATE);
    // noble still has its copy, and the pool file it shares is still there
    const noble = await fetch(`${base}/repo/apt/pool/main/t/tollgate-hello/${POOL_FILE}`);
    assert.equal(noble.status, 200);
  });

  it('re-signs every index on key rotation: clients with the new key verify, the old key no longer does', async () => {
    const oldKey = await keyring('old.gpg');
    const res = await t.app.inject({ method: 'POST', url: '/settings/gpg/generate', headers: bearer(admin), payload: { name: 'Rotated Key', email: 'rotated@example.org', algorithm: 'ed25519' } });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().key_count, 2);
    const newKey = await keyring('new.gpg');
    const fresh = await aptSandbox(join(work.dir, 'rotated-client'));
    await fresh.setSource(`deb [signed-by=${newKey}] ${base}/repo/apt noble main`);
    const ok = await fresh.update();
    assert.equal(ok.code, 0, ok.stderr);
    assert.match((await fresh.policy('tollgate-hello')).stdout, CANDIDATE);
    const stale = await aptSandbox(join(work.dir, 'stale-client'));
    await stale.setSource(`deb [signed-by=${oldKey}] ${base}/repo/apt noble main`);
    const refused = await stale.update();
    assert.match(refused.stderr + refused.stdout, /NO_PUBKEY|not signed|signatures couldn't be verified|is not signed/);
    const audit = await t.ctx.db.selectFrom('audit_index').select('action').where('action', '=', 'GPG_GENERATE').execute();
    assert.equal(audit.length, 1);
  });
});
