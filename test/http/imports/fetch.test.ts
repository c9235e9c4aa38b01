/**
 * Importing from synced catalogs through the upload pipeline: single fetch with and without
 * dependencies, SSE progress, batch, /import/packages, groups and their deletion, a package
 * whose upstream bytes differ from the signed index, concurrent imports of one closure.
 */
import assert from 'node:assert/strict';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { backends, bearer, startTestApp, type TestApp } from '../../helpers/app.js';
import { makeTempDir } from '../../helpers/tmp.js';
import { buildAptRepo, buildRpmRepo, makeGpgKey, serveDir, type StaticServer } from '../../../harness/upstream.js';
import { buildDeb } from '../../../harness/debs.js';
import { multipartBody } from '../../../harness/multipart.js';

interface Fixture {
  dir: string;
  key: string;
  server: StaticServer;
  cleanup(): Promise<void>;
}

async function fixture(): Promise<Fixture> {
  const tmp = await makeTempDir('tollgate-import-fetch-');
  const key = await makeGpgKey(join(tmp.dir, 'gpg'));
  await buildAptRepo(join(tmp.dir, 'apt'), key, [
    { name: 'app', version: '1.0', depends: 'libone (>= 1), virtual-two' },
    { name: 'libone', version: '1.1', depends: 'libbase' },
    { name: 'libbase', version: '3.0', arch: 'all' },
    { name: 'two-impl', version: '2.0', provides: 'virtual-two' },
    { name: 'solo', version: '1.0', depends: 'libbase' },
    { name: 'tool-a', version: '1.0' },
    { name: 'tool-b', version: '1.0' },
    { name: 'spoiled', version: '1.0' },
    { name: 'race', version: '1.0', depends: 'race-lib' },
    { name: 'race-lib', version: '1.0' },
    { name: 'chain-top', version: '1.0', depends: 'chain-mid (>= 1), chain-side' },
    { name: 'chain-mid', version: '1.0', depends: 'chain-low' },
    { name: 'chain-low', version: '1.0' },
    { name: 'chain-side', version: '1.0' },
  ]);
  await buildRpmRepo(join(tmp.dir, 'rpm'), key, [
    { name: 'rpm-app', version: '1.0', requires: ['rpm-lib >= 2'] },
    { name: 'rpm-lib', version: '2.0' },
  ]);
  const server = await serveDir(tmp.dir);
  return { dir: tmp.dir, key: key.armoredPublic, server, async cleanup() { await server.close(); await tmp.cleanup(); } };
}

interface Imported { name: string; version: string; status: string; provenance: string | null; code: string | null; required_by: string | null }
interface Report { group: string; packages: Imported[]; summary: Record<string, number>; unsatisfiable: unknown[] }

