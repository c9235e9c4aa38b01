import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { aptSandbox, exec } from '../helpers/apt.js';
import { bearer, startTestApp, type TestApp } from '../helpers/app.js';
import { dnfSandbox } from '../helpers/dnf.js';
import { buildDeb } from '../../harness/debs.js';
import { multipartBody } from '../../harness/multipart.js';
import { buildRpm } from '../../harness/rpms.js';
import { makeTempDir } from '../helpers/tmp.js';

/** Package names listed in one Packages index. */
const namesIn = (packages: string) => [...packages.matchAll(/^Package: (.+)$/gm)].map((m) => m[1]!).sort();

describe('distributions as data: components, architectures, real apt and dnf clients', () => {
  let t: TestApp;
  let base: string;
  let admin: string;
  let work: { dir: string; cleanup: () => Promise<void> };

  const upload = async (path: string, distribution: string, extra: Record<string, string> = {}) => {
    const form = await multipartBody({ distribution, ...extra }, { path });
    return t.app.inject({ method: 'POST', url: '/upload', headers: { ...bearer(admin), ...form.headers }, payload: form.payload });
  };
  const api = (method: 'POST' | 'PATCH' | 'DELETE' | 'GET', url: string, payload?: unknown) =>
    t.app.inject({ method, url, headers: bearer(admin), ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
  const deb = async (name: string, arch: string, version = '2.4.1+ds1-1~acme1') => {
    const dir = join(work.dir, `${name}-${arch}-${version}`);
    await mkdir(dir, { recursive: true });
    return buildDeb(dir, { name, version, arch, description: `${name} for ${arch}\n Built for the distribution tests.`, files: { [`usr/share/${name}/${arch}.txt`]: `${name} ${arch} ${version}` } });
  };
  const repoFile = (path: string) => readFile(join(t.ctx.repo.files.repoDir, path), 'utf8');
  const auditDetails = async (action: string) =>
    (await t.ctx.db.selectFrom('audit_index').select('detail').where('action', '=', action).orderBy('seq').execute()).map((r) => r.detail ?? '');

  before(async () => {
    work = await makeTempDir('tollgate-dists-e2e-');
    t = await startTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    admin = await t.tokenFor('admin');
  });
  after(async () => {
    await t.close();
    await work.cleanup();
  });

  it('creates an APT distribution with two components and two architectures, published and signed at once', async () => {
    const created = await api('POST', '/distributions', {
      codename: 'acme-stable', format: 'deb', description: 'Acme build farm', suite: 'stable', origin: 'Acme', label: 'Acme Tools',
      components: ['main', 'testing'], architectures: ['amd64', 'arm64'], osv_ecosystem: 'Debian:12',
    });
    assert.equal(created.statusCode, 201, created.body);
    const body = created.json();
    assert.deepEqual([body.components, body.index_architectures, body.architectures], [['main', 'testing'], ['amd64', 'arm64'], ['amd64', 'arm64', 'all']]);
    assert.equal(body.built_in, false);
    assert.equal(body.up_to_date, true, 'the empty index is published before the answer');
    const release = await repoFile('apt/dists/acme-stable/Release');
    assert.match(release, /^Origin: Acme$/m);
    assert.match(release, /^Label: Acme Tools$/m);
    assert.match(release, /^Suite: stable$/m);
    assert.match(release, /^Architectures: amd64 arm64$/m);
    assert.match(release, /^Components: main testing$/m);
    for (const index of ['main/binary-amd64', 'main/binary-arm64', 'testing/binary-amd64', 'testing/binary-arm64']) {
      assert.match(release, new RegExp(` ${index}/Packages.xz$`, 'm'), index);
    }
    const verified = await exec('gpgv', ['--keyring', join(t.ctx.repo.files.repoDir, 'keys', 'tollgate.gpg'), join(t.ctx.repo.files.repoDir, 'apt/dists/acme-stable/InRelease')]);
    assert.equal(verified.code, 0, verified.stderr);
    const listed = (await api('GET', '/distributions')).json() as Array<{ codename: string }>;
    assert.ok(listed.some((d) => d.codename === 'acme-stable'));
    assert.match((await auditDetails('DISTRIBUTION_CREATE'))[0]!, /codename=acme-stable; format=deb; components=main,testing; architectures=amd64,arm64/);
  });

  it('refuses bad definitions with the problems named, a duplicate with 409, and non-admins with 403', async () => {
    const bad = await api('POST', '/distributions', { codename: 'acme-bad', format: 'deb', components: ['Main'], architectures: ['sparc'] });
    assert.equal(bad.statusCode, 422, bad.body);
    assert.equal(bad.json().code, 'invalid_distribution');
    assert.deepEqual(bad.json().errors.map((e: { loc: string[] }) => e.loc.join('.')).sort(), ['body.architectures', 'body.components']);
    const debArchForRpm = await api('POST', '/distributions', { codename: 'acme-el', format: 'rpm', architectures: ['x86_64', 'arm64'] });
    assert.equal(debArchForRpm.statusCode, 422);
    const dotdot = await api('POST', '/distributions', { codename: '..', format: 'deb' });
    assert.equal(dotdot.statusCode, 422);
    const again = await api('POST', '/distributions', { codename: 'acme-stable', format: 'deb' });
    assert.equal(again.statusCode, 409);
    assert.equal(again.json().code, 'distribution_exists');
    const builtIn = await api('POST', '/distributions', { codename: 'jammy', format: 'deb' });
    assert.equal(builtIn.statusCode, 409);
    const maintainer = await t.tokenFor('maintainer');
    const denied = await t.app.inject({ method: 'POST', url: '/distributions', headers: bearer(maintainer), payload: { codename: 'acme-x', format: 'deb' } });
    assert.equal(denied.statusCode, 403);
  });

  it('puts uploads in the component they name; `all` packages are listed under every architecture', async () => {
    assert.equal((await upload(await deb('acme-agent', 'arm64'), 'acme-stable', { component: 'testing' })).statusCode, 201);
    assert.equal((await upload(await deb('acme-cli', 'amd64'), 'acme-stable')).statusCode, 201);
    assert.equal((await upload(await deb('acme-docs', 'all'), 'acme-stable', { component: 'main' })).statusCode, 201);
    const wrongComponent = await upload(await deb('acme-x', 'amd64'), 'acme-stable', { component: 'security' });
    assert.equal(wrongComponent.statusCode, 422);
    assert.equal(wrongComponent.json().code, 'unknown_component');
    const wrongArch = await upload(await deb('acme-y', 'i386'), 'acme-stable');
    assert.equal(wrongArch.statusCode, 422);
    assert.match(wrongArch.json().detail, /architecture i386 is not accepted in acme-stable \(amd64, arm64, all\)/i);

    const index = async (rel: string) => namesIn(gunzipSync(await readFile(join(t.ctx.repo.files.repoDir, 'apt/dists/acme-stable', rel, 'Packages.gz'))).toString());
    assert.deepEqual(await index('main/binary-amd64'), ['acme-cli', 'acme-docs']);
    assert.deepEqual(await index('main/binary-arm64'), ['acme-docs']);
    assert.deepEqual(await index('testing/binary-arm64'), ['acme-agent']);
    assert.deepEqual(await index('testing/binary-amd64'), []);
    assert.match(await repoFile('apt/dists/acme-stable/testing/binary-arm64/Packages'), /^Filename: pool\/testing\/a\/acme-agent\/acme-agent_2\.4\.1\+ds1-1~acme1_arm64\.deb$/m);
  });

  it('is read by a real apt-get with arm64 enabled: update, then download of the arm64 package', async () => {
    const keyring = join(work.dir, 'tollgate.gpg');
    await writeFile(keyring, Buffer.from(await (await fetch(`${base}/repo/keys/tollgate.gpg`)).arrayBuffer()));
    const apt = await aptSandbox(join(work.dir, 'apt'), { architectures: ['amd64', 'arm64'] });
    await apt.setSource(`deb [signed-by=${keyring}] ${base}/repo/apt acme-stable main testing`);
    // One more arm64 package after the first publish: it reaches the index by an append.
    assert.equal((await upload(await deb('acme-agent', 'arm64', '2.5.0+ds1-1'), 'acme-stable', { component: 'testing' })).statusCode, 201);
    // The file lists (Contents) are read behind the uploads.
    await t.ctx.repo.fileLists.idle();
    const update = await apt.update();
    assert.equal(update.code, 0, update.stderr + update.stdout);
    assert.doesNotMatch(update.stderr, /^(W|E):/m, update.stderr);
    const download = await apt.download('acme-agent:arm64');
    assert.equal(download.code, 0, download.stderr + download.stdout);
    assert.ok(existsSync(join(apt.dir, 'downloads', 'acme-agent_2.5.0+ds1-1_arm64.deb')), 'the newest arm64 version is downloaded');
    const docs = await apt.policy('acme-docs');
    assert.match(docs.stdout, /Candidate: 2\.4\.1\+ds1-1~acme1/, docs.stdout);
    // apt-file finds files through the Contents indices apt-get update fetched with the rest.
    const found = await apt.fileSearch('/usr/share/acme-agent/arm64.txt', 'arm64');
    assert.equal(found.code, 0, found.stderr + found.stdout);
    assert.match(found.stdout, /^acme-agent: \/usr\/share\/acme-agent\/arm64\.txt$/m);
    const all = await apt.fileSearch('/usr/share/acme-docs/all.txt');
    assert.match(all.stdout, /^acme-docs: \/usr\/share\/acme-docs\/all\.txt$/m);
  });

  it('writes Contents indices that list what apt-ftparchive contents lists for the same files', async () => {
    const root = join(t.ctx.repo.files.repoDir, 'apt');
    const pairs = (text: string) => new Set(text.split('\n').filter(Boolean).map((line) => {
      const m = /^(.*?)\s+(\S+)$/.exec(line)!;
      return `${m[1]} ${m[2]}`;
    }));
    const ours = (rel: string) => pairs(gunzipSync(Buffer.from(readFileSync(join(root, 'dists/acme-stable', rel)))).toString());
    const theirs = async (dir: string) => {
      const out = await exec('apt-ftparchive', ['contents', dir], root);
      assert.equal(out.code, 0, out.stderr);
      return pairs(out.stdout);
    };
    assert.deepEqual(ours('testing/Contents-arm64.gz'), await theirs('pool/testing'));
    // main's amd64 Contents: the amd64 and the `all` package, both of main's pool.
    assert.deepEqual(ours('main/Contents-amd64.gz'), await theirs('pool/main'));
    assert.deepEqual([...ours('testing/Contents-amd64.gz')], []);
    const release = await repoFile('apt/dists/acme-stable/Release');
    assert.match(release, / main\/Contents-amd64\.gz$/m);
    assert.match(release, / testing\/Contents-arm64\.gz$/m);
  });

  it('changes a distribution, but never one that would strand packages outside the index', async () => {
    const strand = await api('PATCH', '/distributions/acme-stable', { architectures: ['amd64'] });
    assert.equal(strand.statusCode, 409, strand.body);
    assert.equal(strand.json().code, 'distribution_in_use');
    const dropTesting = await api('PATCH', '/distributions/acme-stable', { components: ['main'] });
    assert.equal(dropTesting.statusCode, 409);
    const format = await api('PATCH', '/distributions/acme-stable', { format: 'rpm' });
    assert.equal(format.statusCode, 422, 'format is not a field a change may carry');
    const grown = await api('PATCH', '/distributions/acme-stable', { architectures: ['amd64', 'arm64', 'i386'], components: ['main', 'testing', 'security'], label: 'Acme' });
    assert.equal(grown.statusCode, 200, grown.body);
    const release = await repoFile('apt/dists/acme-stable/Release');
    assert.match(release, /^Architectures: amd64 arm64 i386$/m);
    assert.match(release, /^Components: main testing security$/m);
    assert.match(release, /^Label: Acme$/m);
    assert.match(await repoFile('apt/dists/acme-stable/main/binary-i386/Packages'), /^Package: acme-docs$/m, 'the `all` package is listed under the new architecture');
    assert.equal((await auditDetails('DISTRIBUTION_UPDATE')).length, 1);
  });

  it('promotes with the component: refused where the target lacks it, copied where it has it', async () => {
    const refused = await api('POST', '/distributions/promote', { name: 'acme-agent', version: '2.5.0+ds1-1', arch: 'arm64', from_distribution: 'acme-stable', to_distribution: 'bookworm' });
    assert.equal(refused.statusCode, 422, refused.body);
    assert.equal(refused.json().code, 'unknown_component');
    const copied = await api('POST', '/distributions/promote', { name: 'acme-cli', version: '2.4.1+ds1-1~acme1', arch: 'amd64', from_distribution: 'acme-stable', to_distribution: 'bookworm' });
    assert.equal(copied.statusCode, 200, copied.body);
    assert.match(await repoFile('apt/dists/bookworm/main/binary-amd64/Packages'), /^Package: acme-cli$/m);
  });

  it('creates an aarch64 RPM distribution that dnf --forcearch aarch64 reads', async () => {
    const created = await api('POST', '/distributions', { codename: 'acme-el9-aarch64', format: 'rpm', description: 'Acme EL9 for arm servers', architectures: ['aarch64'], osv_ecosystem: 'AlmaLinux:9' });
    assert.equal(created.statusCode, 201, created.body);
    assert.deepEqual(created.json().architectures, ['aarch64', 'noarch']);
    const dir = join(work.dir, 'rpm');
    await mkdir(dir, { recursive: true });
    const rpm = await buildRpm(dir, { name: 'acme-agent', version: '2.4.1', release: '1.el9', arch: 'aarch64', files: { '/usr/share/acme-agent/README': 'arm' } });
    const res = await upload(rpm, 'acme-el9-aarch64');
    assert.equal(res.statusCode, 201, res.body);
    const x86 = await buildRpm(join(dir), { name: 'acme-x86', version: '1.0', release: '1', arch: 'x86_64', files: { '/usr/share/acme-x86/f': 'x' } });
    assert.equal((await upload(x86, 'acme-el9-aarch64')).statusCode, 422);
    const install = (await api('GET', '/artifacts/acme-agent/install?distribution=acme-el9-aarch64')).json();
    assert.match(install.repo_file, /baseurl=.*\/repo\/rpm\/acme-el9-aarch64\/aarch64\//);
    const dnf = await dnfSandbox(join(work.dir, 'dnf'), { id: 'acme', baseurl: `${base}/repo/rpm/acme-el9-aarch64/aarch64/`, gpgkey: `${base}/repo/keys/tollgate.asc`, arch: 'aarch64' });
    const query = await dnf.repoquery(['--refresh', '--qf', '%{name}-%{version}-%{release}.%{arch}', 'acme-agent']);
    assert.equal(query.code, 0, query.stderr);
    assert.match(query.stdout, /^acme-agent-2\.4\.1-1\.el9\.aarch64$/m);
    // createrepo_c reads the same tree the same way.
    const copy = join(work.dir, 'createrepo');
    await exec('cp', ['-r', join(t.ctx.repo.files.repoDir, 'rpm/acme-el9-aarch64/aarch64'), copy]);
    await exec('rm', ['-rf', join(copy, 'repodata')]);
    const made = await exec('createrepo_c', ['--quiet', copy]);
    assert.equal(made.code, 0, made.stderr);
    const theirs = await exec('sh', ['-c', `zcat ${copy}/repodata/*-primary.xml.gz | grep -o '<arch>[^<]*</arch>\\|<name>[^<]*</name>'`]);
    const ours = await exec('sh', ['-c', `zcat ${join(t.ctx.repo.files.repoDir, 'rpm/acme-el9-aarch64/aarch64')}/repodata/*-primary.xml.gz | grep -o '<arch>[^<]*</arch>\\|<name>[^<]*</name>'`]);
    assert.equal(ours.stdout, theirs.stdout);
    assert.match(ours.stdout, /<arch>aarch64<\/arch>/);
  });

  it('retires a distribution: its published tree goes, its packages stay until deleted, uploads are refused', async () => {
    const retired = await api('DELETE', '/distributions/acme-stable');
    assert.equal(retired.statusCode, 200, retired.body);
    const root = t.ctx.repo.files.repoDir;
    assert.ok(!existsSync(join(root, 'apt/dists/acme-stable')), 'dists/acme-stable removed');
    assert.ok(!existsSync(join(root, 'apt/pool/testing/a/acme-agent/acme-agent_2.5.0+ds1-1_arm64.deb')), 'a pool file only it published is removed');
    assert.ok(existsSync(join(root, 'apt/pool/main/a/acme-cli/acme-cli_2.4.1+ds1-1~acme1_amd64.deb')), 'a pool file bookworm publishes too stays');
    const rows = await t.ctx.db.selectFrom('packages').select('name').where('distribution', '=', 'acme-stable').execute();
    assert.equal(rows.length, 4, 'the packages are kept');
    const listed = (await api('GET', '/distributions')).json() as Array<{ codename: string }>;
    assert.ok(!listed.some((d) => d.codename === 'acme-stable'));
    const refused = await upload(await deb('acme-late', 'amd64'), 'acme-stable');
    assert.equal(refused.statusCode, 422);
    assert.equal(refused.json().code, 'unknown_distribution');
    assert.equal((await api('DELETE', '/distributions/acme-stable')).statusCode, 404);
    assert.match((await auditDetails('DISTRIBUTION_RETIRE'))[0]!, /codename=acme-stable; pool files removed=3/);
  });
});
