import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { verifyWebhookSignature } from '../../src/adapters/webhook/index.js';
import { Notifier } from '../../src/services/notifications.js';
import { backends, startTestApp, type TestApp } from '../helpers/app.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

/** Notifications against a real HTTP receiver and a real SMTP server (DECISIONS §11). */

const SECRET = 'whsec-for-the-test';
const SMTP_PASSWORD = 'smtp-pass-never-logged';
const URL_TOKEN = 'path-token-never-logged';
const MESSAGE = { subject: 'Package waiting for review', text: 'hello 1.0 is pending review' };

async function failures(t: TestApp, channel: 'webhook' | 'email'): Promise<number> {
  const res = await t.app.inject({ method: 'GET', url: '/metrics' });
  const match = new RegExp(`^tollgate_notification_failures_total\\{channel="${channel}"\\} (\\d+)`, 'm').exec(res.body);
  return match ? Number(match[1]) : 0;
}

/** A logger whose lines are kept, to check what a failure writes. */
function capturingLogger(): { log: pino.Logger; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return { log: pino({ level: 'debug' }, stream), lines };
}

for (const backend of backends()) {
  describe(`notifications (${backend}, enterprise)`, () => {
    let t: TestApp;
    let smtp: TestSmtpServer;
    let receivers: WebhookReceiver[] = [];
    const receiver = async (options: Parameters<typeof startWebhookReceiver>[0] = {}) => {
      const r = await startWebhookReceiver(options);
      receivers.push(r);
      return r;
    };
    const configure = (patch: Record<string, unknown>) => t.ctx.settings.update(patch, 'test');

    before(async () => {
      smtp = await startSmtpServer();
      t = await startTestApp({ backend, env: { EDITION: 'enterprise' } });
      await configure({
        smtp_host: smtp.host, smtp_port: smtp.port, smtp_from: 'tollgate@example.test', smtp_tls: 'none',
        notify_emails: ['ops@example.org', 'sec@example.org'],
        webhook_enabled: true,
      });
    });
    after(async () => {
      await t?.close();
      await smtp?.close();
      await Promise.all(receivers.map((r) => r.close()));
      receivers = [];
    });

    it('sends a signed webhook and an e-mail in the background', async () => {
      const hook = await receiver();
      await configure({ webhook_url: hook.url, webhook_secret: SECRET });
      const mails = smtp.messages.length;
      const returned = t.ctx.notifier.notify('package.pending_review', { package: 'hello', version: '1.0' }, MESSAGE);
      assert.equal(returned, undefined);
      // notify() only queues: nothing can have been delivered yet.
      assert.equal(hook.requests.length, 0);
      await t.ctx.notifier.idle();

      assert.equal(hook.requests.length, 1);
      const request = hook.requests[0]!;
      assert.equal(request.method, 'POST');
      assert.equal(request.headers['x-tollgate-event'], 'package.pending_review');
      assert.ok(verifyWebhookSignature(request.body, request.headers['x-tollgate-signature'] as string, SECRET));
      assert.ok(!verifyWebhookSignature(request.body, request.headers['x-tollgate-signature'] as string, 'another-secret'));
      const body = hook.json(0) as { event: string; timestamp: string; data: Record<string, unknown> };
      assert.equal(body.event, 'package.pending_review');
      assert.deepEqual(body.data, { package: 'hello', version: '1.0' });
      assert.ok(!Number.isNaN(Date.parse(body.timestamp)));

      assert.equal(smtp.messages.length, mails + 1);
      const mail = smtp.messages.at(-1)!;
      assert.deepEqual(mail.to, ['ops@example.org', 'sec@example.org']);
      assert.equal(mail.subject, MESSAGE.subject);
      assert.match(mail.raw, /hello 1\.0 is pending review/);
    });

    it('retries after a 500 and counts no failure when a retry succeeds', async () => {
      const hook = await receiver({ failFirst: 1, failStatus: 500 });
      await configure({ webhook_url: hook.url, webhook_secret: SECRET });
      const before = await failures(t, 'webhook');
      t.ctx.notifier.notify('package.decision', { package: 'hello', decision: 'approved' }, MESSAGE);
      await t.ctx.notifier.idle();
      assert.deepEqual(hook.requests.map((r) => r.answer), [500, 204]);
      assert.equal(hook.requests[0]!.headers['x-tollgate-delivery'], hook.requests[1]!.headers['x-tollgate-delivery']);
      assert.equal(await failures(t, 'webhook'), before);
    });

    it('counts and logs failed deliveries on both channels without secrets, and never throws', async () => {
      const hook = await receiver({ failFirst: 100, failStatus: 503 });
      const authSmtp = await startSmtpServer({ auth: { user: 'mailer', pass: 'the-right-one' } });
      try {
        await configure({ webhook_url: `${hook.url}/${URL_TOKEN}`, webhook_secret: SECRET, smtp_port: authSmtp.port, smtp_user: 'mailer', smtp_password: SMTP_PASSWORD });
        const { log, lines } = capturingLogger();
        // Same settings, metrics and mailer as the service; only a short back-off to keep the test quick.
        const notifier = new Notifier({ settings: t.ctx.settings, mail: t.ctx.mail, metrics: t.ctx.metrics, log, edition: 'enterprise', webhook: { backoffMs: 10 } });
        const webhookBefore = await failures(t, 'webhook');
        const emailBefore = await failures(t, 'email');
        notifier.notify('sla.warning', { package: 'hello' }, MESSAGE);
        await notifier.idle();
        assert.equal(hook.requests.length, 3, 'three tries in total');
        assert.equal(authSmtp.messages.length, 0);
        assert.equal(await failures(t, 'webhook'), webhookBefore + 1);
        assert.equal(await failures(t, 'email'), emailBefore + 1);
        const logged = lines.join('');
        assert.match(logged, /webhook notification failed/);
        assert.match(logged, /e-mail notification failed/);
        for (const secret of [SECRET, SMTP_PASSWORD, URL_TOKEN]) assert.ok(!logged.includes(secret), `log mentions ${secret}`);
      } finally {
        await configure({ smtp_port: smtp.port, smtp_user: null, smtp_password: null });
        await authSmtp.close();
      }
    });

    it('counts a receiver that is down as a webhook failure', async () => {
      const hook = await receiver();
      const url = hook.url;
      await hook.close();
      await configure({ webhook_url: url, notify_emails: [] });
      try {
        const notifier = new Notifier({ settings: t.ctx.settings, mail: t.ctx.mail, metrics: t.ctx.metrics, log: t.ctx.log, edition: 'enterprise', webhook: { backoffMs: 10 } });
        const before = await failures(t, 'webhook');
        notifier.notify('risk.expired', { package: 'hello' }, MESSAGE);
        await notifier.idle();
        assert.equal(await failures(t, 'webhook'), before + 1);
      } finally {
        await configure({ notify_emails: ['ops@example.org', 'sec@example.org'] });
      }
    });

    it('sends no webhook while webhook_enabled is false, and no e-mail without recipients', async () => {
      const hook = await receiver();
      await configure({ webhook_url: hook.url, webhook_enabled: false, notify_emails: [] });
      try {
        const mails = smtp.messages.length;
        t.ctx.notifier.notify('package.pending_review', { package: 'hello' }, MESSAGE);
        await t.ctx.notifier.idle();
        assert.equal(hook.requests.length, 0);
        assert.equal(smtp.messages.length, mails);
      } finally {
        await configure({ webhook_enabled: true, notify_emails: ['ops@example.org', 'sec@example.org'] });
      }
    });
  });
}

