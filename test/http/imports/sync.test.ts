/**
 * Import sources and catalog sync against upstream repositories built and signed here and
 * served on loopback: verified sync, unchanged re-sync, and every refusal (tampered index,
 * wrong key, unsigned upstream) leaving the previous catalog as it was.
 */
import assert from 'node:assert/strict';
import { copyFile, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { execFileSync } from 'node:child_process';
import { backends, bearer, startTestApp, type TestApp } from '../../helpers/app.js';
import { makeTempDir } from '../../helpers/tmp.js';
import { buildAptRepo, buildRpmRepo, makeGpgKey, recompressPrimaryZstd, serveDir, writeAptIndexes, writeRpmIndexes, type GpgKey, type StaticServer } from '../../../harness/upstream.js';
import { buildDeb } from '../../../harness/debs.js';
import { buildRpm } from '../../../harness/rpms.js';

interface Upstreams {
  dir: string;
  key: GpgKey;
  other: GpgKey;
  server: StaticServer;
  cleanup(): Promise<void>;
}

/** Each backend gets its own copies, so one test's tampering never leaks into another. */
async function upstreams(): Promise<Upstreams> {
  const tmp = await makeTempDir('tollgate-import-up-');
  const key = await makeGpgKey(join(tmp.dir, 'k1'));
  const other = await makeGpgKey(join(tmp.dir, 'k2'), 'Other <other@example.org>');
  const debs = [
    { name: 'alpha', version: '1.0-1', depends: 'beta (>= 2)' },
    { name: 'beta', version: '2.1-1', provides: 'virtual-beta' },
    { name: 'gamma', version: '0.5', arch: 'all' },
  ];
  await buildAptRepo(join(tmp.dir, 'apt'), key, debs);
  await buildAptRepo(join(tmp.dir, 'apt-unsigned'), null, debs);
  // A validly signed Release whose Valid-Until has passed (a replayed old index).
  await buildAptRepo(join(tmp.dir, 'apt-expired'), null, debs);
  const expired = join(tmp.dir, 'apt-expired/dists/stable');
  await writeFile(join(expired, 'Release'), (await readFile(join(expired, 'Release'), 'utf8')).replace(/^Date: .*$/m, (line) => `${line}\nValid-Until: Sat, 01 Jan 2022 00:00:00 UTC`));
  await key.gpg(['--yes', '--clearsign', '--output', join(expired, 'InRelease'), join(expired, 'Release')]);
  await buildRpmRepo(join(tmp.dir, 'rpm'), key, [
    { name: 'rpm-alpha', version: '1.0', requires: ['rpm-beta >= 2'] },
    { name: 'rpm-beta', version: '2.0', provides: ['beta-virtual'] },
  ]);
  await buildRpmRepo(join(tmp.dir, 'rpm-zst'), key, [{ name: 'rpm-zed', version: '1.0' }]);
  await recompressPrimaryZstd(join(tmp.dir, 'rpm-zst'), key);
  const server = await serveDir(tmp.dir);
  return { dir: tmp.dir, key, other, server, async cleanup() { await server.close(); await tmp.cleanup(); } };
}

function events(body: string): Array<{ event: string; data: Record<string, unknown> }> {
  return body.split('\n\n').filter((b) => b.trim()).map((block) => {
    const event = /^event: (.*)$/m.exec(block)?.[1] ?? '';
    const data = JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? 'null') as Record<string, unknown>;
    return { event, data };
  });
}

