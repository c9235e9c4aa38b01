import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
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

const CODENAME = 'acme-el9';

describe('RPM distribution with several architectures: one signed tree per $basearch, noarch in each', () => {
  let t: TestApp;
  let base: string;
  let admin: string;
  let work: { dir: string; cleanup: () => Promise<void> };
  let repoFile = '';

  const upload = async (path: string) => {
    const form = await multipartBody({ distribution: CODENAME }, { path });
    return t.app.inject({ method: 'POST', url: '/upload', headers: { ...bearer(admin), ...form.headers }, payload: form.payload });
  };
  const api = (method: 'POST' | 'PATCH' | 'DELETE' | 'GET', url: string, payload?: unknown) =>
    t.app.inject({ method, url, headers: bearer(admin), ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
  const tree = (arch: string) => join(t.ctx.repo.files.repoDir, 'rpm', CODENAME, arch);
  const repomd = (arch: string) => readFile(join(tree(arch), 'repodata', 'repomd.xml'), 'utf8');
  const primary = async (dir: string) => {
    const href = /<location href="(repodata\/[0-9a-f]{64}-primary\.xml\.gz)"/.exec(await readFile(join(dir, 'repodata', 'repomd.xml'), 'utf8'))![1]!;
    return primaryEntries(gunzipSync(await readFile(join(dir, href))).toString('utf8'));
  };
  const listed = async (arch: string) => (await primary(tree(arch))).map((p) => `${p.name}.${p.arch}`);
  const rpm = (name: string, arch: 'x86_64' | 'aarch64' | 'noarch' | 'i686', version = '1.0') =>
    buildRpm(join(work.dir, 'rpms'), { name, version, release: '1.el9', arch, files: { [`/usr/share/${name}/${arch}.txt`]: `${name} ${arch} ${version}\n` }, noAutoReqProv: true });

  before(async () => {
    work = await makeTempDir('tollgate-rpm-multiarch-e2e-');
    t = await startTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    admin = await t.tokenFor('admin');
  });
  after(async () => {
    await t.close();
    await work.cleanup();
  });

  it('creates the distribution with a signed, empty repodata in each architecture tree', async () => {
    const created = await api('POST', '/distributions', { codename: CODENAME, format: 'rpm', description: 'Acme EL9', architectures: ['x86_64', 'aarch64'] });
    assert.equal(created.statusCode, 201, created.body);
    assert.deepEqual(created.json().architectures, ['x86_64', 'aarch64', 'noarch']);
    const listing = (await api('GET', '/distributions')).json() as { codename: string; architecture: string; index_architectures: string[] }[];
    const mine = (Array.isArray(listing) ? listing : (listing as unknown as { items: typeof listing }).items).find((d) => d.codename === CODENAME)!;
    assert.equal(mine.architecture, 'x86_64');
    assert.deepEqual(mine.index_architectures, ['x86_64', 'aarch64']);
    for (const arch of ['x86_64', 'aarch64']) assert.match(await repomd(arch), /<data type="primary">/);
  });

  it('lists each architecture with every noarch package; another architecture is refused with the accepted ones named', async () => {
    for (const [name, arch] of [['acme-tool', 'x86_64'], ['acme-agent', 'aarch64'], ['acme-data', 'noarch']] as const) {
      const res = await upload(await rpm(name, arch));
      assert.equal(res.statusCode, 201, res.body);
    }
    const i686 = await upload(await rpm('acme-old', 'i686'));
    assert.equal(i686.statusCode, 422, i686.body);
    assert.match(i686.body, /x86_64, aarch64, noarch/);
    assert.deepEqual(await listed('x86_64'), ['acme-data.noarch', 'acme-tool.x86_64']);
    assert.deepEqual(await listed('aarch64'), ['acme-agent.aarch64', 'acme-data.noarch']);
  });

  it('agrees with createrepo_c run on each tree, and each repomd.xml signature verifies (gpgv)', async () => {
    for (const arch of ['x86_64', 'aarch64']) {
      const copy = join(work.dir, `createrepo-${arch}`);
      assert.equal((await exec('cp', ['-r', tree(arch), copy])).code, 0);
      await exec('rm', ['-rf', join(copy, 'repodata')]);
      const made = await exec('createrepo_c', ['--quiet', copy]);
      assert.equal(made.code, 0, made.stderr);
      assert.deepEqual(await primary(tree(arch)), await primary(copy), arch);
      const verified = await exec('gpgv', ['--keyring', join(t.ctx.repo.files.repoDir, 'keys', 'tollgate.gpg'), join(tree(arch), 'repodata', 'repomd.xml.asc'), join(tree(arch), 'repodata', 'repomd.xml')]);
      assert.equal(verified.code, 0, verified.stderr);
    }
  });

  it('gives a .repo file with $basearch that dnf reads on x86_64 and on aarch64, each seeing its own packages', async () => {
    const install = (await api('GET', `/artifacts/acme-data/install?distribution=${CODENAME}`)).json();
    repoFile = install.repo_file;
    assert.match(repoFile, new RegExp(`^baseurl=.*/repo/rpm/${CODENAME}/\\$basearch/$`, 'm'));
    const url = `${base}/repo/rpm/${CODENAME}/$basearch/`;
    const seen: Record<string, string[]> = {};
    for (const arch of ['x86_64', 'aarch64']) {
      const dnf = await dnfSandbox(join(work.dir, `dnf-${arch}`), { id: 'acme', baseurl: url, gpgkey: `${base}/repo/keys/tollgate.asc`, arch });
      const query = await dnf.repoquery(['--refresh', '--qf', '%{name}.%{arch}', 'acme-*']);
      assert.equal(query.code, 0, query.stderr);
      seen[arch] = query.stdout.split('\n').filter((l) => l.startsWith('acme-')).sort();
      // The noarch file is reached from each tree (and its signature checked: gpgcheck=1).
      const download = await dnf.download('acme-data');
      assert.equal(download.code, 0, download.stderr + download.stdout);
      assert.deepEqual(await readdir(join(dnf.dir, 'downloads')), ['acme-data-1.0-1.el9.noarch.rpm']);
    }
    assert.deepEqual(seen, { x86_64: ['acme-data.noarch', 'acme-tool.x86_64'], aarch64: ['acme-agent.aarch64', 'acme-data.noarch'] });
    // Both downloads of the noarch file (one from each tree) are counted for its package.
    await t.ctx.downloads.counter.flush();
    const stats = (await api('GET', '/downloads/stats?days=7')).json();
    const data = stats.packages.find((p: { name: string }) => p.name === 'acme-data');
    assert.deepEqual([data?.distribution, data?.downloads], [CODENAME, 2], JSON.stringify(stats.packages));
  });

  it('rewrites only the trees an upload changes: x86_64 alone for an x86_64 package, both for a noarch one', async () => {
    const before = { x86_64: await repomd('x86_64'), aarch64: await repomd('aarch64') };
    await new Promise((r) => setTimeout(r, 1100)); // repomd.xml carries a timestamp in seconds
    assert.equal((await upload(await rpm('acme-tool', 'x86_64', '1.1'))).statusCode, 201);
    assert.notEqual(await repomd('x86_64'), before.x86_64);
    assert.equal(await repomd('aarch64'), before.aarch64, 'aarch64 repodata untouched');
    const mid = { x86_64: await repomd('x86_64'), aarch64: await repomd('aarch64') };
    await new Promise((r) => setTimeout(r, 1100));
    assert.equal((await upload(await rpm('acme-docs', 'noarch'))).statusCode, 201);
    assert.notEqual(await repomd('x86_64'), mid.x86_64);
    assert.notEqual(await repomd('aarch64'), mid.aarch64);
    assert.deepEqual(await listed('aarch64'), ['acme-agent.aarch64', 'acme-data.noarch', 'acme-docs.noarch']);
  });

  it('refuses to remove an architecture that holds packages (409); an added one gets the noarch packages', async () => {
    const drop = await api('PATCH', `/distributions/${CODENAME}`, { architectures: ['x86_64'] });
    assert.equal(drop.statusCode, 409, drop.body);
    assert.equal(drop.json().code, 'distribution_in_use');
    const add = await api('PATCH', `/distributions/${CODENAME}`, { architectures: ['x86_64', 'aarch64', 'ppc64le'] });
    assert.equal(add.statusCode, 200, add.body);
    assert.deepEqual(await listed('ppc64le'), ['acme-data.noarch', 'acme-docs.noarch']);
    for (const p of await primary(tree('ppc64le'))) assert.ok(existsSync(join(tree('ppc64le'), p.location)), p.location);
    const sync = await api('POST', '/artifacts/admin/sync-index');
    assert.equal(sync.statusCode, 200, sync.body);
    assert.deepEqual(sync.json().unreferenced_files, [], 'the copies are accounted for');
    const back = await api('PATCH', `/distributions/${CODENAME}`, { architectures: ['x86_64', 'aarch64'] });
    assert.equal(back.statusCode, 200, back.body);
    assert.ok(!existsSync(join(tree('ppc64le'), 'repodata')), 'a removed architecture loses its repodata');
    assert.deepEqual((await readdir(tree('ppc64le'), { recursive: true })).filter((f) => f.endsWith('.rpm')), [], 'and its copies');
  });

  it('deletes a noarch package from every tree, promotes one to a single-architecture distribution, and retires all trees', async () => {
    const docs = (await primary(tree('x86_64'))).find((p) => p.name === 'acme-docs')!;
    const del = await api('DELETE', '/artifacts/acme-docs');
    assert.equal(del.statusCode, 200, del.body);
    for (const arch of ['x86_64', 'aarch64']) {
      assert.ok(!(await listed(arch)).includes('acme-docs.noarch'), arch);
      assert.ok(!existsSync(join(tree(arch), docs.location)), `${arch}: ${docs.location}`);
    }
    const promote = await api('POST', '/distributions/promote', { name: 'acme-data', version: '1.0-1.el9', from_distribution: CODENAME, to_distribution: 'rocky9' });
    assert.equal(promote.statusCode, 200, promote.body);
    const rocky = join(t.ctx.repo.files.repoDir, 'rpm', 'rocky9', 'x86_64');
    const data = (await primary(rocky)).find((p) => p.name === 'acme-data')!;
    assert.ok(existsSync(join(rocky, data.location)));
    assert.ok(!existsSync(join(t.ctx.repo.files.repoDir, 'rpm', 'rocky9', 'aarch64')), 'a single-architecture distribution keeps its one tree');
    const retire = await api('DELETE', `/distributions/${CODENAME}`);
    assert.ok([200, 204].includes(retire.statusCode), retire.body);
    assert.ok(!existsSync(join(t.ctx.repo.files.repoDir, 'rpm', CODENAME)));
    assert.ok(existsSync(join(rocky, data.location)), 'the promoted copy stays');
  });
});
