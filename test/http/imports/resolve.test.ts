/**
 * Search and dependency resolution over catalogs synced from upstream repositories built here:
 * chains, alternatives, virtual packages, version constraints, cycles, file provides, rich
 * dependencies, what the target distribution already publishes, and what nothing satisfies.
 */
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { backends, bearer, startTestApp, type TestApp } from '../../helpers/app.js';
import { buildDeb } from '../../../harness/debs.js';
import { multipartBody } from '../../../harness/multipart.js';
import { makeTempDir } from '../../helpers/tmp.js';
import { RESOLVER_WARM_UP_FROM } from '../../../src/services/imports/index.js';
import { CatalogQuery } from '../../../src/services/imports/catalog-query.js';
import { ResidentCatalogs } from '../../../src/services/imports/resident-catalogs.js';
import type { PackedCatalog } from '../../../src/domain/imports/packed-catalog.js';
import { catalogLookup, currentGenerations } from '../../../src/adapters/db/import-catalog.table.js';
import { buildAptRepo, buildRpmRepo, makeGpgKey, serveDir, writeAptIndexes, type GpgKey, type StaticServer } from '../../../harness/upstream.js';

interface Fixture {
  dir: string;
  key: string;
  gpg: GpgKey;
  server: StaticServer;
  localDeb: string;
  cleanup(): Promise<void>;
}

async function fixture(): Promise<Fixture> {
  const tmp = await makeTempDir('tollgate-resolve-');
  const key = await makeGpgKey(join(tmp.dir, 'gpg'));
  await buildAptRepo(join(tmp.dir, 'apt'), key, [
    { name: 'app', version: '1.0', preDepends: 'libchain1', depends: 'mta-missing | postfixish, virtual-thing, libver (<< 2.0), localdep (>= 1.0), cyc-a, vt2 (>= 1)' },
    { name: 'libchain1', version: '1.0', depends: 'libchain-data (= 3)' },
    { name: 'libchain-data', version: '3', arch: 'all' },
    { name: 'postfixish', version: '2.0' },
    { name: 'provider-a', version: '1.0', provides: 'virtual-thing' },
    { name: 'libver', version: '1.0' },
    { name: 'libver', version: '1.5' },
    { name: 'libver', version: '2.0' },
    { name: 'cyc-a', version: '1', depends: 'cyc-b' },
    { name: 'cyc-b', version: '1', depends: 'cyc-a (>= 1)' },
    { name: 'vt2-unversioned', version: '1', provides: 'vt2' },
    { name: 'vt2-provider', version: '1', provides: 'vt2 (= 1.5)' },
    { name: 'broken', version: '1', depends: 'nowhere (>= 1), libver (>= 9)' },
    { name: 'localdep', version: '0.5' },
    { name: 'twice-provider', version: '1', provides: 'twice (= 1), twice (= 2)' },
  ]);
  await buildRpmRepo(join(tmp.dir, 'rpm'), key, [
    { name: 'rpm-app', version: '1.0', requires: ['rpm-lib >= 2', 'rpm-lib < 3', '/usr/bin/rpm-tool', '(rpm-missing or rpm-alt)', 'rpm-virtual', 'rpm-cyc-a'] },
    { name: 'rpm-lib', version: '1.0' },
    { name: 'rpm-lib', version: '2.0' },
    { name: 'rpm-lib', version: '3.0' },
    { name: 'rpm-tool', version: '1.0', files: { '/usr/bin/rpm-tool': 'binary' }, noAutoReqProv: true },
    { name: 'rpm-alt', version: '1.0' },
    { name: 'rpm-prov', version: '1.0', provides: ['rpm-virtual'] },
    { name: 'rpm-cyc-a', version: '1', requires: ['rpm-cyc-b'] },
    { name: 'rpm-cyc-b', version: '1', requires: ['rpm-cyc-a'] },
  ]);
  await mkdir(join(tmp.dir, 'local'));
  const localDeb = await buildDeb(join(tmp.dir, 'local'), { name: 'localdep', version: '1.2' });
  const server = await serveDir(tmp.dir);
  return { dir: tmp.dir, key: key.armoredPublic, gpg: key, server, localDeb, async cleanup() { await server.close(); await tmp.cleanup(); } };
}

type Resolution = {
  package: string; version: string; total: number; resolvable: boolean;
  packages: Array<{ name: string; version: string; required_by: string | null; relation: string | null; reason: string; sha256: string }>;
  already_present: Array<{ required_by: string; relation: string }>;
  unsatisfiable: Array<{ required_by: string; relation: string }>;
};

