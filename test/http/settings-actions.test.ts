import assert from 'node:assert/strict';
import { symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { verifyWebhookSignature } from '../../src/adapters/webhook/index.js';
import { backends, bearer, startTestApp, type TestApp } from '../helpers/app.js';
import { startSlapd, type RunningSlapd } from '../helpers/slapd.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

/** POST /settings/test-webhook, test-ldap and test-email against real servers. */

const SECRET = 'test-webhook-secret';
let slapd: RunningSlapd;
let smtp: TestSmtpServer;
const receivers: WebhookReceiver[] = [];

before(async () => {
  slapd = await startSlapd({ users: [{ uid: 'svc', password: 'svc-pw' }] });
  smtp = await startSmtpServer();
});
after(async () => {
  await slapd?.stop();
  await smtp?.close();
  await Promise.all(receivers.map((r) => r.close()));
});

async function receiver(options: Parameters<typeof startWebhookReceiver>[0] = {}): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver(options);
  receivers.push(r);
  return r;
}

for (const backend of backends()) {
  describe(`settings actions (${backend}, enterprise)`, () => {
    let t: TestApp;
    let admin: string;
    before(async () => {
      t = await startTestApp({ backend, env: { EDITION: 'enterprise' } });
      admin = await t.tokenFor('admin');
    });
    after(() => t.close());

    const post = (path: string, token = admin) => t.app.inject({ method: 'POST', url: path, headers: bearer(token) });
    const patch = async (payload: Record<string, unknown>) => {
      const res = await t.app.inject({ method: 'PATCH', url: '/settings', headers: bearer(admin), payload });
      assert.equal(res.statusCode, 200, res.body);
    };

    it('is admin only', async () => {
      const maintainer = await t.tokenFor('maintainer');
      for (const path of ['/settings/test-webhook', '/settings/test-ldap', '/settings/test-email']) {
        assert.equal((await post(path, maintainer)).statusCode, 403, path);
        assert.equal((await t.app.inject({ method: 'POST', url: path })).statusCode, 401, path);
      }
    });

    it('test-webhook: 422 without a URL, then a signed test event even while webhooks are disabled', async () => {
      const none = await post('/settings/test-webhook');
      assert.equal(none.statusCode, 422);
      assert.equal(none.json().code, 'webhook_not_configured');

      const hook = await receiver();
      await patch({ webhook_url: hook.url, webhook_secret: SECRET, webhook_enabled: false });
      const res = await post('/api/v1/settings/test-webhook');
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { ok: true, status: 204, attempts: 1 });
      assert.equal(hook.requests.length, 1);
      const request = hook.requests[0]!;
      assert.equal(request.headers['x-tollgate-event'], 'test');
      assert.ok(verifyWebhookSignature(request.body, request.headers['x-tollgate-signature'] as string, SECRET));
      assert.equal((hook.json(0) as { event: string }).event, 'test');
    });

    it('test-webhook: answers 200 with ok=false when the receiver refuses', async () => {
      const hook = await receiver({ failFirst: 10, failStatus: 404 });
      await patch({ webhook_url: hook.url });
      const res = await post('/settings/test-webhook');
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.ok, false);
      assert.equal(body.status, 404);
      assert.equal(body.attempts, 1, '4xx is not retried');
      assert.match(body.error, /404/);
    });

    it('test-webhook: retries a 500 before answering', async () => {
      const hook = await receiver({ failFirst: 1, failStatus: 500 });
      await patch({ webhook_url: hook.url });
      const res = await post('/settings/test-webhook');
      assert.deepEqual(res.json(), { ok: true, status: 204, attempts: 2 });
    });

    it('test-ldap: 422 until configured, ok with a good bind, ok=false with a wrong password', async () => {
      const none = await post('/settings/test-ldap');
      assert.equal(none.statusCode, 422);
      assert.equal(none.json().code, 'ldap_not_configured');

      await patch({ ldap_url: slapd.url, ldap_base_dn: slapd.baseDn, ldap_bind_dn: slapd.userDn('svc'), ldap_bind_password: 'svc-pw' });
      const good = await post('/settings/test-ldap');
      assert.equal(good.statusCode, 200, good.body);
      assert.equal(good.json().ok, true, good.body);
      assert.match(good.json().detail, /bound as uid=svc/);

      await patch({ ldap_bind_password: 'wrong-pw' });
      const bad = await post('/settings/test-ldap');
      assert.equal(bad.statusCode, 200);
      assert.equal(bad.json().ok, false);
      assert.ok(!bad.body.includes('wrong-pw'));
    });

    it('test-email: 422 without SMTP or recipient, then mails notify_emails or the admin', async () => {
      const none = await post('/settings/test-email');
      assert.equal(none.statusCode, 422);
      assert.equal(none.json().code, 'smtp_not_configured');

      await patch({ smtp_host: smtp.host, smtp_port: smtp.port, smtp_from: 'tollgate@example.test', smtp_tls: 'none', notify_emails: [] });
      const nobody = await post('/settings/test-email');
      assert.equal(nobody.statusCode, 422);
      assert.equal(nobody.json().code, 'no_email_recipient');

      const self = await t.app.inject({ method: 'PATCH', url: '/auth/users/admin', headers: bearer(admin), payload: { email: 'admin@example.org' } });
      assert.equal(self.statusCode, 200, self.body);
      const before = smtp.messages.length;
      const toAdmin = await post('/settings/test-email');
      assert.equal(toAdmin.statusCode, 200, toAdmin.body);
      assert.equal(toAdmin.json().ok, true);
      assert.deepEqual(smtp.messages[before]?.to, ['admin@example.org']);
      assert.equal(smtp.messages[before]?.subject, 'Tollgate test e-mail');

      await patch({ notify_emails: ['ops@example.org'] });
      const toList = await post('/settings/test-email');
      assert.equal(toList.json().ok, true);
      assert.deepEqual(smtp.messages[before + 1]?.to, ['ops@example.org']);
    });

    it('test-email: answers 200 with ok=false when the server cannot be reached', async () => {
      const down = await startSmtpServer();
      const port = down.port;
      await down.close();
      await patch({ smtp_port: port });
      try {
        const res = await post('/settings/test-email');
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json().ok, false);
        assert.match(res.json().detail, /SMTP/);
      } finally {
        await patch({ smtp_port: smtp.port });
      }
    });

    it('audits each test: SETTINGS_TEST with the target host and the result, never a secret', async () => {
      const entries = async () =>
        (await t.ctx.db.selectFrom('audit_index').selectAll().where('action', '=', 'SETTINGS_TEST').orderBy('seq').execute()).map((e) => ({ ...e, detail: JSON.parse(e.detail ?? '{}') as Record<string, unknown> }));
      const before = (await entries()).length;
      const hook = await receiver();
      await patch({ webhook_url: `${hook.url}/path-token-1234`, webhook_secret: SECRET, ldap_url: slapd.url, ldap_bind_password: 'svc-pw' });
      for (const path of ['/settings/test-webhook', '/settings/test-ldap', '/settings/test-email']) {
        assert.equal((await post(path)).statusCode, 200, path);
      }
      await patch({ ldap_bind_password: 'wrong-pw' });
      assert.equal((await post('/settings/test-ldap')).json().ok, false);

      const logged = (await entries()).slice(before);
      const port = new URL(slapd.url).port;
      assert.deepEqual(logged.map((e) => [e.username, e.result, e.detail.check, e.detail.target]), [
        ['admin', 'SUCCESS', 'webhook', new URL(hook.url).origin],
        ['admin', 'SUCCESS', 'ldap', `ldap://127.0.0.1:${port}`],
        ['admin', 'SUCCESS', 'email', `${smtp.host}:${smtp.port}`],
        ['admin', 'FAILURE', 'ldap', `ldap://127.0.0.1:${port}`],
      ]);
      const text = JSON.stringify(logged);
      for (const secret of [SECRET, 'svc-pw', 'wrong-pw', 'path-token-1234']) assert.ok(!text.includes(secret), secret);
      const api = await t.app.inject({ method: 'GET', url: '/audit/logs?action=SETTINGS_TEST', headers: bearer(admin) });
      assert.equal(api.statusCode, 200, api.body);
      assert.ok(api.json().items.length >= 4);
    });

    it('a test that cannot start (nothing configured) is refused with 422 and not audited', async () => {
      const count = async () => Number((await t.ctx.db.selectFrom('audit_index').select((eb) => eb.fn.countAll().as('n')).where('action', '=', 'SETTINGS_TEST').executeTakeFirstOrThrow()).n);
      const before = await count();
      await patch({ webhook_url: null });
      assert.equal((await post('/settings/test-webhook')).statusCode, 422);
      assert.equal(await count(), before);
    });
  });
}

