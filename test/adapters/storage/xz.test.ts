import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { compressXz } from '../../../src/adapters/storage/xz.js';
import { DomainError } from '../../../src/domain/errors.js';

const sample = Buffer.from('Package: hello\nVersion: 1.0\nArchitecture: amd64\n\n'.repeat(20000));

describe('compressXz', () => {
  it('produces a real, compressed .xz that xz decompresses', async () => {
    const out = await compressXz(sample);
    assert.ok(out.length < sample.length / 20, `${out.length} bytes`);
    assert.ok(execFileSync('xz', ['-dc'], { input: out, maxBuffer: 64 << 20 }).equals(sample));
  });

  it('falls back to a valid (stored) .xz when the xz binary is missing', async () => {
    const out = await compressXz(sample, { binary: '/nonexistent/xz' });
    assert.ok(execFileSync('xz', ['-dc'], { input: out, maxBuffer: 64 << 20 }).equals(sample));
  });

  it('reports a failing xz and refuses bad presets', async () => {
    await assert.rejects(compressXz(sample, { binary: 'false' }), (e: unknown) => e instanceof DomainError && e.code === 'xz_failed');
    await assert.rejects(compressXz(sample, { preset: 12 }), (e: unknown) => e instanceof DomainError && e.code === 'bad_xz_preset');
  });
});
