import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { LocalWindowCounters, openWindowCounters } from '../../../src/adapters/counters/window-counters.js';
import { redisAnswers } from '../../helpers/redis.js';

describe('window counters', () => {
  it('count hits per key in a window that starts with its first hit, then start again', async () => {
    const counters = await openWindowCounters(null, 'unused:', { unavailable: () => assert.fail(), restored: () => assert.fail() });
    assert.ok(counters instanceof LocalWindowCounters);
    assert.equal((await counters.increment('a', 40)).current, 1);
    const second = await counters.increment('a', 40);
    assert.equal(second.current, 2);
    assert.ok(second.ttlMs > 0 && second.ttlMs <= 40);
    assert.equal((await counters.increment('b', 40)).current, 1);
    await sleep(50);
    assert.equal((await counters.increment('a', 40)).current, 1);
  });

  it('hold at most 10,000 keys, dropping the oldest', async () => {
    const counters = new LocalWindowCounters();
    for (let i = 0; i < 10_001; i += 1) await counters.increment(`ip:${i}`, 60_000);
    await counters.increment('ip:1', 60_000);
    assert.equal((await counters.increment('ip:1', 60_000)).current, 3, 'a recent key is kept');
    assert.equal((await counters.increment('ip:0', 60_000)).current, 1, 'the oldest key was dropped');
  });
});

/**
 * A proxy in front of the suite's Redis, to take it away (`cut`: connections dropped, port
 * closed), bring it back on the same port (`restore`), or keep the connections and forward
 * nothing (`freeze`).
 */
async function redisProxy() {
  let frozen = false;
  const sockets = new Set<Socket>();
  const proxy = createServer((client) => {
    const upstream = connect(6379, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.on('data', (chunk) => frozen || upstream.write(chunk));
    upstream.on('data', (chunk) => frozen || client.write(chunk));
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const port = (proxy.address() as AddressInfo).port;
  const cut = () => {
    proxy.close();
    for (const s of sockets) s.destroy();
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    cut,
    restore: () => new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve)),
    freeze: () => void (frozen = true),
    close: cut,
  };
}

describe('window counters in Redis', { skip: (await redisAnswers()) ? false : 'Redis does not answer on 127.0.0.1:6379' }, () => {
  it('are shared by every process that opens them, and count locally while Redis does not answer, reporting the outage and its end once', async () => {
    const proxy = await redisProxy();
    const events: string[] = [];
    const report = { unavailable: (e: Error) => events.push(`unavailable: ${e.message}`), restored: () => events.push('restored') };
    const prefix = `test-rl-${randomUUID()}:`;
    const a = await openWindowCounters(proxy.url, prefix, report);
    const b = await openWindowCounters(proxy.url, prefix, report);
    try {
      assert.ok(!(a instanceof LocalWindowCounters));
      assert.equal((await a.increment('k', 60_000)).current, 1);
      assert.equal((await b.increment('k', 60_000)).current, 2, 'one count for both');
      // Not deepEqual(events, []): its assertion signature would narrow `events` to never[] below.
      assert.equal(events.length, 0, events.join());

      proxy.cut();
      // Counted here alone, without an error for the caller; the outage reported once.
      await waitFor(async () => (await a.increment('down', 60_000)).current >= 3);
      assert.equal(events.length, 1);
      assert.match(events[0]!, /^unavailable: /);

      await proxy.restore();
      await waitFor(async () => {
        await a.increment('probe', 60_000);
        return events.includes('restored');
      }, 10_000);
      assert.deepEqual(events.slice(1), ['restored']);
      assert.equal((await a.increment('k', 60_000)).current, 3, 'the shared count again');
    } finally {
      await a.close();
      await b.close();
      proxy.close();
    }
  });

  it('count a hit locally within the command timeout instead of holding it, when Redis stops answering', async () => {
    const proxy = await redisProxy();
    const events: string[] = [];
    const counters = await openWindowCounters(proxy.url, `test-rl-${randomUUID()}:`, {
      unavailable: (e) => events.push(e.message),
      restored: () => events.push('restored'),
    });
    try {
      assert.equal((await counters.increment('k', 60_000)).current, 1);
      proxy.freeze();
      const started = performance.now();
      assert.equal((await counters.increment('k', 60_000)).current, 1, 'counted locally, from zero');
      const waited = performance.now() - started;
      assert.ok(waited >= 400 && waited < 2_000, `held ${waited.toFixed(0)} ms`);
      assert.equal(events.length, 1);
      assert.match(events[0]!, /timed out/i);
    } finally {
      await counters.close();
      proxy.close();
    }
  });
});

async function waitFor(condition: () => Promise<boolean>, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await sleep(50);
  }
}
