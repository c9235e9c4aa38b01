/**
 * Issue 17: a stored secret is bound to the destination it was entered for. Changing where it
 * goes (ldap_url; smtp_host, smtp_port, smtp_tls; webhook_url) clears it unless the same PATCH
 * supplies it again. Against real peers on loopback: slapd, an SMTP server that records AUTH
 * attempts, webhook receivers, and a raw TCP listener that records every byte an LDAP client
 * sends it (a simple bind carries the password in clear, so it would show there).
 */
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { verifyWebhookSignature } from '../../src/adapters/webhook/index.js';
import { backends, bearer, startTestApp, type TestApp } from '../helpers/app.js';
import { startSlapd, type RunningSlapd } from '../helpers/slapd.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const BIND_PASSWORD = 'svc-Bind-pw-7731';
const SMTP_PASSWORD = 'smtp-Pass-5520';
const OTHER_SMTP_PASSWORD = 'other-Pass-0914';
const WEBHOOK_SECRET = 'webhook-Secret-4410';

/** Accepts connections, keeps every byte received, and hangs up after the first chunk. */
async function startRecorder(): Promise<{ url: string; received: () => string; connections: () => number; close: () => Promise<void> }> {
  const chunks: Buffer[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      socket.destroy();
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('recorder has no port');
  return {
    url: `ldap://127.0.0.1:${address.port}`,
    received: () => Buffer.concat(chunks).toString('latin1'),
    connections: () => connections,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let slapd: RunningSlapd;
let smtpA: TestSmtpServer;
let smtpB: TestSmtpServer;
let hookA: WebhookReceiver;
let hookB: WebhookReceiver;

before(async () => {
  slapd = await startSlapd({ users: [{ uid: 'svc', password: BIND_PASSWORD }] });
  smtpA = await startSmtpServer({ auth: { user: 'mailer', pass: SMTP_PASSWORD } });
  smtpB = await startSmtpServer({ auth: { user: 'mailer', pass: OTHER_SMTP_PASSWORD } });
  hookA = await startWebhookReceiver();
  hookB = await startWebhookReceiver();
});
after(async () => {
  await slapd?.stop();
  await smtpA?.close();
  await smtpB?.close();
  await hookA?.close();
  await hookB?.close();
});

for (const backend of backends()) {
  describe(`secrets bound to their destination (${backend})`, () => {
    let t: TestApp;
    let admin: string;
    before(async () => {
      t = await startTestApp({ backend, env: { EDITION: 'enterprise' } });
      admin = await t.tokenFor('admin');
    });
    after(() => t.close());

    const patch = async (payload: Record<string, unknown>) => {
      const res = await t.app.inject({ method: 'PATCH', url: '/settings', headers: bearer(admin), payload });
      assert.equal(res.statusCode, 200, res.body);
      return res.json() as Record<string, unknown> & { cleared_secrets: string[] };
    };
    const post = async (path: string) => {
      const res = await t.app.inject({ method: 'POST', url: path, headers: bearer(admin) });
      assert.equal(res.statusCode, 200, res.body);
      return res.json() as { ok: boolean; detail?: string; status?: number | null };
    };
    const auditDetails = async () =>
      (await t.ctx.db.selectFrom('audit_index').select(['action', 'detail']).where('action', '=', 'SETTINGS_CHANGE').orderBy('seq').execute()).map((e) => e.detail ?? '');

    it('LDAP: a new ldap_url without the password clears it, and nothing reaches the new host', async () => {
      const first = await patch({ ldap_url: slapd.url, ldap_base_dn: slapd.baseDn, ldap_bind_dn: slapd.userDn('svc'), ldap_bind_password: BIND_PASSWORD });
      assert.deepEqual(first.cleared_secrets, []);
      assert.equal((await post('/settings/test-ldap')).ok, true);

      const recorder = await startRecorder();
      try {
        const moved = await patch({ ldap_url: recorder.url });
        assert.deepEqual(moved.cleared_secrets, ['ldap_bind_password']);
        assert.equal(moved.ldap_bind_password, null);
        assert.equal(await t.ctx.settings.get('ldap_bind_password'), null);
        const test = await post('/settings/test-ldap');
        assert.equal(test.ok, false);
        assert.match(test.detail!, /ldap_bind_password is empty/);
        assert.ok(!recorder.received().includes(BIND_PASSWORD), 'the stored bind password reached the new host');

        // Sending the mask is not supplying the password: it is cleared all the same.
        await patch({ ldap_url: slapd.url, ldap_bind_password: BIND_PASSWORD });
        const masked = await patch({ ldap_url: recorder.url, ldap_bind_password: '********' });
        assert.deepEqual(masked.cleared_secrets, ['ldap_bind_password']);
        await post('/settings/test-ldap');
        assert.ok(!recorder.received().includes(BIND_PASSWORD));

        // Control: the listener does see a password that is sent to it.
        await patch({ ldap_bind_password: 'typed-for-this-host' });
        await post('/settings/test-ldap');
        assert.ok(recorder.received().includes('typed-for-this-host'), 'the recorder sees a simple bind password');
      } finally {
        await recorder.close();
      }

      const back = await patch({ ldap_url: slapd.url, ldap_bind_password: BIND_PASSWORD });
      assert.deepEqual(back.cleared_secrets, [], 'supplied again in the same PATCH: kept');
      assert.equal((await post('/settings/test-ldap')).ok, true);

      const details = await auditDetails();
      assert.ok(details.some((d) => d.includes('secrets cleared (destination changed): ldap_bind_password')), details.join('\n'));
      assert.ok(details.every((d) => !d.includes(BIND_PASSWORD) && !d.includes('typed-for-this-host')));
    });

    it('SMTP: a new host, port or TLS mode without the password clears it; the new server sees no AUTH', async () => {
      const first = await patch({
        smtp_host: smtpA.host, smtp_port: smtpA.port, smtp_tls: 'none', smtp_user: 'mailer', smtp_password: SMTP_PASSWORD,
        smtp_from: 'tollgate@example.test', notify_emails: ['ops@example.org'],
      });
      assert.deepEqual(first.cleared_secrets, []);
      assert.equal((await post('/settings/test-email')).ok, true);
      assert.equal(smtpA.messages.at(-1)?.user, 'mailer');

      const attemptsBefore = smtpB.authAttempts.length;
      const messagesBefore = smtpB.messages.length;
      const moved = await patch({ smtp_port: smtpB.port });
      assert.deepEqual(moved.cleared_secrets, ['smtp_password']);
      assert.equal(moved.smtp_password, null);
      const test = await post('/settings/test-email');
      assert.equal(test.ok, false, 'server B requires AUTH');
      assert.equal(smtpB.authAttempts.length, attemptsBefore, 'no AUTH was sent to the new server');
      assert.equal(smtpB.messages.length, messagesBefore);

      // Supplied again in the same PATCH: kept, and used (B sees exactly what was typed for it).
      const resupplied = await patch({ smtp_port: smtpA.port, smtp_password: SMTP_PASSWORD });
      assert.deepEqual(resupplied.cleared_secrets, []);
      assert.equal((await post('/settings/test-email')).ok, true);
      const forB = await patch({ smtp_port: smtpB.port, smtp_password: OTHER_SMTP_PASSWORD });
      assert.deepEqual(forB.cleared_secrets, []);
      assert.equal((await post('/settings/test-email')).ok, true);
      assert.deepEqual(smtpB.authAttempts.slice(attemptsBefore).map((a) => a.pass), [OTHER_SMTP_PASSWORD]);

      // The host name and the TLS mode are part of the destination too.
      await patch({ smtp_host: smtpA.host, smtp_port: smtpA.port, smtp_password: SMTP_PASSWORD });
      assert.deepEqual((await patch({ smtp_host: 'localhost' })).cleared_secrets, ['smtp_password']);
      await patch({ smtp_host: smtpA.host, smtp_password: SMTP_PASSWORD });
      assert.deepEqual((await patch({ smtp_tls: 'starttls' })).cleared_secrets, ['smtp_password']);
      assert.equal(await t.ctx.settings.get('smtp_password'), null);

      // Other keys, or the same values again, leave it alone.
      await patch({ smtp_tls: 'none', smtp_password: SMTP_PASSWORD });
      assert.deepEqual((await patch({ smtp_host: smtpA.host, smtp_port: smtpA.port, smtp_from: 'other@example.test', smtp_user: 'mailer' })).cleared_secrets, []);
      assert.equal(await t.ctx.settings.get('smtp_password'), SMTP_PASSWORD);
      assert.ok(smtpB.authAttempts.every((a) => a.pass !== SMTP_PASSWORD), 'A\'s password never reached B');
    });

    it('webhook: a new webhook_url without the secret clears it; requests to it are not signed with the old one', async () => {
      const first = await patch({ webhook_url: hookA.url, webhook_secret: WEBHOOK_SECRET });
      assert.deepEqual(first.cleared_secrets, []);
      assert.equal((await post('/settings/test-webhook')).ok, true);
      const signedA = hookA.requests.at(-1)!;
      assert.ok(verifyWebhookSignature(signedA.body, signedA.headers['x-tollgate-signature'] as string, WEBHOOK_SECRET));

      const moved = await patch({ webhook_url: hookB.url });
      assert.deepEqual(moved.cleared_secrets, ['webhook_secret']);
      assert.equal((await post('/settings/test-webhook')).ok, true);
      const toB = hookB.requests.at(-1)!;
      assert.equal(toB.headers['x-tollgate-signature'], undefined, 'no signature without a secret');
      assert.ok(!verifyWebhookSignature(toB.body, toB.headers['x-tollgate-signature'] as string | undefined, WEBHOOK_SECRET));

      const back = await patch({ webhook_url: hookA.url, webhook_secret: WEBHOOK_SECRET });
      assert.deepEqual(back.cleared_secrets, []);
      await post('/settings/test-webhook');
      const again = hookA.requests.at(-1)!;
      assert.ok(verifyWebhookSignature(again.body, again.headers['x-tollgate-signature'] as string, WEBHOOK_SECRET));
    });

    it('the rule holds whatever calls the settings service (notifications use the same store)', async () => {
      await t.ctx.settings.update({ webhook_url: hookA.url, webhook_secret: WEBHOOK_SECRET }, 'test');
      const change = await t.ctx.settings.update({ webhook_url: hookB.url }, 'test');
      assert.deepEqual(change.cleared, ['webhook_secret']);
      assert.ok(change.changed.includes('webhook_secret'));
      assert.equal(await t.ctx.settings.get('webhook_secret'), null);
    });
  });
}
