import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends, bearer, startTestApp, TEST_PASSWORD, type TestApp } from '../helpers/app.js';
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from '../helpers/smtp.js';
import { isoUtc } from '../../src/domain/time.js';

/** Self-service password reset end to end: the link travels through a real SMTP server. */

const APP_URL = 'https://tollgate.example.test';

/** The message body with quoted-printable transfer encoding undone (nodemailer uses it for long lines). */
function bodyOf(mail: ReceivedMail): string {
  const split = mail.raw.search(/\r?\n\r?\n/);
  const headers = mail.raw.slice(0, split);
  const body = mail.raw.slice(split).trim();
  if (!/^Content-Transfer-Encoding:\s*quoted-printable/im.test(headers)) return body;
  const bytes = body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

async function nextMail(smtp: TestSmtpServer, count: number): Promise<ReceivedMail> {
  const deadline = Date.now() + 10_000;
  while (smtp.messages.length < count) {
    if (Date.now() > deadline) throw new Error(`no e-mail arrived (have ${smtp.messages.length}, want ${count})`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return smtp.messages[count - 1]!;
}

function resetToken(mail: ReceivedMail): string {
  const escaped = APP_URL.replace(/[.]/g, '\\.');
  const match = new RegExp(`${escaped}/reset-password\\?token=([A-Za-z0-9_-]+)`).exec(bodyOf(mail));
  assert.ok(match, `no reset link in:\n${bodyOf(mail)}`);
  return match[1]!;
}

for (const backend of backends()) {
  describe(`password reset by e-mail (${backend})`, () => {
    let t: TestApp;
    let smtp: TestSmtpServer;
    before(async () => {
      smtp = await startSmtpServer();
      t = await startTestApp({ backend });
      const admin = await t.tokenFor('admin');
      const res = await t.app.inject({
        method: 'PATCH', url: '/settings', headers: bearer(admin),
        payload: { app_url: APP_URL, smtp_host: smtp.host, smtp_port: smtp.port, smtp_from: 'tollgate@example.test', smtp_tls: 'none' },
      });
      assert.equal(res.statusCode, 200, res.body);
      await t.app.inject({ method: 'POST', url: '/auth/users', headers: bearer(admin), payload: { username: 'forgetful', email: 'forgetful@example.org', password: TEST_PASSWORD, role: 'uploader' } });
    });
    after(async () => {
      await t?.close();
      await smtp?.close();
    });

    const me = (token: string) => t.app.inject({ method: 'GET', url: '/auth/me', headers: bearer(token) });
    const forgot = (email: string) => t.app.inject({ method: 'POST', url: '/auth/forgot-password', payload: { email } });
    const reset = (token: string, password: string) => t.app.inject({ method: 'POST', url: '/auth/reset-password', payload: { token, new_password: password } });

    it('mails a one-time link that sets a new password and ends earlier sessions', async () => {
      const oldJwt = await t.login('forgetful', TEST_PASSWORD);
      const before = smtp.messages.length;
      assert.equal((await forgot('forgetful@example.org')).statusCode, 202);
      const mail = await nextMail(smtp, before + 1);
      assert.deepEqual(mail.to, ['forgetful@example.org']);
      assert.equal(mail.from, 'tollgate@example.test');
      assert.equal(mail.subject, 'Tollgate password reset');
      const token = resetToken(mail);

      const res = await reset(token, 'Brand-new-1');
      assert.equal(res.statusCode, 200, res.body);
      assert.equal((await me(oldJwt)).statusCode, 401);
      assert.equal((await t.app.inject({ method: 'POST', url: '/auth/token', payload: { username: 'forgetful', password: TEST_PASSWORD } })).statusCode, 401);
      const fresh = await t.login('forgetful', 'Brand-new-1');
      assert.equal((await me(fresh)).statusCode, 200);

      const second = await reset(token, 'Another-new-2');
      assert.equal(second.statusCode, 400);
      assert.equal(second.json().code, 'invalid_reset_token');
      await t.login('forgetful', 'Brand-new-1');
    });

    it('lets only one of two concurrent requests use a link', async () => {
      const before = smtp.messages.length;
      await forgot('forgetful@example.org');
      const token = resetToken(await nextMail(smtp, before + 1));
      const versionBefore = (await t.ctx.users.byUsername('forgetful'))!.token_version;
      const answers = await Promise.all([reset(token, 'Race-winner-1'), reset(token, 'Race-winner-2')]);
      assert.deepEqual(answers.map((a) => a.statusCode).sort(), [200, 400], answers.map((a) => a.body).join(' | '));
      const loser = answers.find((a) => a.statusCode === 400)!;
      assert.equal(loser.json().code, 'invalid_reset_token');
      const winner = answers.findIndex((a) => a.statusCode === 200) === 0 ? 'Race-winner-1' : 'Race-winner-2';
      assert.equal((await t.ctx.users.byUsername('forgetful'))!.token_version, versionBefore + 1, 'one password change');
      await t.login('forgetful', winner);
      // Back to the password the later tests expect, through the admin route.
      const admin = await t.tokenFor('admin');
      const back = await t.app.inject({ method: 'POST', url: '/auth/users/forgetful/reset-password', headers: bearer(admin), payload: { new_password: 'Brand-new-1' } });
      assert.equal(back.statusCode, 200);
    });

    it('keeps a link unused when the new password is refused by the policy', async () => {
      const before = smtp.messages.length;
      await forgot('forgetful@example.org');
      const token = resetToken(await nextMail(smtp, before + 1));
      const weak = await reset(token, 'weak');
      assert.equal(weak.statusCode, 422);
      assert.equal(weak.json().code, 'weak_password');
      assert.equal((await reset(token, 'Strong-enough-3')).statusCode, 200);
      await t.login('forgetful', 'Strong-enough-3');
      const admin = await t.tokenFor('admin');
      await t.app.inject({ method: 'POST', url: '/auth/users/forgetful/reset-password', headers: bearer(admin), payload: { new_password: 'Brand-new-1' } });
    });

    it('refuses an expired link with 400', async () => {
      const before = smtp.messages.length;
      await forgot('forgetful@example.org');
      const token = resetToken(await nextMail(smtp, before + 1));
      const past = isoUtc(new Date(Date.now() - 60_000));
      await t.ctx.db.updateTable('password_reset_tokens').set({ expires_at: past }).where('used_at', 'is', null).execute();
      const res = await reset(token, 'Too-late-33');
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().code, 'invalid_reset_token');
      await t.login('forgetful', 'Brand-new-1');
    });

    it('sends nothing for an unknown address, with the same answer', async () => {
      const before = smtp.messages.length;
      const unknown = await forgot('nobody@example.org');
      assert.equal(unknown.statusCode, 202);
      // A known address in the same run proves the mailer works; the unknown one left no message.
      await forgot('forgetful@example.org');
      const mail = await nextMail(smtp, before + 1);
      assert.deepEqual(mail.to, ['forgetful@example.org']);
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(smtp.messages.length, before + 1);
    });
  });
}
