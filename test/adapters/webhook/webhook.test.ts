import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { sendWebhook, verifyWebhookSignature, WEBHOOK_EVENTS } from '../../../src/adapters/webhook/webhook.js';
import { startWebhookReceiver } from '../../helpers/webhook-receiver.js';

const SECRET = 'hook-secret-Ω';

/** HMAC computed by openssl, independent of the code under test. */
function opensslHmac(body: Buffer, secret: string): string {
  const result = spawnSync('openssl', ['dgst', '-sha256', '-hmac', secret, '-r'], { input: body });
  assert.equal(result.status, 0, String(result.stderr));
  return String(result.stdout).split(' ')[0] ?? '';
}

describe('sendWebhook', () => {
  it('POSTs a signed {event, timestamp, data} body with the Tollgate headers', async (t) => {
    const receiver = await startWebhookReceiver();
    t.after(() => receiver.close());
    const now = new Date('2026-01-02T03:04:05.000Z');
    const result = await sendWebhook({
      url: receiver.url,
      secret: SECRET,
      event: 'package.pending_review',
      data: { name: 'hello', version: '1.0-1', note: 'ünïcødé' },
      now: () => now,
    });
    assert.equal(result.ok, true, result.error);
    assert.equal(result.status, 204);
    assert.equal(result.attempts, 1);
    assert.equal(receiver.requests.length, 1);
    const got = receiver.requests[0]!;
    assert.equal(got.method, 'POST');
    assert.equal(got.path, '/hook');
    assert.equal(got.headers['content-type'], 'application/json');
    assert.equal(got.headers['user-agent'], 'Tollgate');
    assert.equal(got.headers['x-tollgate-event'], 'package.pending_review');
    assert.equal(got.headers['x-tollgate-delivery'], result.deliveryId);
    assert.deepEqual(receiver.json(0), {
      event: 'package.pending_review',
      timestamp: '2026-01-02T03:04:05.000Z',
      data: { name: 'hello', version: '1.0-1', note: 'ünïcødé' },
    });
    const signature = got.headers['x-tollgate-signature'];
    assert.equal(signature, `sha256=${opensslHmac(got.body, SECRET)}`);
    assert.equal(verifyWebhookSignature(got.body, signature as string, SECRET), true);
  });

  it('leaves the signature out when no secret is configured', async (t) => {
    const receiver = await startWebhookReceiver();
    t.after(() => receiver.close());
    const result = await sendWebhook({ url: receiver.url, secret: null, event: 'test', data: {} });
    assert.equal(result.ok, true);
    assert.equal(receiver.requests[0]?.headers['x-tollgate-signature'], undefined);
  });

  it('retries 5xx with growing back-off and resends the identical body', async (t) => {
    const receiver = await startWebhookReceiver({ failFirst: 2 });
    t.after(() => receiver.close());
    const result = await sendWebhook({ url: receiver.url, secret: SECRET, event: 'sla.warning', data: { days: 5 }, backoffMs: 100 });
    assert.equal(result.ok, true, result.error);
    assert.equal(result.attempts, 3);
    assert.deepEqual(receiver.requests.map((r) => r.answer), [500, 500, 204]);
    const bodies = new Set(receiver.requests.map((r) => r.body.toString('hex')));
    assert.equal(bodies.size, 1, 'every attempt carries the same signed body');
    assert.equal(new Set(receiver.requests.map((r) => r.headers['x-tollgate-delivery'])).size, 1);
  });

  it('gives up after the configured tries and reports the last status', async (t) => {
    const receiver = await startWebhookReceiver({ failFirst: 10, failStatus: 503 });
    t.after(() => receiver.close());
    const started = Date.now();
    const result = await sendWebhook({ url: receiver.url, secret: SECRET, event: 'risk.expired', data: {}, backoffMs: 100 });
    const elapsed = Date.now() - started;
    assert.equal(result.ok, false);
    assert.equal(result.status, 503);
    assert.equal(result.attempts, 3);
    assert.equal(receiver.requests.length, 3);
    assert.match(result.error ?? '', /503/);
    // 100 ms then 200 ms of back-off: exponential, not constant.
    assert.ok(elapsed >= 290, `back-off too short: ${elapsed} ms`);
  });

  it('does not retry a 4xx answer', async (t) => {
    const receiver = await startWebhookReceiver({ failFirst: 10, failStatus: 404 });
    t.after(() => receiver.close());
    const result = await sendWebhook({ url: receiver.url, secret: SECRET, event: 'test', data: {}, backoffMs: 10 });
    assert.deepEqual([result.ok, result.status, result.attempts], [false, 404, 1]);
  });

  it('times out a hanging receiver and succeeds on the next try', async (t) => {
    const receiver = await startWebhookReceiver({ hangFirst: 1 });
    t.after(() => receiver.close());
    const started = Date.now();
    const result = await sendWebhook({ url: receiver.url, secret: SECRET, event: 'package.decision', data: {}, timeoutMs: 300, backoffMs: 10 });
    assert.equal(result.ok, true, result.error);
    assert.equal(result.attempts, 2);
    assert.deepEqual(receiver.requests.map((r) => r.answer), ['hung', 204]);
    assert.ok(Date.now() - started < 3000);
  });

  it('reports a timeout when the receiver never answers', async (t) => {
    const receiver = await startWebhookReceiver({ hangFirst: 10 });
    t.after(() => receiver.close());
    const result = await sendWebhook({ url: receiver.url, secret: SECRET, event: 'test', data: {}, timeoutMs: 200, tries: 2, backoffMs: 10 });
    assert.equal(result.ok, false);
    assert.equal(result.attempts, 2);
    assert.match(result.error ?? '', /no answer within 200 ms/);
  });

  it('never throws on a refused connection or a bad URL', async () => {
    const receiver = await startWebhookReceiver();
    const url = receiver.url;
    await receiver.close();
    const refused = await sendWebhook({ url, secret: SECRET, event: 'test', data: {}, backoffMs: 10 });
    assert.equal(refused.ok, false);
    assert.equal(refused.attempts, 3);
    assert.match(refused.error ?? '', /ECONNREFUSED/);
    const bad = await sendWebhook({ url: 'not a url', secret: SECRET, event: 'test', data: {} });
    assert.deepEqual([bad.ok, bad.attempts], [false, 0]);
    const ftp = await sendWebhook({ url: 'ftp://127.0.0.1/x', secret: SECRET, event: 'test', data: {} });
    assert.deepEqual([ftp.ok, ftp.attempts], [false, 0]);
  });

  it('lists the five events', () => {
    assert.deepEqual([...WEBHOOK_EVENTS], ['package.pending_review', 'package.decision', 'sla.warning', 'risk.expired', 'test']);
  });
});

describe('verifyWebhookSignature', () => {
  const body = Buffer.from('{"event":"test","timestamp":"2026-01-01T00:00:00.000Z","data":{}}');
  const good = `sha256=${opensslHmac(body, SECRET)}`;

  it('accepts the right signature', () => {
    assert.equal(verifyWebhookSignature(body, good, SECRET), true);
    assert.equal(verifyWebhookSignature(body.toString('utf8'), good, SECRET), true);
  });

  it('refuses a changed body, another secret, a malformed or missing header', () => {
    assert.equal(verifyWebhookSignature(Buffer.concat([body, Buffer.from(' ')]), good, SECRET), false);
    assert.equal(verifyWebhookSignature(body, good, 'other'), false);
    assert.equal(verifyWebhookSignature(body, good.replace('sha256=', 'sha1='), SECRET), false);
    assert.equal(verifyWebhookSignature(body, good.slice(0, -2), SECRET), false);
    assert.equal(verifyWebhookSignature(body, `${good.slice(0, -1)}${good.endsWith('0') ? '1' : '0'}`, SECRET), false);
    assert.equal(verifyWebhookSignature(body, undefined, SECRET), false);
    assert.equal(verifyWebhookSignature(body, '', SECRET), false);
  });
});