describe('settings actions (community edition)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ env: { EDITION: 'community' } });
  });
  after(() => t.close());

  it('answers 402 enterprise_required for all three (DECISIONS §10)', async () => {
    const admin = await t.tokenFor('admin');
    for (const path of ['/settings/test-webhook', '/settings/test-ldap', '/settings/test-email']) {
      const res = await t.app.inject({ method: 'POST', url: path, headers: bearer(admin) });
      assert.equal(res.statusCode, 402, path);
      assert.equal(res.json().code, 'enterprise_required');
      assert.equal(res.json().edition, 'community');
    }
  });
});

describe('test-ldap over TLS with ca_bundle_path (only under CA_BUNDLE_DIR)', () => {
  let tls: RunningSlapd;
  let t: TestApp;
  before(async () => {
    tls = await startSlapd({ tls: true, users: [{ uid: 'svc', password: 'svc-pw' }] });
    t = await startTestApp({ env: { EDITION: 'enterprise', CA_BUNDLE_DIR: dirname(tls.caFile!) } });
  });
  after(async () => {
    await t?.close();
    await tls?.stop();
  });

  it('trusts a bundle in the folder; refuses paths outside it (422) and links out of it (generic answer)', async () => {
    const admin = await t.tokenFor('admin');
    const patch = (payload: Record<string, unknown>) => t.app.inject({ method: 'PATCH', url: '/settings', headers: bearer(admin), payload });
    for (const ca_bundle_path of ['/etc/passwd', `${dirname(tls.caFile!)}/../x.pem`, 'relative.pem']) {
      const res = await patch({ ca_bundle_path });
      assert.equal(res.statusCode, 422, ca_bundle_path);
      assert.deepEqual(res.json().errors[0].loc, ['body', 'ca_bundle_path']);
    }
    const ok = await patch({ ldap_url: tls.ldapsUrl, ldap_base_dn: tls.baseDn, ldap_bind_dn: tls.userDn('svc'), ldap_bind_password: 'svc-pw', ca_bundle_path: tls.caFile });
    assert.equal(ok.statusCode, 200, ok.body);
    const good = await t.app.inject({ method: 'POST', url: '/settings/test-ldap', headers: bearer(admin) });
    assert.equal(good.json().ok, true, good.body);

    const link = join(dirname(tls.caFile!), 'link-out.pem');
    await symlink('/etc/passwd', link);
    assert.equal((await patch({ ca_bundle_path: link })).statusCode, 200);
    const refused = await t.app.inject({ method: 'POST', url: '/settings/test-ldap', headers: bearer(admin) });
    assert.deepEqual(refused.json(), { ok: false, detail: 'cannot read ca_bundle_path: it must be a readable file under CA_BUNDLE_DIR' });
    assert.equal((await patch({ ca_bundle_path: join(dirname(tls.caFile!), 'missing.pem') })).statusCode, 200);
    const missing = await t.app.inject({ method: 'POST', url: '/settings/test-ldap', headers: bearer(admin) });
    assert.deepEqual(missing.json(), refused.json(), 'a missing file and a link out answer the same');
  });

  it('without CA_BUNDLE_DIR no ca_bundle_path is accepted', async () => {
    const plain = await startTestApp({ env: { EDITION: 'enterprise' } });
    try {
      const res = await plain.app.inject({ method: 'PATCH', url: '/settings', headers: bearer(await plain.tokenFor('admin')), payload: { ca_bundle_path: tls.caFile } });
      assert.equal(res.statusCode, 422);
      assert.match(res.json().detail, /CA_BUNDLE_DIR/);
    } finally {
      await plain.close();
    }
  });
});