for (const backend of backends()) {
  describe(`import sources and sync (${backend})`, () => {
    let app: TestApp;
    let up: Upstreams;
    let admin: Record<string, string>;
    before(async () => {
      up = await upstreams();
      app = await startTestApp({ backend });
      admin = bearer(await app.tokenFor('admin'));
    });
    after(async () => {
      await app?.close();
      await up?.cleanup();
    });

    const create = async (body: Record<string, unknown>) => app.app.inject({ method: 'POST', url: '/import/sources', headers: admin, payload: body });
    const aptSource = (over: Record<string, unknown> = {}) => ({ name: `apt-${Math.random().toString(36).slice(2, 8)}`, type: 'apt', url: `${up.server.url}/apt`, suite: 'stable', components: ['main'], architectures: ['amd64'], key: up.key.armoredPublic, distribution: 'bookworm', ...over });
    const rpmSource = (over: Record<string, unknown> = {}) => ({ name: `rpm-${Math.random().toString(36).slice(2, 8)}`, type: 'rpm', baseurl: `${up.server.url}/rpm`, key: up.key.armoredPublic, distribution: 'rocky9', ...over });
    const syncSse = async (id: string) => {
      const res = await app.app.inject({ method: 'POST', url: `/import/sources/${id}/sync`, headers: admin });
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /text\/event-stream/);
      return events(res.body);
    };
    const catalog = async (id: string) => {
      const state = await app.ctx.db.selectFrom('import_sync_state').selectAll().where('source_id', '=', id).executeTakeFirstOrThrow();
      const rows = await app.ctx.db.selectFrom('import_catalog').select(['name', 'version', 'generation']).where('source_id', '=', id).orderBy('name').execute();
      return { generation: Number(state.generation), names: rows.filter((r) => Number(r.generation) === Number(state.generation)).map((r) => `${r.name}=${r.version}`), orphans: rows.filter((r) => Number(r.generation) !== Number(state.generation)).length };
    };
    const audits = async (result: string) => (await app.ctx.db.selectFrom('audit_index').select(['action', 'result', 'detail']).where('action', '=', 'SYNC').where('result', '=', result).execute());

    it('validates source definitions', async () => {
      const noKey = await create(aptSource({ key: undefined }));
      assert.equal(noKey.statusCode, 422);
      assert.equal(noKey.json().code, 'key_required');
      assert.equal((await create(aptSource({ url: 'ftp://example.org/debian' }))).json().code, 'invalid_url');
      assert.equal((await create(aptSource({ url: 'http://user:pw@example.org/debian' }))).json().code, 'invalid_url');
      assert.equal((await create(aptSource({ distribution: 'rocky9' }))).json().code, 'format_mismatch');
      assert.equal((await create(aptSource({ distribution: 'nope' }))).json().code, 'unknown_distribution');
      assert.equal((await create(aptSource({ suite: '../../etc' }))).statusCode, 422);
      assert.equal((await create(aptSource({ key: '-----BEGIN PGP PUBLIC KEY BLOCK-----\nxx\n-----END PGP PUBLIC KEY BLOCK-----' }))).json().code, 'invalid_key');
      assert.equal((await create(rpmSource({ baseurl: undefined }))).statusCode, 422);
      const unsigned = await create(aptSource({ key: undefined, allow_unsigned: true }));
      assert.equal(unsigned.statusCode, 201);
      assert.deepEqual(unsigned.json().key_fingerprints, []);
    });

    it('creates, lists, changes and deletes sources (maintainer+ only)', async () => {
      const res = await create(aptSource({ name: 'debian-main' }));
      assert.equal(res.statusCode, 201, res.body);
      const source = res.json();
      assert.equal(source.key_fingerprints.length, 1);
      assert.equal(source.sync.status, 'never');
      assert.equal((await create(aptSource({ name: 'debian-main' }))).statusCode, 409);
      const list = await app.app.inject({ method: 'GET', url: '/import/sources', headers: admin });
      assert.ok(Array.isArray(list.json()));
      assert.ok(list.json().some((s: { name: string }) => s.name === 'debian-main'));
      assert.equal(JSON.stringify(list.json()).includes('BEGIN PGP'), false);
      const patched = await app.app.inject({ method: 'PATCH', url: `/import/sources/${source.id}`, headers: admin, payload: { components: ['main', 'contrib'] } });
      assert.equal(patched.statusCode, 200);
      assert.deepEqual(patched.json().components, ['main', 'contrib']);
      const uploader = bearer(await app.tokenFor('uploader'));
      assert.equal((await app.app.inject({ method: 'GET', url: '/import/sources', headers: uploader })).statusCode, 403);
      assert.equal((await app.app.inject({ method: 'GET', url: '/import/sync-status', headers: uploader })).statusCode, 200);
      const rekeyed = await app.app.inject({ method: 'PATCH', url: `/import/sources/${source.id}`, headers: admin, payload: { key: null, allow_unsigned: true } });
      assert.equal(rekeyed.statusCode, 200, rekeyed.body);
      assert.equal((await app.app.inject({ method: 'DELETE', url: `/import/sources/${source.id}`, headers: admin })).statusCode, 204);
      assert.equal((await app.app.inject({ method: 'DELETE', url: `/import/sources/${source.id}`, headers: admin })).statusCode, 404);

      // Each change is audited with whom the source trusts (fingerprints), never the key itself.
      const changes = await app.ctx.db.selectFrom('audit_index').select(['detail', 'result']).where('action', '=', 'IMPORT_SOURCE_CHANGE').where('detail', 'like', `%${source.id}%`).orderBy('seq').execute();
      assert.deepEqual(changes.map((c) => /^(\w+) /.exec(c.detail ?? '')?.[1]), ['created', 'updated', 'updated', 'deleted']);
      assert.match(changes[0]!.detail!, new RegExp(`key=${source.key_fingerprints[0]}`));
      assert.match(changes[2]!.detail!, /key=none; allow_unsigned=true; trust changed/);
      assert.ok(changes.every((c) => c.result === 'SUCCESS' && !c.detail!.includes('BEGIN PGP')));
    });

    it('syncs an APT source (SSE), then finds the signed index unchanged', async () => {
      const source = (await create(aptSource())).json();
      const first = await syncSse(source.id);
      assert.ok(first.every((e) => typeof e.data.status === 'string' && typeof e.data.count === 'number'));
      assert.deepEqual(first.map((e) => e.data.status), ['started', 'verified', 'completed', 'synced']);
      assert.equal(first.at(-1)!.data.count, 3);
      assert.deepEqual((await catalog(source.id)).names, ['alpha=1.0-1', 'beta=2.1-1', 'gamma=0.5']);

      const before = up.server.requests.length;
      const again = await app.app.inject({ method: 'POST', url: `/import/sync/${source.id}`, headers: admin });
      assert.equal(again.statusCode, 200);
      assert.equal(again.json().status, 'unchanged');
      assert.equal(again.json().count, 3);
      // One conditional request for InRelease (304), nothing else.
      assert.deepEqual(up.server.requests.slice(before), ['/apt/dists/stable/InRelease']);
      const status = (await app.app.inject({ method: 'GET', url: '/import/sync-status', headers: admin })).json() as Array<{ source_id: string; status: string; count: number }>;
      assert.equal(status.find((s) => s.source_id === source.id)?.count, 3);
    });

    it('syncs an RPM source and an unsigned source explicitly allowed', async () => {
      const rpm = (await create(rpmSource())).json();
      const result = (await app.app.inject({ method: 'POST', url: `/import/sync/${rpm.id}`, headers: admin })).json();
      assert.equal(result.status, 'synced', JSON.stringify(result));
      assert.deepEqual((await catalog(rpm.id)).names, ['rpm-alpha=1.0-1', 'rpm-beta=2.0-1']);
      const zst = (await create(rpmSource({ baseurl: `${up.server.url}/rpm-zst` }))).json();
      const rz = (await app.app.inject({ method: 'POST', url: `/import/sync/${zst.id}`, headers: admin })).json();
      assert.equal(rz.status, 'synced', JSON.stringify(rz));
      assert.deepEqual((await catalog(zst.id)).names, ['rpm-zed=1.0-1']);
      const unsigned = (await create(aptSource({ url: `${up.server.url}/apt-unsigned`, key: null, allow_unsigned: true }))).json();
      const r2 = (await app.app.inject({ method: 'POST', url: `/import/sync/${unsigned.id}`, headers: admin })).json();
      assert.equal(r2.status, 'synced', JSON.stringify(r2));
      assert.equal(r2.count, 3);
    });

    it('refuses a wrong key and an unsigned upstream when a key is set', async () => {
      const wrong = (await create(aptSource({ key: up.other.armoredPublic }))).json();
      const r1 = (await app.app.inject({ method: 'POST', url: `/import/sync/${wrong.id}`, headers: admin })).json();
      assert.equal(r1.status, 'failed');
      assert.equal(r1.code, 'signature_invalid');
      const unsigned = (await create(aptSource({ url: `${up.server.url}/apt-unsigned` }))).json();
      const r2 = (await app.app.inject({ method: 'POST', url: `/import/sync/${unsigned.id}`, headers: admin })).json();
      assert.equal(r2.code, 'signature_missing');
      const rpmWrong = (await create(rpmSource({ key: up.other.armoredPublic }))).json();
      assert.equal((await app.app.inject({ method: 'POST', url: `/import/sync/${rpmWrong.id}`, headers: admin })).json().code, 'signature_invalid');
      const expired = (await create(aptSource({ url: `${up.server.url}/apt-expired` }))).json();
      assert.equal((await app.app.inject({ method: 'POST', url: `/import/sync/${expired.id}`, headers: admin })).json().code, 'index_expired');
      for (const id of [wrong.id, unsigned.id, rpmWrong.id, expired.id]) assert.deepEqual((await catalog(id)).names, []);
      assert.ok((await audits('FAILURE')).some((a) => String(a.detail).includes(wrong.name)));
    });

    it('keeps the previous catalog when a newly signed APT index points at a tampered Packages file', async () => {
      const source = (await create(aptSource())).json();
      assert.equal((await app.app.inject({ method: 'POST', url: `/import/sync/${source.id}`, headers: admin })).json().status, 'synced');
      const before = await catalog(source.id);
      const root = join(up.dir, 'apt');
      await buildDeb(join(root, 'pool', 'main'), { name: 'delta', version: '1.0' });
      await writeAptIndexes(root, up.key);
      // The signed Release now vouches for Packages.xz; replace it by other bytes afterwards.
      await rm(join(root, 'pool/main/delta_1.0_amd64.deb'));
      execFileSync('sh', ['-c', 'apt-ftparchive packages pool | xz > dists/stable/main/binary-amd64/Packages.xz'], { cwd: root });
      const res = await syncSse(source.id);
      const final = res.at(-1)!.data;
      assert.equal(final.status, 'failed');
      assert.equal(final.code, 'checksum_mismatch');
      assert.equal(final.count, 3);
      const after = await catalog(source.id);
      assert.deepEqual(after.names, before.names);
      assert.equal(after.generation, before.generation);
      assert.equal(after.orphans, 0);
      const state = (await app.app.inject({ method: 'GET', url: '/import/sync-status', headers: admin })).json() as Array<{ source_id: string; status: string; last_error: string }>;
      assert.equal(state.find((s) => s.source_id === source.id)?.status, 'failed');
      // Restored upstream: the next sync reads the new index in full.
      await writeAptIndexes(root, up.key);
      const ok = (await app.app.inject({ method: 'POST', url: `/import/sync/${source.id}`, headers: admin })).json();
      assert.equal(ok.status, 'synced');
      assert.equal(ok.count, 3);
    });

    it('keeps the previous RPM catalog when primary.xml does not match repomd.xml', async () => {
      const source = (await create(rpmSource())).json();
      assert.equal((await app.app.inject({ method: 'POST', url: `/import/sync/${source.id}`, headers: admin })).json().status, 'synced');
      const root = join(up.dir, 'rpm');
      await buildRpm(join(root, 'Packages'), { name: 'rpm-gamma', version: '3.0' });
      await writeRpmIndexes(root, up.key);
      const primary = join(root, 'repodata/primary.xml.gz');
      await copyFile(primary, `${primary}.orig`);
      execFileSync('sh', ['-c', `gzip -dc '${primary}.orig' | sed 's/rpm-gamma/rpm-gamme/' | gzip -n > '${primary}'`]);
      const result = (await app.app.inject({ method: 'POST', url: `/import/sync/${source.id}`, headers: admin })).json();
      assert.equal(result.code, 'checksum_mismatch');
      assert.deepEqual((await catalog(source.id)).names, ['rpm-alpha=1.0-1', 'rpm-beta=2.0-1']);
      await copyFile(`${primary}.orig`, primary);
      const ok = (await app.app.inject({ method: 'POST', url: `/import/sync/${source.id}`, headers: admin })).json();
      assert.equal(ok.status, 'synced');
      assert.deepEqual((await catalog(source.id)).names, ['rpm-alpha=1.0-1', 'rpm-beta=2.0-1', 'rpm-gamma=3.0-1']);
    });

    it('syncs all sources and tells when the daily sync runs', async () => {
      const all = await app.app.inject({ method: 'POST', url: '/import/sync', headers: admin });
      assert.equal(all.statusCode, 200);
      const results = all.json().results as Array<{ status: string }>;
      assert.ok(results.length >= 7);
      assert.ok(results.some((r) => r.status === 'failed') && results.some((r) => r.status !== 'failed'));
      const schedule = (await app.app.inject({ method: 'GET', url: '/import/sync-schedule', headers: bearer(await app.tokenFor('reader')) })).json();
      assert.equal(schedule.enabled, true);
      assert.equal(schedule.time, '03:00');
      assert.match(schedule.next_run, /T03:00:00/);
      await app.ctx.jobs.runNow('import-sync');
      const run = (await app.app.inject({ method: 'GET', url: '/import/sync-schedule', headers: admin })).json();
      assert.match(run.last_result, /sources: \d+ synced, \d+ unchanged, \d+ failed/);
      assert.equal((await app.app.inject({ method: 'POST', url: '/import/sync/nope', headers: admin })).statusCode, 404);
    });
  });
}
