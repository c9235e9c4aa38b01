import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { LocalWindowCounters, openWindowCounters } from '../../../src/adapters/counters/window-counters.js';

describe('window counters', () => {
  it('count hits per key in a window that starts with its first hit, then start again', async () => {
    const counters = await openWindowCounters(null, 'unused:');
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
