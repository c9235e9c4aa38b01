import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends, bearer, startTestApp, type TestApp } from '../helpers/app.js';

for (const backend of backends()) {
  describe(`settings store (${backend})`, () => {
    let t: TestApp;
    let admin: string;
    before(async () => {
      t = await startTestApp({ backend });
      admin = await t.tokenFor('admin');
    });
    after(() => t.close());

    const patch = (payload: unknown) => t.app.inject({ method: 'PATCH', url: '/settings', headers: bearer(admin), payload: payload as object });

    it('returns every key with defaults, secrets null when unset', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/settings/', headers: bearer(admin) });
      assert.equal(res.statusCode, 200);
      const s = res.json();
      assert.equal(s.retention_days, 90);
      assert.equal(s.smtp_password, null);
      assert.deepEqual(s.cve_policy, { critical: 'review', high: 'review', medium: 'warn', low: 'allow' });
    });

    it('stores secrets encrypted, answers them masked, and keeps them when the mask is sent back', async () => {
      const res = await patch({ smtp_password: 'hunter2-Secret', smtp_host: 'mail.example.org', retention_days: 30 });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().smtp_password, '********');
      assert.equal(res.json().retention_days, 30);
      const row = await t.ctx.db.selectFrom('settings').selectAll().where('key', '=', 'smtp_password').executeTakeFirstOrThrow();
      assert.ok(!row.value.includes('hunter2'), 'secret stored in clear');
      // smtp_from is not a destination: the mask keeps the secret.
      await patch({ smtp_password: '********', smtp_from: 'tollgate@example.org' });
      assert.equal(await t.ctx.settings.get('smtp_password'), 'hunter2-Secret');
      const audit = await t.ctx.db.selectFrom('audit_index').selectAll().where('action', '=', 'SETTINGS_CHANGE').execute();
      assert.ok(audit.length >= 2);
      assert.ok(audit.some((a) => a.detail?.includes('smtp_password')));
      assert.ok(audit.every((a) => !a.detail?.includes('hunter2')));
    });

    it('app_url: only an absolute http(s) URL without credentials, query, fragment or shell characters', async () => {
      const hostile = [
        "https://tollgate.example.org/'; touch /tmp/pwned; echo '",
        'javascript:alert(1)',
        'https://user:secret@tollgate.example.org',
        'https://tollgate.example.org/?next=1',
        'https://tollgate.example.org/#top',
        'https://tollgate.example.org/$(id)',
        'https://tollgate.example.org/`id`',
        'https://tollgate.example.org/a b',
        'https://tollgate.example.org/\nrm',
        'https://tollgate.example.org/a;b',
        'https://tollgate.example.org/a"b',
        'ftp://tollgate.example.org',
        'tollgate.example.org',
        '/relative/path',
        'https://',
      ];
      for (const app_url of hostile) {
        const res = await patch({ app_url });
        assert.equal(res.statusCode, 422, app_url);
        assert.equal(res.json().code, 'validation_error');
        assert.deepEqual(res.json().errors[0].loc, ['body', 'app_url']);
      }
      assert.equal(await t.ctx.settings.get('app_url'), null, 'nothing stored');
      for (const [app_url, stored] of [['https://tollgate.example.org', 'https://tollgate.example.org'], ['http://127.0.0.1:8000/tollgate/', 'http://127.0.0.1:8000/tollgate'], ['https://[::1]:8443', 'https://[::1]:8443']]) {
        const res = await patch({ app_url });
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json().app_url, stored);
      }
      assert.equal((await patch({ app_url: null })).statusCode, 200);
    });

    it('rate_limits: only the names of the Limits table', async () => {
      const ok = await patch({ rate_limits: { login: 5, upload: 0 } });
      assert.equal(ok.statusCode, 200, ok.body);
      assert.deepEqual(ok.json().rate_limits, { login: 5, upload: 0 });
      for (const rate_limits of [{ logn: 5 }, { login: 5, no_such_limit: 1 }, { LOGIN: 5 }]) {
        const res = await patch({ rate_limits });
        assert.equal(res.statusCode, 422, JSON.stringify(rate_limits));
        assert.equal(res.json().code, 'validation_error');
      }
      assert.deepEqual(await t.ctx.settings.get('rate_limits'), { login: 5, upload: 0 });
      await patch({ rate_limits: {} });
    });

    it('refuses unknown keys and wrong types with 422', async () => {
      for (const body of [{ no_such_key: 1 }, { retention_days: 'ten' }, { webhook_enabled: 'yes' }, { cve_policy: { critical: 'explode', high: 'review', medium: 'warn', low: 'allow' } }, { retention_days: -1 }, {}]) {
        const res = await patch(body);
        assert.equal(res.statusCode, 422, JSON.stringify(body));
        assert.equal(typeof res.json().detail, 'string');
        assert.equal(res.json().code, 'validation_error');
      }
    });
  });
}

describe('audit retention', () => {
  it('removes day files older than retention_days, drops them from the index, and the chain still verifies', async () => {
    const { readdir, rename } = await import('node:fs/promises');
    const { join } = await import('node:path');
    const t = await startTestApp();
    try {
      const admin = await t.tokenFor('admin');
      const dir = join(t.dataDir, 'audit');
      const [today] = await readdir(dir).then((f) => f.filter((n) => n.endsWith('.jsonl')));
      // What was written so far becomes an old day: its entries keep their chain.
      await rename(join(dir, today!), join(dir, '2020-01-01.jsonl'));
      const before = await t.ctx.db.selectFrom('audit_index').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
      await t.app.inject({ method: 'PATCH', url: '/settings', headers: bearer(admin), payload: { retention_days: 30 } });
      const res = await t.app.inject({ method: 'POST', url: '/settings/run-retention', headers: bearer(admin) });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { retention_days: 30, removed_files: ['2020-01-01.jsonl'] });
      assert.ok(!(await readdir(dir)).includes('2020-01-01.jsonl'));
      const after = await t.ctx.db.selectFrom('audit_index').select(['action', 'seq']).execute();
      // The removed file held seq 1..n; none of them is left in the query index.
      assert.ok(after.length > 0 && after.every((e) => Number(e.seq) > Number(before.n)), JSON.stringify(after));
      assert.ok(after.some((e) => e.action === 'RETENTION'));
      const verify = await t.app.inject({ method: 'GET', url: '/audit/verify', headers: bearer(admin) });
      assert.equal(verify.json().ok, true, verify.body);
      const next = await t.app.inject({ method: 'GET', url: '/settings/next-sync', headers: bearer(admin) });
      assert.match(next.json().jobs.audit_retention, /T02:00:00/);
    } finally {
      await t.close();
    }
  });
});
