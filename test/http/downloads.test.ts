import assert from 'node:assert/strict';
import { appendFile, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { backends, bearer, startTestApp, type TestApp } from '../helpers/app.js';
import { buildDeb } from '../../harness/debs.js';
import { multipartBody } from '../../harness/multipart.js';
import { buildRpm } from '../../harness/rpms.js';
import { makeTempDir } from '../helpers/tmp.js';
import type { DownloadCountsTable } from '../../src/adapters/db/schema.js';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DAY_MS = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** `[25/Nov/2026:10:00:00 +0000]` for an instant. */
function logTime(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${p(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000`;
}

const line = (ms: number, target: string, status = 200, method = 'GET', ip = '203.0.113.9') =>
  `${ip} - - [${logTime(ms)}] "${method} ${target} HTTP/1.1" ${status} 1024 "-" "Debian APT-HTTP/1.3 (2.4.11) \\"x\\""\n`;

type CountRow = DownloadCountsTable;

for (const backend of backends()) {
  describe(`download statistics (${backend})`, () => {
    let t: TestApp;
    let reader: string;
    let work: { dir: string; cleanup: () => Promise<void> };
    let logs: string;
    const pool: Record<string, string> = {};

    const counts = async (): Promise<CountRow[]> =>
      (await t.ctx.db.selectFrom('download_counts').selectAll().orderBy('day').orderBy('name').orderBy('distribution').execute())
        .map((r) => ({ ...r, downloads: Number(r.downloads) }));
    const countOf = (rows: CountRow[], name: string, day: string, distribution?: string) =>
      rows.filter((r) => r.name === name && r.day === day && (distribution === undefined || r.distribution === distribution)).reduce((n, r) => n + r.downloads, 0);
    const get = (url: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') => t.app.inject({ method, url, headers });
    const stats = async (query: string) => {
      const res = await t.app.inject({ method: 'GET', url: `/downloads/stats${query}`, headers: bearer(reader) });
      return { status: res.statusCode, body: res.json() as Record<string, any> };
    };

    before(async () => {
      work = await makeTempDir('tollgate-downloads-');
      logs = join(work.dir, 'logs');
      await mkdir(logs);
      t = await startTestApp({ backend, env: { ACCESS_LOG_PATH: join(logs, 'access.log*') } });
      const admin = await t.tokenFor('admin');
      reader = await t.tokenFor('reader');
      const uploads: Array<[string, string]> = [
        [await buildDeb(work.dir, { name: 'dl-one', version: '1.0-1' }), 'jammy'],
        [await buildDeb(work.dir, { name: 'dl-shared', version: '2:1.5+ds1-1', arch: 'all' }), 'jammy'],
        [await buildRpm(work.dir, { name: 'dl-rpm', version: '3.1', files: { '/usr/share/dl-rpm/a': 'a\n' }, noAutoReqProv: true }), 'rocky9'],
      ];
      for (const [path, distribution] of uploads) {
        const form = await multipartBody({ distribution }, { path });
        const res = await t.app.inject({ method: 'POST', url: '/upload', headers: { ...bearer(admin), ...form.headers }, payload: form.payload });
        assert.equal(res.statusCode, 201, res.body);
      }
      const promoted = await t.app.inject({
        method: 'POST', url: '/distributions/promote', headers: bearer(admin),
        payload: { name: 'dl-shared', version: '2:1.5+ds1-1', from_distribution: 'jammy', to_distribution: 'noble' },
      });
      assert.equal(promoted.statusCode, 200, promoted.body);
      for (const r of await t.ctx.db.selectFrom('packages').select(['name', 'pool_path']).execute()) pool[r.name] = r.pool_path;
      assert.equal(pool['dl-shared'], 'apt/pool/main/d/dl-shared/dl-shared_1.5+ds1-1_all.deb');
    });
    after(async () => {
      await t.close();
      await work.cleanup();
    });

    it('counts package files served at /repo/ per package, distribution and UTC day', async () => {
      const today = dayOf(Date.now());
      for (let i = 0; i < 3; i++) assert.equal((await get(`/repo/${pool['dl-one']}`)).statusCode, 200);
      // apt asks with %2b for '+': the same file, counted once per request, credited to no single distribution.
      assert.equal((await get(`/repo/${pool['dl-shared']!.replace(/\+/g, '%2b')}`)).statusCode, 200);
      assert.equal((await get(`/repo/${pool['dl-shared']}`)).statusCode, 200);
      assert.equal((await get(`/repo/${pool['dl-rpm']}`)).statusCode, 200);
      // Not downloads: HEAD, a resumed range, an index file, a missing file.
      assert.equal((await get(`/repo/${pool['dl-one']}`, {}, 'HEAD')).statusCode, 200);
      assert.equal((await get(`/repo/${pool['dl-one']}`, { range: 'bytes=10-' })).statusCode, 206);
      assert.equal((await get('/repo/apt/dists/jammy/InRelease')).statusCode, 200);
      assert.equal((await get('/repo/apt/pool/main/n/nope/nope_1_amd64.deb')).statusCode, 404);
      // The first part of a ranged download counts.
      assert.equal((await get(`/repo/${pool['dl-rpm']}`, { range: 'bytes=0-9' })).statusCode, 206);

      // (The service's own 5-second flush may already have written some of them: the sums are the same.)
      await t.ctx.downloads.counter.flush();
      assert.equal(t.ctx.downloads.counter.buffered, 0);
      const rows = await counts();
      assert.deepEqual(rows, [
        { day: today, distribution: 'jammy', name: 'dl-one', version: '1.0-1', arch: 'amd64', downloads: 3 },
        { day: today, distribution: 'rocky9', name: 'dl-rpm', version: '3.1-1', arch: 'x86_64', downloads: 2 },
        { day: today, distribution: '', name: 'dl-shared', version: '2:1.5+ds1-1', arch: 'all', downloads: 2 },
      ]);

      const { status, body } = await stats('?days=7');
      assert.equal(status, 200);
      assert.equal(body.days, 7);
      assert.equal(body.to, today);
      assert.equal(body.from, dayOf(Date.now() - 6 * DAY_MS));
      assert.equal(body.total, 7);
      assert.equal(body.distinct_packages, 3);
      assert.equal(body.by_day.length, 7);
      assert.deepEqual(body.by_day.at(-1), { day: today, downloads: 7 });
      assert.deepEqual(body.packages.map((p: any) => [p.name, p.distribution, p.downloads]), [
        ['dl-one', 'jammy', 3], ['dl-rpm', 'rocky9', 2], ['dl-shared', null, 2],
      ]);
      assert.deepEqual(body.by_distribution, [
        { distribution: 'jammy', downloads: 3 }, { distribution: null, downloads: 2 }, { distribution: 'rocky9', downloads: 2 },
      ]);
      assert.equal((await stats('?days=90&limit=1')).body.packages.length, 1);
      assert.equal((await stats('')).body.days, 30);
    });

    it('answers 422 with the error body for any other window', async () => {
      for (const query of ['?days=8', '?days=0', '?days=abc', '?days=-7', '?days=7.5', '?bogus=1']) {
        const { status, body } = await stats(query);
        assert.equal(status, 422, query);
        assert.equal(typeof body.detail, 'string');
        assert.ok(body.detail.length > 0);
        assert.match(body.code, /^[a-z][a-z0-9_]*$/);
      }
      assert.equal((await stats('?days=8')).body.code, 'invalid_days');
      const anon = await t.app.inject({ method: 'GET', url: '/downloads/stats?days=7' });
      assert.equal(anon.statusCode, 401);
    });

    it('reads proxy logs once, rotated and gzipped parts included, and resumes after appends and rotation', async () => {
      const now = Date.now();
      // One hour into today, yesterday and the day before (UTC).
      const d0 = now - (now % DAY_MS) + 3_600_000;
      const d1 = d0 - DAY_MS;
      const d2 = d0 - 2 * DAY_MS;
      const [day0, day1, day2] = [dayOf(d0), dayOf(d1), dayOf(d2)] as const;
      const before = await counts();
      const one = `/repo/${pool['dl-one']}`;
      // Oldest part, gzipped: two downloads two days ago, one through another prefix.
      await writeFile(join(logs, 'access.log.2.gz'), gzipSync(
        line(d2, one) + line(d2, `/${pool['dl-rpm']}`) + line(d2, '/repo/apt/dists/jammy/InRelease'),
      ));
      // Rotated part: yesterday; a 404, a HEAD, a resumed range, an index and a malformed line do not count.
      await writeFile(join(logs, 'access.log.1'),
        line(d1, one) + line(d1, one, 404) + line(d1, one, 200, 'HEAD') + line(d1, one, 206)
        + line(d1, '/repo/rpm/rocky9/x86_64/repodata/repomd.xml') + 'this is not a log line\n'
        + line(d1, `/repo/${pool['dl-shared']!.replace(/\+/g, '%2B')}`, 200, 'GET', '2001:db8::7'));
      // Current file: today; an unknown package file is read but credited to nobody.
      await writeFile(join(logs, 'access.log'), line(d0, one) + line(d0, '/repo/apt/pool/main/g/gone/gone_1_amd64.deb'));

      const first = await t.ctx.downloads.logs!.ingest();
      assert.deepEqual({ files: first.files, counted: first.counted, unresolved: first.unresolved }, { files: 3, counted: 5, unresolved: 1 });
      let rows = await counts();
      assert.equal(countOf(rows, 'dl-one', day2) - countOf(before, 'dl-one', day2), 1);
      assert.equal(countOf(rows, 'dl-rpm', day2, 'rocky9') - countOf(before, 'dl-rpm', day2), 1);
      assert.equal(countOf(rows, 'dl-one', day1, 'jammy') - countOf(before, 'dl-one', day1), 1);
      assert.equal(countOf(rows, 'dl-shared', day1, '') - countOf(before, 'dl-shared', day1), 1);
      assert.equal(countOf(rows, 'dl-one', day0, 'jammy') - countOf(before, 'dl-one', day0), 1);

      // Nothing new: nothing counted.
      const again = await t.ctx.downloads.logs!.ingest();
      assert.equal(again.counted, 0);
      assert.deepEqual(await counts(), rows);

      // Appended lines (the last one still being written, without its newline) count once.
      await appendFile(join(logs, 'access.log'), line(d0, one) + line(d0, one).trimEnd());
      assert.equal((await t.ctx.downloads.logs!.ingest()).counted, 1);
      assert.equal(countOf(await counts(), 'dl-one', day0) - countOf(rows, 'dl-one', day0), 1);
      await appendFile(join(logs, 'access.log'), '\n');
      assert.equal((await t.ctx.downloads.logs!.ingest()).counted, 1);
      rows = await counts();

      // Rotation as logrotate does it: .2.gz → .3.gz, .1 → .2.gz (compressed), the current file → .1,
      // and a new current file. Only the lines written after the last run count.
      await rename(join(logs, 'access.log.2.gz'), join(logs, 'access.log.3.gz'));
      await writeFile(join(logs, 'access.log.2.gz'), gzipSync(await readFile(join(logs, 'access.log.1'))));
      await rename(join(logs, 'access.log'), join(logs, 'access.log.1'));
      await appendFile(join(logs, 'access.log.1'), line(d0, `/repo/${pool['dl-rpm']}`));
      await writeFile(join(logs, 'access.log'), line(d0 + 60_000, one) + line(d0 + 61_000, one));
      const rotated = await t.ctx.downloads.logs!.ingest();
      assert.equal(rotated.counted, 3);
      const after = await counts();
      assert.equal(countOf(after, 'dl-one', day0) - countOf(rows, 'dl-one', day0), 2);
      assert.equal(countOf(after, 'dl-rpm', day0) - countOf(rows, 'dl-rpm', day0), 1);
      assert.equal(after.reduce((n, r) => n + r.downloads, 0) - rows.reduce((n, r) => n + r.downloads, 0), 3);
      assert.equal((await t.ctx.downloads.logs!.ingest()).counted, 0);

      // The statistics include the log downloads of the window's days.
      const { body } = await stats('?days=7');
      assert.equal(body.total, after.filter((r) => r.day >= body.from).reduce((n, r) => n + r.downloads, 0));
      assert.equal(body.by_day.find((d: any) => d.day === day1).downloads, countOf(after, 'dl-one', day1) + countOf(after, 'dl-shared', day1));
      const top = body.packages.find((p: any) => p.name === 'dl-one');
      assert.equal(top.downloads, after.filter((r) => r.name === 'dl-one').reduce((n, r) => n + r.downloads, 0));
    });

    it('keeps the per-window totals exact from one UTC day to the next', async () => {
      const store = t.ctx.downloads.store;
      const path = pool['dl-rpm']!;
      // Days far from the others so that nothing else falls into these windows.
      const base = Date.parse('2030-01-10T12:00:00Z');
      const at = (d: number) => new Date(base + d * DAY_MS);
      const day = (d: number) => dayOf(base + d * DAY_MS);
      const rpmIn = async (days: 7 | 30, now: Date) =>
        (await store.stats(days, 10, now)).packages.find((p) => p.name === 'dl-rpm')?.downloads ?? 0;
      await store.add([{ day: day(-6), path, downloads: 5 }, { day: day(0), path, downloads: 2 }]);
      assert.equal(await rpmIn(7, at(0)), 7);
      // The next day the window moves: the day that left it no longer counts.
      assert.equal(await rpmIn(7, at(1)), 2);
      assert.equal(await rpmIn(30, at(1)), 7);
      // Downloads added after the move count in the windows holding their day.
      await store.add([{ day: day(1), path, downloads: 1 }, { day: day(-20), path, downloads: 4 }]);
      assert.equal(await rpmIn(7, at(1)), 3);
      assert.equal(await rpmIn(30, at(1)), 12);
      // Added before the windows move to a new day (a flush first thing after midnight), the new
      // day's downloads join when they move; an older day's at once.
      await store.add([{ day: day(2), path, downloads: 10 }, { day: day(-3), path, downloads: 100 }]);
      assert.equal(await rpmIn(7, at(2)), 2 + 1 + 10 + 100);
      assert.equal(await rpmIn(30, at(2)), 5 + 2 + 1 + 4 + 10 + 100);
      // Six days later only day(2) is left in the 7-day window; a jump of a whole window rebuilds it.
      assert.equal(await rpmIn(7, at(8)), 10);
      assert.equal(await rpmIn(7, at(40)), 0);
      assert.equal(await rpmIn(30, at(40)), 0);
      const s = await store.stats(7, 10, at(2));
      assert.equal(s.total, 2 + 1 + 10 + 100);
      assert.deepEqual(s.by_day.slice(-3), [{ day: day(0), downloads: 2 }, { day: day(1), downloads: 1 }, { day: day(2), downloads: 10 }]);
    });
  });
}