/** What a packed catalog answers for `name`, as lines to compare with the database's rows. */
function answersOf(packed: PackedCatalog, name: string): string[] {
  const got: string[] = [];
  packed.visit(name, (seq) => got.push(`${seq} named`), (seq, version, flags) => got.push(`${seq} provides ${version} ${flags}`));
  return got;
}

for (const backend of backends()) {
  describe(`import search and resolve (${backend})`, () => {
    let app: TestApp;
    let fx: Fixture;
    let admin: Record<string, string>;
    let reader: Record<string, string>;
    before(async () => {
      fx = await fixture();
      app = await startTestApp({ backend });
      admin = bearer(await app.tokenFor('admin'));
      reader = bearer(await app.tokenFor('reader'));
    });
    after(async () => {
      await app?.close();
      await fx?.cleanup();
    });
    const get = (url: string) => app.app.inject({ method: 'GET', url, headers: reader });
    const resolve = async (url: string): Promise<Resolution> => {
      const res = await get(url);
      assert.equal(res.statusCode, 200, res.body);
      return res.json() as Resolution;
    };
    const byName = (r: Resolution) => Object.fromEntries(r.packages.map((p) => [p.name, p]));

    it('answers 424 catalog_empty before any sync', async () => {
      for (const url of ['/import/search?q=app', '/import/resolve/app']) {
        const res = await get(url);
        assert.equal(res.statusCode, 424);
        assert.equal(res.json().code, 'catalog_empty');
      }
    });

    it('syncs both sources and publishes a local package into the target distribution', async () => {
      for (const body of [
        { name: 'up-apt', type: 'apt', url: `${fx.server.url}/apt`, suite: 'stable', key: fx.key, distribution: 'bookworm' },
        { name: 'up-rpm', type: 'rpm', baseurl: `${fx.server.url}/rpm`, key: fx.key, distribution: 'rocky9' },
      ]) {
        const created = await app.app.inject({ method: 'POST', url: '/import/sources', headers: admin, payload: body });
        assert.equal(created.statusCode, 201, created.body);
        const synced = await app.app.inject({ method: 'POST', url: `/import/sync/${created.json().id}`, headers: admin });
        assert.equal(synced.json().status, 'synced', synced.body);
      }
      const form = await multipartBody({ distribution: 'bookworm' }, { path: fx.localDeb });
      const up = await app.app.inject({ method: 'POST', url: '/upload', headers: { ...admin, ...form.headers }, payload: form.payload });
      assert.equal(up.json().status, 'published', up.body);
    });

    it('searches by name with the pagination envelope', async () => {
      const res = await get('/import/search?q=libver&limit=2');
      assert.equal(res.statusCode, 200);
      const page = res.json();
      assert.equal(page.total, 3);
      assert.equal(page.items.length, 2);
      assert.equal(page.pages, 2);
      assert.equal(page.per_page, 2);
      assert.ok(page.items.every((i: { name: string; distribution: string }) => i.name === 'libver' && i.distribution === 'bookworm'));
      const exactFirst = (await get('/import/search?q=rpm-lib')).json();
      assert.equal(exactFirst.items[0].name, 'rpm-lib');
      assert.equal((await get('/import/search?q=%25')).json().total, 0);
      assert.equal((await get('/import/search?q=nothing-like-this')).json().total, 0);
    });

    it('resolves an APT closure: chain, alternatives, virtual, version constraint, cycle, present in the target', async () => {
      const r = await resolve('/import/resolve/app?distribution=bookworm');
      const p = byName(r);
      assert.equal(r.package, 'app');
      assert.equal(p.app!.reason, 'requested');
      assert.equal(p.libchain1!.relation, 'libchain1');
      assert.equal(p['libchain-data']!.required_by, 'libchain1');
      assert.equal(p['libchain-data']!.relation, 'libchain-data (= 3)');
      assert.equal(p.postfixish!.relation, 'mta-missing | postfixish');
      assert.equal(p['provider-a']!.relation, 'virtual-thing');
      assert.equal(p.libver!.version, '1.5');
      assert.ok(p['cyc-a'] && p['cyc-b']);
      assert.equal(p['cyc-b']!.required_by, 'cyc-a');
      // Only a provider of an exact version satisfies a versioned relation on a virtual name.
      assert.equal(p['vt2-provider']!.relation, 'vt2 (>= 1)');
      assert.equal(p['vt2-unversioned'], undefined);
      // localdep 1.2 is published in bookworm: the catalog's 0.5 is not pulled in.
      assert.equal(p.localdep, undefined);
      assert.deepEqual(r.already_present, [{ required_by: 'app', relation: 'localdep (>= 1.0)' }]);
      assert.deepEqual(r.unsatisfiable, []);
      assert.equal(r.resolvable, true);
      assert.equal(r.total, 9);
      assert.match(p.libver!.sha256, /^[0-9a-f]{64}$/);
    });

    it('reports unsatisfiable dependencies, pinned versions and unknown packages', async () => {
      const broken = await resolve('/import/resolve/broken');
      assert.equal(broken.resolvable, false);
      assert.deepEqual(broken.unsatisfiable.map((u) => u.relation).sort(), ['libver (>= 9)', 'nowhere (>= 1)']);
      const pinned = await resolve('/import/resolve/libver?version=1.0&distribution=bookworm');
      assert.equal(pinned.version, '1.0');
      assert.equal((await resolve('/import/resolve/libver')).version, '2.0');
      const missing = await get('/import/resolve/no-such-package?distribution=bookworm');
      assert.equal(missing.statusCode, 404);
      assert.equal(missing.json().code, 'package_not_found');
    });

    it('sees a re-synced catalog at once (look-ups are kept per catalog generation)', async () => {
      assert.equal(byName(await resolve('/import/resolve/app?distribution=bookworm')).libver!.version, '1.5');
      await buildDeb(join(fx.dir, 'apt', 'pool', 'main'), { name: 'libver', version: '1.6' });
      await writeAptIndexes(join(fx.dir, 'apt'), fx.gpg);
      const sources = await app.app.inject({ method: 'GET', url: '/import/sources', headers: admin });
      const source = (sources.json() as Array<{ id: string; name: string }>).find((s) => s.name === 'up-apt')!;
      const synced = await app.app.inject({ method: 'POST', url: `/import/sync/${source.id}`, headers: admin });
      assert.equal(synced.json().status, 'synced', synced.body);
      const r = await resolve('/import/resolve/app?distribution=bookworm');
      assert.equal(byName(r).libver!.version, '1.6');
      assert.equal(r.total, 9);
    });

    it('resolves an RPM closure: EVR ranges, file provides, rich or, virtual, cycle', async () => {
      const r = await resolve('/import/resolve/rpm-app?distribution=rocky9');
      const p = byName(r);
      assert.equal(p['rpm-lib']!.version, '2.0-1');
      assert.equal(p['rpm-tool']!.relation, '/usr/bin/rpm-tool');
      assert.equal(p['rpm-alt']!.relation, '(rpm-missing or rpm-alt)');
      assert.equal(p['rpm-prov']!.relation, 'rpm-virtual');
      assert.ok(p['rpm-cyc-a'] && p['rpm-cyc-b']);
      assert.deepEqual(r.unsatisfiable, []);
      assert.equal(r.total, 7);
    });

    it('the catalogs held in memory answer every name as the database does, packed by the sync or read back from the rows', async () => {
      const { db } = app.ctx;
      const generations = await currentGenerations(db);
      assert.equal(generations.size, 2);
      // Read back in pages of 1 to 3 rows: pages end inside the two rows of (twice, twice-provider), and a page is filled by them.
      for (const pageRows of [1, 2, 3]) for (const [sourceId, generation] of generations) {
        const fromRows = new ResidentCatalogs(db, { budget: 64 << 20, pageRows });
        const bySync = app.ctx.imports.catalog.resident.get(sourceId, generation);
        assert.ok(bySync, 'the sync packed its catalog');
        const readBack = await fromRows.load(sourceId, generation);
        assert.ok(readBack);
        const both: PackedCatalog[] = [bySync, readBack];
        const named = (table: 'import_catalog' | 'import_catalog_provides') =>
          db.selectFrom(table).select('name').distinct().where('source_id', '=', sourceId).where('generation', '=', generation).execute();
        const names = [...new Set([...(await named('import_catalog')), ...(await named('import_catalog_provides'))].map((r) => r.name)), 'nowhere-at-all'];
        assert.ok(names.length > 10);
        for (const name of names) {
          const rows = await catalogLookup(db, sourceId, generation, [name]);
          const expected = rows.map((r) => `${r.seq} ${r.provided_name === null ? 'named' : `provides ${r.provided_version} ${r.provided_flags}`}`).sort();
          for (const packed of both) {
            assert.deepEqual(answersOf(packed, name).sort(), expected, name);
            for (const r of rows) assert.deepEqual(packed.record(r.seq), { seq: r.seq, format: r.format, name: r.name, version: r.version, arch: r.arch, location: r.location, size: Number(r.size), sha256: r.sha256, summary: r.summary, relations: r.relations });
          }
        }
      }
    });

    it('resolves the same with the catalogs in memory, read from the database, or over the memory budget', async () => {
      const { db } = app.ctx;
      const held = app.ctx.imports.catalog;
      const withoutMemory = new CatalogQuery(db);
      const overBudget = new CatalogQuery(db, new ResidentCatalogs(db, { budget: 1000 }));
      for (const [name, distribution] of [['app', 'bookworm'], ['rpm-app', 'rocky9'], ['broken', 'bookworm']] as const) {
        const expected = await held.resolve(name, { distribution });
        assert.deepEqual(await withoutMemory.resolve(name, { distribution }), expected);
        assert.deepEqual(await overBudget.resolve(name, { distribution }), expected);
        assert.deepEqual(await overBudget.resolve(name, { distribution }), expected);
      }
      // Over its budget, a catalog is refused for good (not read again at each resolution); a budget of 0 holds nothing.
      const [sourceId, generation] = [...(await currentGenerations(db))][0]!;
      assert.equal(await overBudget.resident.load(sourceId, generation), null);
      assert.equal(overBudget.resident.bytes, 0);
      assert.equal(await new ResidentCatalogs(db, { budget: 0 }).load(sourceId, generation), null);
    });

    it('packs a generation it does not hold (another replica synced) in the background, and drops deleted sources', async () => {
      const { db } = app.ctx;
      const resident = new ResidentCatalogs(db, { budget: 64 << 20 });
      const [sourceId, generation] = [...(await currentGenerations(db))][0]!;
      assert.equal(resident.get(sourceId, generation), undefined);
      const packed = await resident.load(sourceId, generation); // the packing get() started
      assert.ok(packed);
      assert.equal(resident.get(sourceId, generation), packed);
      assert.equal(resident.get(sourceId, generation + 1), undefined); // a generation with no rows: nothing to hold
      assert.equal(await resident.load(sourceId, generation + 1), null);
      assert.equal(resident.get(sourceId, generation), packed);
      assert.ok(resident.bytes > 0);
      resident.keepOnly([]);
      assert.equal(resident.bytes, 0);
    });

    it('the resolver warm-up changes no answer; catalogs under RESOLVER_WARM_UP_FROM packages skip it', async () => {
      const urls = ['/import/resolve/app?distribution=bookworm', '/import/resolve/rpm-app?distribution=rocky9', '/import/resolve/broken'];
      const answers = await Promise.all(urls.map(resolve));
      const { imports } = app.ctx;
      const madeUpOnly = await imports.catalog.warmUp(2);
      assert.ok(madeUpOnly.ms > 0);
      assert.equal(madeUpOnly.catalogRoots, 0);
      assert.deepEqual(await Promise.all(urls.map(resolve)), answers);
      // The catalog half, on catalogs of any size: a few of each catalog's packages, or all of one source's up to 16.
      const status = (await app.app.inject({ method: 'GET', url: '/import/sync-status', headers: admin })).json() as Array<{ source_id: string; count: number }>;
      const perCatalog = Math.max(4, Math.ceil(16 / status.length));
      assert.equal((await imports.catalog.warmUp(1, { from: 0 })).catalogRoots, status.reduce((sum, s) => sum + Math.min(perCatalog, Number(s.count)), 0));
      const one = status.find((s) => Number(s.count) > 4)!;
      assert.equal((await imports.catalog.warmUp(1, { from: 0, sourceId: one.source_id })).catalogRoots, Math.min(16, Number(one.count)));
      assert.equal((await imports.catalog.warmUp(1, { from: RESOLVER_WARM_UP_FROM })).catalogRoots, 0);
      assert.deepEqual(await Promise.all(urls.map(resolve)), answers);
      const warmUp = imports.catalog.warmUp;
      let runs = 0;
      imports.catalog.warmUp = async () => ({ ms: (runs += 1), catalogRoots: 0 });
      try {
        await imports.prepareResolver(); // the largest catalog synced here: a few packages
        assert.equal(runs, 0);
        await imports.prepareResolver(RESOLVER_WARM_UP_FROM);
        assert.equal(runs, 1);
      } finally {
        imports.catalog.warmUp = warmUp;
      }
    });
  });
}