describe('notifications (community edition)', () => {
  let t: TestApp;
  let smtp: TestSmtpServer;
  let hook: WebhookReceiver;
  before(async () => {
    smtp = await startSmtpServer();
    hook = await startWebhookReceiver();
    t = await startTestApp({ env: { EDITION: 'community' } });
    await t.ctx.settings.update({
      smtp_host: smtp.host, smtp_port: smtp.port, smtp_from: 'tollgate@example.test', smtp_tls: 'none',
      notify_emails: ['ops@example.org'], webhook_enabled: true, webhook_url: hook.url, webhook_secret: SECRET,
    }, 'test');
  });
  after(async () => {
    await t?.close();
    await smtp?.close();
    await hook?.close();
  });

  it('sends nothing: notifications are an Enterprise feature', async () => {
    t.ctx.notifier.notify('package.pending_review', { package: 'hello' }, MESSAGE);
    await t.ctx.notifier.idle();
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(hook.requests.length, 0);
    assert.equal(smtp.messages.length, 0);
  });

  it('still sends password reset e-mails (not a notification)', async () => {
    const sent = await t.ctx.mail.send(['someone@example.org'], 'Tollgate password reset', 'link');
    assert.equal(sent, 'sent');
    assert.equal(smtp.messages.length, 1);
  });
});
