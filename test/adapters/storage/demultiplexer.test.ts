import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Demultiplexer } from '../../../src/adapters/storage/demultiplexer.js';

async function* numbered(batches: number, size: number, read: { count: number }) {
  for (let b = 0; b < batches; b++) {
    read.count = b + 1;
    yield Array.from({ length: size }, (_, i) => b * size + i);
  }
}

const drain = async (it: AsyncIterable<number[]>, each?: () => Promise<void>) => {
  const out: number[] = [];
  for await (const batch of it) {
    out.push(...batch);
    if (each) await each();
  }
  return out;
};

describe('Demultiplexer', () => {
  it('reads the source once and hands each item to every stream it is routed to, in order', async () => {
    const read = { count: 0 };
    const split = new Demultiplexer(numbered(5, 4, read), ['even', 'odd', 'all'], (n: number) => [n % 2 === 0 ? 'even' : 'odd', 'all'], (n) => n);
    const [even, odd, all] = await Promise.all([drain(split.stream('even')), drain(split.stream('odd')), drain(split.stream('all'))]);
    assert.deepEqual(all, Array.from({ length: 20 }, (_, i) => i));
    assert.deepEqual(even, all.filter((n) => n % 2 === 0));
    assert.deepEqual(odd, all.filter((n) => n % 2 === 1));
    assert.equal(read.count, 5);
  });

  it('lets no stream run more than one batch ahead of the slowest', async () => {
    const read = { count: 0 };
    const split = new Demultiplexer(numbered(50, 10, read), ['fast', 'slow'], () => ['fast', 'slow'], (n: number) => n);
    let slowBatches = 0;
    let maxLead = 0;
    const fast = drain(split.stream('fast'), async () => {
      maxLead = Math.max(maxLead, read.count - slowBatches);
    });
    const slow = drain(split.stream('slow'), async () => {
      slowBatches++;
      await new Promise((r) => setTimeout(r, 1));
    });
    await Promise.all([fast, slow]);
    assert.ok(maxLead <= 2, `the source was read ${maxLead} batches ahead of the slow stream`);
  });

  it('does not hold the others back when one reader fails or never starts', async () => {
    const read = { count: 0 };
    const split = new Demultiplexer(numbered(10, 2, read), ['a', 'b', 'c'], () => ['a', 'b', 'c'], (n: number) => n);
    const failing = (async () => {
      for await (const _ of split.stream('a')) throw new Error('disk full');
    })();
    split.close('c'); // its writer failed before reading
    const [a, b] = await Promise.allSettled([failing, drain(split.stream('b'))]);
    assert.equal(a.status, 'rejected');
    assert.equal(b.status === 'fulfilled' && b.value.length, 20);
  });
});
