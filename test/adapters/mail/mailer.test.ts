import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSmtpMailer, type SmtpSettings } from '../../../src/adapters/mail/mailer.js';
import { DomainError } from '../../../src/domain/errors.js';
import { startSmtpServer, type TestSmtpServer } from '../../helpers/smtp.js';
import { startSilentServer } from '../../../harness/net.js';

function settingsFor(server: { host: string; port: number }, extra: Partial<SmtpSettings> = {}): SmtpSettings {
  return { smtp_host: server.host, smtp_port: server.port, smtp_from: 'tollgate@example.org', smtp_tls: 'none', ...extra };
}

function isCode(code: string): (e: unknown) => boolean {
  return (e: unknown) => {
    assert.ok(e instanceof DomainError, `expected DomainError, got ${String(e)}`);
    assert.equal(e.code, code, e.message);
    return true;
  };
}

async function withServer(t: { after(fn: () => Promise<void>): void }, options: Parameters<typeof startSmtpServer>[0] = {}): Promise<TestSmtpServer> {
  const server = await startSmtpServer(options);
  t.after(() => server.close());
  return server;
}

describe('SMTP mailer against a real SMTP server', () => {
  it('sends without authentication (smtp_tls none)', async (t) => {
    const server = await withServer(t);
    const mailer = createSmtpMailer(settingsFor(server));
    await mailer.send({
      to: ['alice@example.org', 'bob@example.org'],
      subject: 'Package hello 1.0 needs review – ünïcødé',
      text: 'Open the review queue.',
      html: '<p>Open the <b>review queue</b>.</p>',
    });
    assert.equal(server.messages.length, 1);
    const mail = server.messages[0]!;
    assert.equal(mail.from, 'tollgate@example.org');
    assert.deepEqual(mail.to, ['alice@example.org', 'bob@example.org']);
    assert.equal(mail.subject, 'Package hello 1.0 needs review – ünïcødé');
    assert.equal(mail.user, null);
    assert.equal(mail.secure, false);
    assert.match(mail.raw, /Open the review queue\./);
    assert.match(mail.raw, /multipart\/alternative/);
  });

  it('logs in with AUTH when a user is set', async (t) => {
    const server = await withServer(t, { auth: { user: 'mailer', pass: 's3cret' } });
    const mailer = createSmtpMailer(settingsFor(server, { smtp_user: 'mailer', smtp_password: 's3cret' }));
    await mailer.verify();
    await mailer.send({ to: ['ops@example.org'], subject: 'hello', text: 'body' });
    assert.equal(server.messages.length, 1);
    assert.equal(server.messages[0]?.user, 'mailer');
  });

  it('reports a wrong password as smtp_auth_failed and sends nothing', async (t) => {
    const server = await withServer(t, { auth: { user: 'mailer', pass: 's3cret' } });
    const mailer = createSmtpMailer(settingsFor(server, { smtp_user: 'mailer', smtp_password: 'wrong' }));
    await assert.rejects(mailer.send({ to: ['ops@example.org'], subject: 'x', text: 'y' }), isCode('smtp_auth_failed'));
    await assert.rejects(mailer.verify(), isCode('smtp_auth_failed'));
    assert.equal(server.messages.length, 0);
  });

  it('reports a server that is down as smtp_unavailable, quickly', async () => {
    const server = await startSmtpServer();
    const port = server.port;
    await server.close();
    const mailer = createSmtpMailer(settingsFor({ host: '127.0.0.1', port }));
    const started = Date.now();
    await assert.rejects(mailer.send({ to: ['ops@example.org'], subject: 'x', text: 'y' }), isCode('smtp_unavailable'));
    await assert.rejects(mailer.verify(), isCode('smtp_unavailable'));
    assert.ok(Date.now() - started < 3000);
  });

  it('gives up on a server that accepts the connection but never greets', async (t) => {
    const port = await startSilentServer(t);
    const mailer = createSmtpMailer(settingsFor({ host: '127.0.0.1', port: port }), { timeoutMs: 400 });
    const started = Date.now();
    await assert.rejects(mailer.send({ to: ['ops@example.org'], subject: 'x', text: 'y' }), isCode('smtp_unavailable'));
    assert.ok(Date.now() - started < 3000, `took ${Date.now() - started} ms`);
  });

  it('upgrades with STARTTLS and checks the certificate', async (t) => {
    const server = await withServer(t, { tls: 'starttls', auth: { user: 'mailer', pass: 's3cret' } });
    const settings = settingsFor(server, { smtp_tls: 'starttls', smtp_user: 'mailer', smtp_password: 's3cret' });
    await createSmtpMailer(settings, { ca: server.caPem }).send({ to: ['ops@example.org'], subject: 'tls', text: 'y' });
    assert.equal(server.messages[0]?.secure, true);
    // Not trusted without the CA: refused, not sent anyway.
    await assert.rejects(
      createSmtpMailer(settings).send({ to: ['ops@example.org'], subject: 'x', text: 'y' }),
      (e: unknown) => isCode('smtp_unavailable')(e) && /certificate/.test((e as Error).message),
    );
    assert.equal(server.messages.length, 1);
  });

  it('refuses to continue in clear text when STARTTLS is required but not offered', async (t) => {
    const server = await withServer(t, { auth: { user: 'mailer', pass: 's3cret' } });
    const mailer = createSmtpMailer(settingsFor(server, { smtp_tls: 'starttls', smtp_user: 'mailer', smtp_password: 's3cret' }));
    await assert.rejects(mailer.send({ to: ['ops@example.org'], subject: 'x', text: 'y' }), (e: unknown) => isCode('smtp_unavailable')(e) && /STARTTLS/.test((e as Error).message));
    assert.equal(server.messages.length, 0);
  });

  it('speaks TLS from the first byte in tls mode', async (t) => {
    const server = await withServer(t, { tls: 'tls' });
    await createSmtpMailer(settingsFor(server, { smtp_tls: 'tls' }), { ca: server.caPem }).send({ to: ['ops@example.org'], subject: 'implicit', text: 'y' });
    assert.equal(server.messages[0]?.secure, true);
    assert.equal(server.messages[0]?.subject, 'implicit');
  });

  it('cannot be used to inject headers or odd recipients', async (t) => {
    const server = await withServer(t);
    const mailer = createSmtpMailer(settingsFor(server));
    await mailer.send({ to: ['ops@example.org'], subject: 'Hi\r\nBcc: evil@example.com', text: 'y' });
    const mail = server.messages[0]!;
    assert.deepEqual(mail.to, ['ops@example.org']);
    assert.doesNotMatch(mail.raw, /^Bcc:/im);
    await assert.rejects(mailer.send({ to: ['a@example.org, evil@example.com'], subject: 'x', text: 'y' }), isCode('smtp_bad_recipient'));
    await assert.rejects(mailer.send({ to: ['a@example.org\r\nX: y'], subject: 'x', text: 'y' }), isCode('smtp_bad_recipient'));
    await assert.rejects(mailer.send({ to: [' '], subject: 'x', text: 'y' }), isCode('smtp_no_recipients'));
    assert.equal(server.messages.length, 1);
  });

  it('refuses incomplete settings', () => {
    assert.throws(() => createSmtpMailer({ smtp_host: '', smtp_from: 'a@example.org' }), isCode('smtp_not_configured'));
    assert.throws(() => createSmtpMailer({ smtp_host: 'mail.example.org', smtp_from: null }), isCode('smtp_not_configured'));
  });
});
