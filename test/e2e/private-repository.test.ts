import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { aptSandbox } from '../helpers/apt.js';
import { bearer, startTestApp, type TestApp } from '../helpers/app.js';
import { dnfSandbox } from '../helpers/dnf.js';
import { buildDeb } from '../../harness/debs.js';
import { multipartBody } from '../../harness/multipart.js';
import { buildRpm } from '../../harness/rpms.js';
import { makeTempDir } from '../helpers/tmp.js';

describe('private distributions: apt and dnf read them with an API token or a read token, and nothing without one', () => {
  let t: TestApp;
  let base: string;
  let admin: string;
  let token: string;
  let work: { dir: string; cleanup: () => Promise<void> };
  const basic = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });

  const upload = async (path: string, distribution: string) => {
    const form = await multipartBody({ distribution }, { path });
    const res = await t.app.inject({ method: 'POST', url: '/upload', headers: { ...bearer(admin), ...form.headers }, payload: form.payload });
    assert.equal(res.statusCode, 201, res.body);
  };
  const create = async (body: Record<string, unknown>) => {
    const res = await t.app.inject({ method: 'POST', url: '/distributions', headers: bearer(admin), payload: body });
    assert.equal(res.statusCode, 201, res.body);
  };

  before(async () => {
    work = await makeTempDir('tollgate-private-e2e-');
    t = await startTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    admin = await t.tokenFor('admin');
    // The install instructions name the service by its public URL.
    const url = await t.app.inject({ method: 'PATCH', url: '/settings', headers: bearer(admin), payload: { app_url: base } });
    assert.equal(url.statusCode, 200, url.body);
    // A build host's API token (tokens are made by uploaders and up, for themselves).
    const builder = await t.tokenFor('uploader', 'ci-builder');
    const made = await t.app.inject({ method: 'POST', url: '/auth/api-tokens', headers: bearer(builder), payload: { name: 'apt on build hosts' } });
    assert.equal(made.statusCode, 201, made.body);
    token = made.json().token;
    await create({ codename: 'acme-private', format: 'deb', private: true, architectures: ['amd64'] });
    await create({ codename: 'acme-private-el9', format: 'rpm', private: true, architectures: ['x86_64'] });
    // Another team's private distribution: a read token for acme-private does not open it.
    await create({ codename: 'acme-other', format: 'deb', private: true, architectures: ['amd64'] });
    const debDir = join(work.dir, 'deb');
    await mkdir(debDir);
    await upload(await buildDeb(debDir, { name: 'acme-secret', version: '3.1.4+really3.1-2', arch: 'amd64', files: { 'usr/share/acme-secret/f': 'secret' } }), 'acme-private');
    // The same file in a public distribution stays public there: a pool file is shared.
    await upload(await buildDeb(debDir, { name: 'acme-shared', version: '1.0-1', arch: 'amd64', files: { 'usr/share/acme-shared/f': 'shared' } }), 'acme-private');
    const shared = join(debDir, 'acme-shared_1.0-1_amd64.deb');
    await upload(shared, 'bookworm');
    await upload(await buildDeb(debDir, { name: 'acme-other-tool', version: '0.9-1', arch: 'amd64', files: { 'usr/share/acme-other-tool/f': 'other' } }), 'acme-other');
    const rpmDir = join(work.dir, 'rpm');
    await mkdir(rpmDir);
    await upload(await buildRpm(rpmDir, { name: 'acme-secret', version: '3.1.4', release: '2.el9', files: { '/usr/share/acme-secret/f': 'secret' } }), 'acme-private-el9');
  });
  after(async () => {
    await t.close();
    await work.cleanup();
  });

  it('answers 401 with a Basic challenge for the index and the package files without credentials or with a wrong token', async () => {
    for (const path of ['apt/dists/acme-private/InRelease', 'apt/dists/acme-private/main/binary-amd64/Packages', 'apt/pool/main/a/acme-secret/acme-secret_3.1.4+really3.1-2_amd64.deb', 'rpm/acme-private-el9/x86_64/repodata/repomd.xml']) {
      const anonymous = await fetch(`${base}/repo/${path}`);
      assert.equal(anonymous.status, 401, path);
      assert.match(anonymous.headers.get('www-authenticate') ?? '', /^Basic realm="Tollgate repository"/);
      assert.equal(((await anonymous.json()) as { code: string }).code, 'not_authenticated');
      const wrong = await fetch(`${base}/repo/${path}`, { headers: basic('ci-builder', 'tg_not-a-token') });
      assert.equal(wrong.status, 401, path);
      const right = await fetch(`${base}/repo/${path}`, { headers: basic('ci-builder', token) });
      assert.equal(right.status, 200, path);
      assert.match(right.headers.get('cache-control') ?? '', /^private/);
    }
    // Public distributions, the key and a pool file a public distribution publishes too need nothing.
    for (const path of ['apt/dists/bookworm/InRelease', 'keys/tollgate.asc', 'apt/pool/main/a/acme-shared/acme-shared_1.0-1_amd64.deb']) {
      assert.equal((await fetch(`${base}/repo/${path}`)).status, 200, path);
    }
  });

  it('is read by apt-get with an auth.conf.d entry, and refused without it', async () => {
    const keyring = join(work.dir, 'tollgate.gpg');
    await writeFile(keyring, Buffer.from(await (await fetch(`${base}/repo/keys/tollgate.gpg`)).arrayBuffer()));
    const apt = await aptSandbox(join(work.dir, 'apt'));
    await apt.setSource(`deb [signed-by=${keyring}] ${base}/repo/apt acme-private main`);
    const refused = await apt.update();
    assert.match(refused.stdout + refused.stderr, /401/, 'apt reports the refusal');
    // The entry the install instructions give, with the token where they put $TOLLGATE_TOKEN.
    const install = (await t.app.inject({ method: 'GET', url: '/artifacts/acme-secret/install?distribution=acme-private', headers: bearer(admin) })).json();
    assert.ok(install.auth_conf, 'the install answer carries the auth.conf entry');
    assert.ok(!JSON.stringify(install).includes(token), 'no token in the answer');
    await writeFile(join(apt.dir, 'etc', 'auth.conf.d', 'tollgate.conf'), install.auth_conf.replaceAll('<API token>', token).replaceAll('login admin', 'login ci-builder'), { mode: 0o600 });
    const update = await apt.update();
    assert.equal(update.code, 0, update.stderr + update.stdout);
    assert.doesNotMatch(update.stderr, /^(W|E):/m, update.stderr);
    const download = await apt.download('acme-secret');
    assert.equal(download.code, 0, download.stderr + download.stdout);
    assert.ok(existsSync(join(apt.dir, 'downloads', 'acme-secret_3.1.4+really3.1-2_amd64.deb')));
  });

  it('is read by dnf with username and password in the .repo file, and refused without them', async () => {
    const repo = { id: 'acme-private', baseurl: `${base}/repo/rpm/acme-private-el9/x86_64/`, gpgkey: `${base}/repo/keys/tollgate.asc` };
    const without = await dnfSandbox(join(work.dir, 'dnf-anonymous'), repo);
    const refused = await without.repoquery(['--refresh', '--setopt=skip_if_unavailable=False', 'acme-secret']);
    assert.notEqual(refused.code, 0, 'dnf cannot read the repository anonymously');
    assert.match(refused.stderr, /401/);
    const withAuth = await dnfSandbox(join(work.dir, 'dnf'), repo);
    const repoFile = join(withAuth.dir, 'repos.d', 'acme-private.repo');
    const { readFile } = await import('node:fs/promises');
    await writeFile(repoFile, `${(await readFile(repoFile, 'utf8')).trimEnd()}\nusername=ci-builder\npassword=${token}\n`);
    const query = await withAuth.repoquery(['--refresh', '--qf', '%{name}-%{version}-%{release}', 'acme-secret']);
    assert.equal(query.code, 0, query.stderr);
    assert.match(query.stdout, /^acme-secret-3\.1\.4-2\.el9$/m);
    const download = await withAuth.download('acme-secret');
    assert.equal(download.code, 0, download.stderr);
  });

  it('is read by apt-get with a tg_r_ read token scoped to it; the token opens no other private distribution, no API route, and is counted for its downloads until revoked', async () => {
    const builderSession = await t.login('ci-builder', 'Passw0rd!');
    const made = await t.app.inject({
      method: 'POST', url: '/auth/api-tokens', headers: bearer(builderSession),
      payload: { name: 'apt on acme hosts', kind: 'read', distributions: ['acme-private', 'acme-private-el9'] },
    });
    assert.equal(made.statusCode, 201, made.body);
    const read = made.json() as { token: string; token_id: string };
    assert.match(read.token, /^tg_r_[A-Za-z0-9_-]{43}$/);
    const keyring = join(work.dir, 'tollgate.gpg');
    await writeFile(keyring, Buffer.from(await (await fetch(`${base}/repo/keys/tollgate.gpg`)).arrayBuffer()));
    const host = base.replace(/^https:\/\//, '');
    // The auth.conf.d entries the install instructions give, for the two distributions, holding the read token.
    const entries = (codename: string) =>
      `machine ${host}/repo/apt/dists/${codename}/ login ci-builder password ${read.token}\nmachine ${host}/repo/apt/pool/ login ci-builder password ${read.token}\n`;

    const apt = await aptSandbox(join(work.dir, 'apt-read-token'));
    await apt.setSource(`deb [signed-by=${keyring}] ${base}/repo/apt acme-private main`);
    await writeFile(join(apt.dir, 'etc', 'auth.conf.d', 'tollgate.conf'), entries('acme-private'), { mode: 0o600 });
    const update = await apt.update();
    assert.equal(update.code, 0, update.stderr + update.stdout);
    assert.doesNotMatch(update.stderr, /^(W|E):/m, update.stderr);
    const download = await apt.download('acme-secret');
    assert.equal(download.code, 0, download.stderr + download.stdout);
    assert.ok(existsSync(join(apt.dir, 'downloads', 'acme-secret_3.1.4+really3.1-2_amd64.deb')));

    // The same token for another private distribution: apt is refused with 401.
    const other = await aptSandbox(join(work.dir, 'apt-read-token-other'));
    await other.setSource(`deb [signed-by=${keyring}] ${base}/repo/apt acme-other main`);
    await writeFile(join(other.dir, 'etc', 'auth.conf.d', 'tollgate.conf'), entries('acme-other'), { mode: 0o600 });
    const refused = await other.update();
    assert.match(refused.stdout + refused.stderr, /401/, refused.stdout + refused.stderr);
    const direct = await fetch(`${base}/repo/apt/dists/acme-other/InRelease`, { headers: basic('ci-builder', read.token) });
    assert.equal(direct.status, 401);
    assert.equal(((await direct.json()) as { code: string }).code, 'token_out_of_scope');

    // dnf reads the RPM distribution the token also names.
    const repo = { id: 'acme-private', baseurl: `${base}/repo/rpm/acme-private-el9/x86_64/`, gpgkey: `${base}/repo/keys/tollgate.asc` };
    const dnf = await dnfSandbox(join(work.dir, 'dnf-read-token'), repo);
    const repoFile = join(dnf.dir, 'repos.d', 'acme-private.repo');
    const { readFile } = await import('node:fs/promises');
    await writeFile(repoFile, `${(await readFile(repoFile, 'utf8')).trimEnd()}\nusername=ci-builder\npassword=${read.token}\n`);
    const query = await dnf.repoquery(['--refresh', '--qf', '%{name}-%{version}-%{release}', 'acme-secret']);
    assert.equal(query.code, 0, query.stderr);
    assert.match(query.stdout, /^acme-secret-3\.1\.4-2\.el9$/m);

    // No API route takes it.
    for (const headers of [bearer(read.token), basic('ci-builder', read.token)]) {
      const api = await fetch(`${base}/artifacts`, { headers });
      assert.ok(api.status === 401 || api.status === 403, String(api.status));
    }
    const api = await fetch(`${base}/artifacts`, { headers: bearer(read.token) });
    assert.equal(api.status, 403);
    assert.equal(((await api.json()) as { code: string }).code, 'read_token_not_allowed');

    // apt's download is in the statistics, attributed to the token and its owner.
    const stats = (await t.app.inject({ method: 'GET', url: `/downloads/stats?days=7&token=${read.token_id}`, headers: bearer(builderSession) })).json();
    assert.equal(stats.token.username, 'ci-builder');
    assert.equal(stats.token.kind, 'read');
    assert.deepEqual(stats.packages.map((p: { name: string; distribution: string; downloads: number }) => [p.name, p.distribution, p.downloads]), [['acme-secret', 'acme-private', 1]]);
    const all = (await t.app.inject({ method: 'GET', url: '/downloads/stats?days=7', headers: bearer(admin) })).json();
    assert.deepEqual(all.by_token.find((r: { token_id: string }) => r.token_id === read.token_id), { token_id: read.token_id, username: 'ci-builder', name: 'apt on acme hosts', kind: 'read', downloads: 1 });

    // Revoked: apt is refused at once.
    const revoked = await t.app.inject({ method: 'DELETE', url: `/auth/api-tokens/${read.token_id}`, headers: bearer(builderSession) });
    assert.equal(revoked.statusCode, 204);
    const after = await apt.update();
    assert.match(after.stdout + after.stderr, /401/, after.stdout + after.stderr);
    assert.equal((await fetch(`${base}/repo/apt/dists/acme-private/InRelease`, { headers: basic('ci-builder', read.token) })).status, 401);
  });

  it('becomes public again when the flag is turned off', async () => {
    const res = await t.app.inject({ method: 'PATCH', url: '/distributions/acme-private', headers: bearer(admin), payload: { private: false } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await fetch(`${base}/repo/apt/dists/acme-private/InRelease`)).status, 200);
  });
});
