import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { startXz, type XzOptions } from '../../../src/adapters/storage/xz.js';
import { DomainError } from '../../../src/domain/errors.js';

const sample = Buffer.from('Package: hello\nVersion: 1.0\nArchitecture: amd64\n\n'.repeat(20000));

async function compress(data: Buffer, options?: XzOptions): Promise<Buffer> {
  const xz = startXz(options);
  const chunks: Buffer[] = [];
  xz.stdout.on('data', (c: Buffer) => chunks.push(c));
  xz.stdin.end(data);
  await xz.done;
  return Buffer.concat(chunks);
}

const isXzFailed = (e: unknown) => e instanceof DomainError && e.code === 'xz_failed';

describe('startXz', () => {
  it('produces a real, compressed .xz that xz decompresses', async () => {
    const out = await compress(sample);
    assert.ok(out.length < sample.length / 20, `${out.length} bytes`);
    assert.ok(execFileSync('xz', ['-dc'], { input: out, maxBuffer: 64 << 20 }).equals(sample));
  });

  it('reports a failing or missing xz and refuses bad presets', async () => {
    await assert.rejects(compress(sample, { binary: 'false' }), isXzFailed);
    await assert.rejects(compress(sample, { binary: '/nonexistent/xz' }), isXzFailed);
    assert.throws(() => startXz({ preset: 12 }), (e: unknown) => e instanceof DomainError && e.code === 'bad_xz_preset');
  });
});
