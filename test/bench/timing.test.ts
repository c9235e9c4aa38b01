import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { medianServerTiming, timeShares } from '../../bench/lib/timing.js';

describe('bench timing helpers', () => {
  it('sums each Server-Timing part over the uploads, with what the service did not time, weighing long uploads as throughput does', () => {
    const uploads = [
      { clientMs: 100, serverTiming: 'receive;dur=10.0, signature;dur=80.0, total;dur=90.0' },
      { clientMs: 900, serverTiming: 'receive;dur=700.0, signature;dur=100.0, finish;dur=0.0, total;dur=800.0' },
    ];
    assert.equal(timeShares(uploads), '1.0 s: receive 0.7 s 71 %, signature 0.2 s 18 %, outside 0.1 s 11 %');
    // The medians tell another story: each upload counts once.
    assert.equal(medianServerTiming(uploads.map((u) => u.serverTiming)), 'receive 355.0, signature 90.0, total 445.0, finish 0.0 ms');
  });

  it('says when nothing was timed, and never reports a negative rest', () => {
    assert.equal(timeShares([]), 'not measured');
    assert.equal(timeShares([{ clientMs: 10, serverTiming: 'receive;dur=12.0, total;dur=12.0' }]), '0.0 s: receive 0.0 s 100 %');
  });
});
