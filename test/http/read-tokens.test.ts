import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends, bearer, startTestApp, type TestApp } from '../helpers/app.js';
import { buildDeb } from '../../harness/debs.js';
import { multipartBody } from '../../harness/multipart.js';
import { makeTempDir } from '../helpers/tmp.js';

const basic = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });

for (const backend of backends()) {
  describe(`read tokens and downloads per token (${backend})`, () => {
    let t: TestApp;
    let admin: string;
    let builder: string;
    let work: { dir: string; cleanup: () => Promise<void> };
    const pool: Record<string, string> = {};
    let readToken: { token: string; token_id: string };
    let apiToken: { token: string; token_id: string };

    const create = (session: string, payload: Record<string, unknown>) =>
      t.app.inject({ method: 'POST', url: '/auth/api-tokens', headers: bearer(session), payload });
    const repo = (path: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') =>
      t.app.inject({ method, url: `/repo/${path}`, headers });
    const upload = async (path: string, distribution: string) => {
      const form = await multipartBody({ distribution }, { path });
      const res = await t.app.inject({ method: 'POST', url: '/upload', headers: { ...bearer(admin), ...form.headers }, payload: form.payload });
      assert.equal(res.statusCode, 201, res.body);
    };
    const stats = async (session: string, query = '') => {
      const res = await t.app.inject({ method: 'GET', url: `/downloads/stats?days=7${query}`, headers: bearer(session) });
      return { status: res.statusCode, body: res.json() as Record<string, any> };
    };

    before(async () => {
      work = await makeTempDir('tollgate-read-tokens-');
      t = await startTestApp({ backend });
      admin = await t.tokenFor('admin');
      builder = await t.tokenFor('uploader', 'ci-builder');
      for (const codename of ['team-a', 'team-b']) {
        const res = await t.app.inject({ method: 'POST', url: '/distributions', headers: bearer(admin), payload: { codename, format: 'deb', private: true, architectures: ['amd64'] } });
        assert.equal(res.statusCode, 201, res.body);
      }
      await upload(await buildDeb(work.dir, { name: 'a-secret', version: '1.0-1' }), 'team-a');
      await upload(await buildDeb(work.dir, { name: 'b-secret', version: '1.0-1' }), 'team-b');
      // One file published by both private distributions: a token for either reads it.
      const both = await buildDeb(work.dir, { name: 'ab-shared', version: '1.0-1' });
      await upload(both, 'team-a');
      await upload(both, 'team-b');
      await upload(await buildDeb(work.dir, { name: 'pub-tool', version: '2.0-1' }), 'jammy');
      for (const r of await t.ctx.db.selectFrom('packages').select(['name', 'pool_path']).execute()) pool[r.name] = r.pool_path;
    });
    after(async () => {
      await t.close();
      await work.cleanup();
    });

    it('creates a tg_r_ token scoped to distributions, shown once, listed with its kind and audited', async () => {
      const res = await create(builder, { name: 'apt on team-a hosts', kind: 'read', distributions: ['team-a', 'team-a'] });
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json();
      assert.match(body.token, /^tg_r_[A-Za-z0-9_-]{43}$/);
      assert.equal(body.prefix, 'tg_r_');
      assert.equal(body.kind, 'read');
      assert.equal(body.role, 'reader');
      assert.deepEqual(body.distributions, ['team-a']);
      readToken = body;
      const stored = await t.ctx.db.selectFrom('api_tokens').selectAll().where('id', '=', body.token_id).executeTakeFirstOrThrow();
      assert.equal(stored.kind, 'read');
      assert.notEqual(stored.token_hash, body.token);
      const list = await t.app.inject({ method: 'GET', url: '/auth/api-tokens', headers: bearer(builder) });
      assert.ok(!list.body.includes(body.token), 'the secret is not listed');
      const listed = (list.json() as Array<Record<string, unknown>>).find((x) => x.token_id === body.token_id)!;
      assert.deepEqual([listed.kind, listed.distributions, listed.prefix], ['read', ['team-a'], 'tg_r_']);
      apiToken = (await create(builder, { name: 'ci' })).json();
      assert.equal((apiToken as any).kind, 'api');
      assert.equal((apiToken as any).distributions, null);
      const audit = await t.app.inject({ method: 'GET', url: '/audit/logs?action=TOKEN_CREATE', headers: bearer(admin) });
      assert.match(audit.body, new RegExp(`token ${body.token_id} \\\\"apt on team-a hosts\\\\" role=reader kind=read distributions=team-a`));
    });

    it('refuses read tokens without distributions, with unknown ones, with another role, and distributions on an API token (422)', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ name: 'x', kind: 'read' }, 'distributions_required'],
        [{ name: 'x', kind: 'read', distributions: ['team-a', 'nowhere'] }, 'unknown_distribution'],
        [{ name: 'x', kind: 'read', distributions: ['team-a'], role: 'uploader' }, 'invalid_role'],
        [{ name: 'x', distributions: ['team-a'] }, 'distributions_need_read_token'],
      ];
      for (const [payload, code] of cases) {
        const res = await create(builder, payload);
        assert.equal(res.statusCode, 422, res.body);
        assert.equal(res.json().code, code);
      }
      assert.equal((await create(builder, { name: 'x', kind: 'write', distributions: ['team-a'] })).statusCode, 422);
      // Readers make no tokens at all, read ones included.
      assert.equal((await create(await t.tokenFor('reader'), { name: 'x', kind: 'read', distributions: ['team-a'] })).statusCode, 403);
    });

    it('is refused on every API route (403 read_token_not_allowed), Basic or Bearer', async () => {
      for (const [method, url] of [['GET', '/artifacts'], ['GET', '/auth/me'], ['GET', '/downloads/stats'], ['GET', '/api/v1/distributions'], ['POST', '/auth/api-tokens']] as const) {
        const res = await t.app.inject({ method, url, headers: bearer(readToken.token), ...(method === 'POST' ? { payload: { name: 'y' } } : {}) });
        assert.equal(res.statusCode, 403, `${method} ${url}: ${res.body}`);
        assert.equal(res.json().code, 'read_token_not_allowed');
      }
      // The API's own scheme is Bearer; a Basic header is no credential there.
      assert.equal((await t.app.inject({ method: 'GET', url: '/artifacts', headers: basic('ci-builder', readToken.token) })).statusCode, 401);
      // An API token keeps working as before.
      assert.equal((await t.app.inject({ method: 'GET', url: '/artifacts', headers: bearer(apiToken.token) })).statusCode, 200);
    });

    it('reads its distributions at /repo/ and nothing private beyond them (401 token_out_of_scope)', async () => {
      for (const path of ['apt/dists/team-a/InRelease', 'apt/dists/team-a/main/binary-amd64/Packages', pool['a-secret']!, pool['ab-shared']!]) {
        assert.equal((await repo(path, basic('ci-builder', readToken.token))).statusCode, 200, path);
        assert.equal((await repo(path, bearer(readToken.token))).statusCode, 200, path);
      }
      for (const path of ['apt/dists/team-b/InRelease', pool['b-secret']!]) {
        const res = await repo(path, basic('ci-builder', readToken.token));
        assert.equal(res.statusCode, 401, path);
        assert.equal(res.json().code, 'token_out_of_scope');
        assert.match(String(res.headers['www-authenticate']), /^Basic realm="Tollgate repository"/);
        // An API token reads every private distribution, as before.
        assert.equal((await repo(path, basic('ci-builder', apiToken.token))).statusCode, 200, path);
      }
      // Public files stay public, whatever credential comes with them.
      assert.equal((await repo(pool['pub-tool']!, basic('ci-builder', readToken.token))).statusCode, 200);
      assert.equal((await repo(pool['pub-tool']!, basic('ci-builder', 'tg_r_not-a-token'))).statusCode, 200);
    });

    it('attributes downloads to the token they were made with, in by_token and with ?token=', async () => {
      await t.ctx.downloads.counter.flush();
      const before = (await stats(admin)).body;
      const byTokenBefore = new Map((before.by_token as any[]).map((r) => [r.token_id, r.downloads]));
      // Made with the read token: 2 of a-secret (Basic, Bearer), 1 of the shared file, 1 of a public package.
      assert.equal((await repo(pool['a-secret']!, basic('ci-builder', readToken.token))).statusCode, 200);
      assert.equal((await repo(pool['a-secret']!, bearer(readToken.token))).statusCode, 200);
      assert.equal((await repo(pool['ab-shared']!, basic('ci-builder', readToken.token))).statusCode, 200);
      assert.equal((await repo(pool['pub-tool']!, basic('ci-builder', readToken.token))).statusCode, 200);
      // Not downloads: HEAD and an index file.
      assert.equal((await repo(pool['a-secret']!, basic('ci-builder', readToken.token), 'HEAD')).statusCode, 200);
      // With the API token: 1; anonymous, and with a wrong credential on a public file: counted for no token.
      assert.equal((await repo(pool['b-secret']!, basic('ci-builder', apiToken.token))).statusCode, 200);
      assert.equal((await repo(pool['pub-tool']!)).statusCode, 200);
      assert.equal((await repo(pool['pub-tool']!, basic('x', 'tg_wrong'))).statusCode, 200);

      const { status, body } = await stats(admin);
      assert.equal(status, 200);
      assert.equal(body.total - before.total, 7, 'every download counts in the totals, with or without a token');
      const byToken = new Map((body.by_token as any[]).map((r) => [r.token_id, r]));
      assert.equal(byToken.get(readToken.token_id).downloads - (byTokenBefore.get(readToken.token_id) ?? 0), 4);
      assert.equal(byToken.get(apiToken.token_id).downloads - (byTokenBefore.get(apiToken.token_id) ?? 0), 1);
      assert.deepEqual(
        { ...byToken.get(readToken.token_id), downloads: 0 },
        { token_id: readToken.token_id, username: 'ci-builder', name: 'apt on team-a hosts', kind: 'read', downloads: 0 },
      );
      assert.ok(!JSON.stringify(body).includes(readToken.token), 'no secret in the statistics');

      const only = await stats(admin, `&token=${readToken.token_id}`);
      assert.equal(only.status, 200);
      assert.equal(only.body.total, byToken.get(readToken.token_id).downloads);
      assert.equal(only.body.token.token_id, readToken.token_id);
      assert.equal(only.body.token.username, 'ci-builder');
      assert.equal(only.body.by_token, undefined);
      const packages = new Map((only.body.packages as any[]).map((p) => [p.name, p]));
      assert.equal(packages.get('a-secret').distribution, 'team-a');
      assert.equal(packages.get('ab-shared').distribution, null, 'a pool file two distributions list is credited to none, as in the totals');
      assert.equal(packages.get('pub-tool').distribution, 'jammy');
      assert.ok(!packages.has('b-secret'));
      assert.equal(only.body.distinct_packages, 3);
      assert.equal(only.body.by_day.at(-1).downloads, only.body.total);
      assert.deepEqual(new Set((only.body.by_distribution as any[]).map((d) => d.distribution)), new Set(['team-a', null, 'jammy']));

      // The owner sees their own tokens; others see none of them, and ?token= of another's token is 404.
      const own = await stats(builder);
      assert.deepEqual(new Set((own.body.by_token as any[]).map((r) => r.token_id)), new Set([readToken.token_id, apiToken.token_id]));
      assert.equal((await stats(builder, `&token=${readToken.token_id}`)).status, 200);
      const reader = await t.tokenFor('reader');
      assert.deepEqual((await stats(reader)).body.by_token, []);
      const hidden = await stats(reader, `&token=${readToken.token_id}`);
      assert.equal(hidden.status, 404);
      assert.equal(hidden.body.code, 'token_not_found');
      assert.equal((await stats(admin, '&token=00000000-0000-0000-0000-000000000000')).status, 404);
    });

    it('is refused at once when revoked, and the revocation is audited', async () => {
      const res = await t.app.inject({ method: 'DELETE', url: `/auth/api-tokens/${readToken.token_id}`, headers: bearer(builder) });
      assert.equal(res.statusCode, 204);
      const refused = await repo('apt/dists/team-a/InRelease', basic('ci-builder', readToken.token));
      assert.equal(refused.statusCode, 401);
      assert.equal(refused.json().code, 'invalid_token');
      const audit = await t.app.inject({ method: 'GET', url: '/audit/logs?action=TOKEN_REVOKE', headers: bearer(admin) });
      assert.match(audit.body, new RegExp(`token ${readToken.token_id} \\\\"apt on team-a hosts\\\\" kind=read`));
      // Its downloads stay in the statistics.
      assert.ok((await stats(builder, `&token=${readToken.token_id}`)).body.total >= 4);
    });

    it('keeps the per-token window totals exact from one UTC day to the next', async () => {
      const store = t.ctx.downloads.store;
      const path = pool['pub-tool']!;
      const token = { id: 'token-rolling-over', username: 'roller' };
      // Days far from the others so that nothing else falls into these windows.
      const base = Date.parse('2031-03-10T12:00:00Z');
      const at = (d: number) => new Date(base + d * 86_400_000);
      const day = (d: number) => at(d).toISOString().slice(0, 10);
      const inWindow = async (days: 7 | 30, now: Date) =>
        (await store.statsWithTokens(days, 10, { all: true }, now)).by_token!.find((r) => r.token_id === token.id)?.downloads ?? 0;
      await store.add([{ day: day(-6), path, downloads: 5, token }, { day: day(0), path, downloads: 2, token }, { day: day(0), path, downloads: 50 }]);
      assert.equal(await inWindow(7, at(0)), 7);
      assert.equal(await inWindow(7, at(1)), 2);
      assert.equal(await inWindow(30, at(1)), 7);
      await store.add([{ day: day(1), path, downloads: 1, token }, { day: day(-20), path, downloads: 4, token }]);
      assert.equal(await inWindow(7, at(1)), 3);
      assert.equal(await inWindow(30, at(1)), 12);
      await store.add([{ day: day(2), path, downloads: 10, token }, { day: day(-3), path, downloads: 100, token }]);
      assert.equal(await inWindow(7, at(2)), 2 + 1 + 10 + 100);
      assert.equal(await inWindow(30, at(2)), 5 + 2 + 1 + 4 + 10 + 100);
      const one = await store.tokenStats(7, 10, token.id, at(2));
      assert.equal(one.total, 2 + 1 + 10 + 100);
      assert.deepEqual(one.token, { token_id: token.id, username: 'roller', name: null, kind: null, downloads: 113 });
      assert.equal(await inWindow(7, at(8)), 10);
      assert.equal(await inWindow(7, at(40)), 0);
      assert.equal(await inWindow(30, at(40)), 0);
    });
  });
}