for (const backend of backends()) {
  describe(`import fetch, batch and groups (${backend})`, () => {
    let app: TestApp;
    let fx: Fixture;
    let admin: Record<string, string>;
    let uploader: Record<string, string>;
    before(async () => {
      fx = await fixture();
      app = await startTestApp({ backend });
      admin = bearer(await app.tokenFor('admin'));
      uploader = bearer(await app.tokenFor('uploader'));
      for (const body of [
        { name: 'up-apt', type: 'apt', url: `${fx.server.url}/apt`, suite: 'stable', key: fx.key, distribution: 'bookworm' },
        { name: 'up-rpm', type: 'rpm', baseurl: `${fx.server.url}/rpm`, key: fx.key, distribution: 'rocky9' },
      ]) {
        const created = await app.app.inject({ method: 'POST', url: '/import/sources', headers: admin, payload: body });
        assert.equal((await app.app.inject({ method: 'POST', url: `/import/sync/${created.json().id}`, headers: admin })).json().status, 'synced');
      }
    });
    after(async () => {
      await app?.close();
      await fx?.cleanup();
    });
    const post = async (url: string, payload: unknown, headers = uploader): Promise<Report> => {
      const res = await app.app.inject({ method: 'POST', url, headers, payload: payload as Record<string, unknown> });
      assert.equal(res.statusCode, 200, res.body);
      return res.json() as Report;
    };
    const audits = async (action: string) => app.ctx.db.selectFrom('audit_index').select(['package', 'result', 'detail']).where('action', '=', action).execute();

    it('fetches one package without its dependencies, verified against the signed index', async () => {
      const r = await post('/import/fetch', { name: 'solo', distribution: 'bookworm', with_dependencies: false });
      assert.deepEqual(r.packages.map((p) => [p.name, p.status, p.provenance]), [['solo', 'published', 'verified']]);
      assert.equal(r.summary.published, 1);
      const imported = (await audits('IMPORT')).filter((a) => a.package === 'solo');
      assert.equal(imported.length, 1);
      assert.equal(imported[0]!.result, 'SUCCESS');
      assert.match(String(imported[0]!.detail), /status=published; sha256=[0-9a-f]{64}; group=import-\d{14}-[0-9a-f]{6}; source=[^;]+; signed_sha256=/);
      // One entry per package: the pipeline writes IMPORT instead of UPLOAD, so nothing counts twice.
      assert.equal((await audits('UPLOAD')).filter((a) => a.package === 'solo').length, 0);
      const again = await post('/import/fetch', { package: 'solo', with_dependencies: false });
      assert.equal(again.packages[0]!.status, 'already_present');
    });

    it('fetches a closure with SSE progress: dependencies first, each with its outcome, then the sums', async () => {
      const res = await app.app.inject({ method: 'POST', url: '/import/fetch', headers: { ...uploader, accept: 'text/event-stream' }, payload: { name: 'app', distribution: 'bookworm' } });
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /text\/event-stream/);
      const events = res.body.split('\n\n').filter(Boolean).map((b) => ({ event: /^event: (.*)$/m.exec(b)![1], data: JSON.parse(/^data: (.*)$/m.exec(b)![1]!) }));
      assert.equal(events[0]!.event, 'resolved');
      assert.equal(events[0]!.data.total, 4);
      const progress = events.filter((e) => e.event === 'package').map((e) => e.data.package as Imported);
      assert.deepEqual(progress.map((p) => p.name), ['libbase', 'libone', 'two-impl', 'app']);
      assert.ok(progress.every((p) => p.status === 'published' && p.provenance === 'verified'));
      assert.equal(progress.find((p) => p.name === 'libbase')!.required_by, 'libone');
      const result = events.at(-1)!;
      assert.equal(result.event, 'result');
      assert.deepEqual(result.data.summary, { published: 4, pending_review: 0, quarantined: 0, rejected: 0, failed: 0, already_present: 0 });
      const artifact = await app.app.inject({ method: 'GET', url: '/artifacts/libone', headers: uploader });
      assert.equal(artifact.statusCode, 200);
    });

    it('imports a batch as a named group, lists it and deletes it with its packages', async () => {
      const r = await post('/import/batch', { packages: [{ name: 'tool-a' }, { package: 'tool-b', distribution: 'bookworm' }], group: 'tools' });
      assert.equal(r.group, 'tools');
      assert.deepEqual(r.packages.map((p) => p.status), ['published', 'published']);
      const listed = (await app.app.inject({ method: 'GET', url: '/import/groups', headers: bearer(await app.tokenFor('reader')) })).json() as Array<{ name: string; count: number; packages: Array<{ name: string }> }>;
      const tools = listed.find((g) => g.name === 'tools')!;
      assert.equal(tools.count, 2);
      assert.deepEqual(tools.packages.map((p) => p.name), ['tool-a', 'tool-b']);
      assert.equal((await app.app.inject({ method: 'DELETE', url: '/import/groups/tools?delete_packages=true', headers: uploader })).statusCode, 403);
      const del = await app.app.inject({ method: 'DELETE', url: '/import/groups/tools?delete_packages=true', headers: admin });
      assert.equal(del.statusCode, 200, del.body);
      assert.deepEqual(del.json(), { group: 'tools', deleted_packages: 2, kept_packages: 0 });
      assert.equal((await app.app.inject({ method: 'GET', url: '/artifacts/tool-a', headers: admin })).statusCode, 404);
      assert.ok((await audits('IMPORT_GROUP_DELETE')).some((a) => String(a.detail).includes('group=tools')));
      assert.equal((await app.app.inject({ method: 'DELETE', url: '/import/groups/tools', headers: admin })).statusCode, 404);
    });

    it('deleting a group keeps its packages by default, and never those another group holds', async () => {
      const first = await post('/import/fetch', { name: 'rpm-app', group: 'rpm-one' }, admin);
      assert.deepEqual(first.packages.map((p) => [p.name, p.status, p.provenance]), [['rpm-lib', 'published', 'verified'], ['rpm-app', 'published', 'verified']]);
      const kept = (await app.app.inject({ method: 'DELETE', url: '/import/groups/rpm-one', headers: admin })).json();
      assert.deepEqual(kept, { group: 'rpm-one', deleted_packages: 0, kept_packages: 2 });
      assert.equal((await app.app.inject({ method: 'GET', url: '/artifacts/rpm-app', headers: admin })).statusCode, 200);
      const p = await post('/import/packages', { packages: [{ name: 'tool-a' }], group: 'g1' }, admin);
      assert.equal(p.packages[0]!.status, 'published');
      await post('/import/packages', { name: 'tool-a', group: 'g2' }, admin);
      assert.equal((await app.app.inject({ method: 'POST', url: '/import/packages', headers: uploader, payload: { name: 'tool-a' } })).statusCode, 403);
      const d1 = (await app.app.inject({ method: 'DELETE', url: '/import/groups/g1?delete_packages=true', headers: admin })).json();
      assert.equal(d1.deleted_packages, 0);
      assert.equal((await app.app.inject({ method: 'GET', url: '/artifacts/tool-a', headers: admin })).statusCode, 200);
    });

    it('refuses a downloaded file that does not match the signed index, and answers 404 for unknown packages', async () => {
      await writeFile(join(fx.dir, 'apt/pool/main/spoiled_1.0_amd64.deb'), 'not the signed bytes');
      const r = await post('/import/fetch', { name: 'spoiled' });
      assert.equal(r.packages[0]!.status, 'failed');
      assert.equal(r.packages[0]!.code, 'checksum_mismatch');
      assert.equal(r.summary.failed, 1);
      assert.ok((await audits('IMPORT')).some((a) => a.package === 'spoiled' && a.result === 'FAILURE'));
      assert.equal((await app.app.inject({ method: 'GET', url: '/artifacts/spoiled', headers: admin })).statusCode, 404);
      const missing = await app.app.inject({ method: 'POST', url: '/import/fetch', headers: uploader, payload: { name: 'nope' } });
      assert.equal(missing.statusCode, 404);
      assert.equal((await app.app.inject({ method: 'POST', url: '/import/fetch', headers: uploader, payload: {} })).statusCode, 422);
      assert.equal((await app.app.inject({ method: 'POST', url: '/import/fetch', headers: bearer(await app.tokenFor('reader')), payload: { name: 'solo' } })).statusCode, 403);
    });

    it('names the dependencies of an upload that the synced catalogs offer', async () => {
      const upload = async (spec: { name: string; depends: string }, distribution: string) => {
        const path = await buildDeb(fx.dir, { name: spec.name, version: '1.0-1', depends: spec.depends });
        const form = await multipartBody({ distribution }, { path });
        const res = await app.app.inject({ method: 'POST', url: '/upload', headers: { ...uploader, ...form.headers }, payload: form.payload });
        assert.equal(res.statusCode, 201, res.body);
        return res.json() as { pipeline: Record<string, string>; steps: Array<{ name: string; message: string }> };
      };
      const step = (body: Awaited<ReturnType<typeof upload>>) => body.steps.find((s) => s.name === 'dependencies')!.message;
      // tool-b is in bookworm's synced catalog, not published: importable.
      const offered = await upload({ name: 'uses-tool-b', depends: 'tool-b (>= 1.0)' }, 'bookworm');
      assert.equal(offered.pipeline.dependencies, 'importable');
      assert.match(step(offered), /missing in bookworm: tool-b \(>= 1\.0\); importable from the synced catalogs: tool-b \(>= 1\.0\)/);
      // Partly offered: still missing, the importable part named.
      const partly = await upload({ name: 'uses-nothing', depends: 'tool-b, no-such-package' }, 'bookworm');
      assert.equal(partly.pipeline.dependencies, 'missing');
      assert.match(step(partly), /importable from the synced catalogs: tool-b$/);
      // Another distribution's catalogs do not count.
      const elsewhere = await upload({ name: 'uses-tool-b-too', depends: 'tool-b' }, 'jammy');
      assert.equal(elsewhere.pipeline.dependencies, 'missing');
      assert.doesNotMatch(step(elsewhere), /importable/);
    });

    it('imports one closure twice at the same time without a conflict', async () => {
      const before = fx.server.requests.length;
      const [a, b] = await Promise.all([post('/import/fetch', { name: 'race' }), post('/import/fetch', { name: 'race' })]);
      const statuses = [...a.packages, ...b.packages].map((p) => p.status).sort();
      assert.deepEqual(statuses, ['already_present', 'already_present', 'published', 'published']);
      // Each file was downloaded once: the second run waited for the first one's claims.
      const downloaded = fx.server.requests.slice(before).filter((p) => p.endsWith('.deb')).sort();
      assert.deepEqual(downloaded, ['/apt/pool/main/race-lib_1.0_amd64.deb', '/apt/pool/main/race_1.0_amd64.deb']);
      assert.equal(await app.ctx.db.selectFrom('import_claims').select('key').execute().then((r) => r.length), 0, 'no claim is left behind');
    });

    it('admits the next package once the previous one is stored, without waiting for its signed index', async () => {
      // Publishes held back 200 ms each: an importer that waited for each package's signed index
      // would never have two uploads under way.
      const { publisher, uploads } = app.ctx.repo;
      const publish = publisher.request.bind(publisher);
      const upload = uploads.upload.bind(uploads);
      let running = 0;
      let most = 0;
      publisher.request = async (codename) => {
        await new Promise((resolve) => setTimeout(resolve, 200));
        return publish(codename);
      };
      uploads.upload = async (...args) => {
        most = Math.max(most, ++running);
        try {
          return await upload(...args);
        } finally {
          running--;
        }
      };
      try {
        const res = await app.app.inject({ method: 'POST', url: '/import/fetch', headers: { ...uploader, accept: 'text/event-stream' }, payload: { name: 'chain-top', distribution: 'bookworm' } });
        const progress = res.body.split('\n\n').filter((b) => b.startsWith('event: package')).map((b) => JSON.parse(/^data: (.*)$/m.exec(b)![1]!).package as Imported & { result: { pipeline: Record<string, string> } });
        // Still in dependency order, each reported in turn, each one's dependency check seeing those before it.
        assert.deepEqual(progress.map((p) => p.name), ['chain-low', 'chain-mid', 'chain-side', 'chain-top']);
        assert.deepEqual(progress.map((p) => [p.status, p.result.pipeline.dependencies]), Array(4).fill(['published', 'satisfied']));
        assert.ok(most >= 2, `uploads under way at once: ${most}`);
      } finally {
        publisher.request = publish;
        uploads.upload = upload;
      }
      const index = await app.app.inject({ method: 'GET', url: '/repo/apt/dists/bookworm/main/binary-amd64/Packages' });
      for (const name of ['chain-low', 'chain-mid', 'chain-side', 'chain-top']) assert.match(index.body, new RegExp(`^Package: ${name}$`, 'm'));
    });

    it('leaves no downloaded file behind, whatever became of each package', async () => {
      // Every earlier import here (published, present, failed, raced, downloaded ahead) has ended.
      assert.deepEqual((await readdir(app.ctx.repo.files.tempDir)).filter((f) => !f.startsWith('.')), []);
      assert.deepEqual((await readdir(app.ctx.repo.files.tempDir)).filter((f) => f.endsWith('.tmp')), []);
    });
  });
}
