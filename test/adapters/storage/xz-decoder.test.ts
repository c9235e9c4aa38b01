/**
 * Payloads decoded by the system's xz (startXzDecoder) behind the bounded decompressor: the same
 * bytes and file lists as liblzma in-process, the same refusals (corrupt, truncated, legacy .lzma),
 * concatenated streams read whole, a decompression bomb stopped early, and a decoder that failed
 * told apart from a corrupt payload.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildDeb, makeTar, writeArArchive } from '../../../harness/debs.js';
import { buildRpm } from '../../../harness/rpms.js';
import { startXzDecoder, systemXzDecoder, withSystemXz } from '../../../src/adapters/storage/xz.js';
import { decompressToBuffer, type DecompressionLimits } from '../../../src/domain/compression.js';
import { listDebPayload } from '../../../src/domain/deb/reader.js';
import { DEFAULT_PAYLOAD_LIMITS, openRpmPayload } from '../../../src/domain/rpm/payload.js';
import { readRpmPackage } from '../../../src/domain/rpm/reader.js';
import { DecoderFailure, PackageFormatError } from '../../../src/domain/errors.js';
import { makeTempDir } from '../../helpers/tmp.js';

const xz = (input: Buffer, ...args: string[]) => execFileSync('xz', ['-c', ...args], { input, maxBuffer: 256 * 1024 * 1024 });
const limits = (more: Partial<DecompressionLimits> = {}): DecompressionLimits => ({ maxOutputBytes: 1 << 30, maxRatio: 1000, xzDecoder: () => startXzDecoder(), ...more });
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function refusal(input: Buffer, more: Partial<DecompressionLimits> = {}): Promise<string> {
  try {
    await decompressToBuffer('xz', input, limits(more));
  } catch (error) {
    assert.ok(error instanceof PackageFormatError, `a format error, not ${String(error)}`);
    return error.code;
  }
  assert.fail('decoded');
}

describe('payloads decoded by the system xz', () => {
  let work: { dir: string; cleanup: () => Promise<void> };
  // Text and incompressible bytes, over several of the decoder's input slices.
  const text = Buffer.from(Array.from({ length: 40_000 }, (_, i) => `line ${i} of the payload: ${'α'.repeat(i % 7)}\n`).join(''));
  const noise = Buffer.concat(Array.from({ length: 64 }, (_, i) => createHash('sha512').update(String(i)).digest()));

  before(async () => {
    work = await makeTempDir('xz-decoder-');
  });
  after(async () => work.cleanup());

  it('runs on this machine (xz-utils 5.x)', () => {
    assert.ok(systemXzDecoder(), 'xz --version');
  });

  it('gives the bytes liblzma gives, for every integrity check xz writes', async () => {
    for (const check of ['crc32', 'crc64', 'sha256', 'none']) {
      const input = xz(Buffer.concat([text, noise]), `--check=${check}`);
      const external = await decompressToBuffer('xz', input, limits());
      const inProcess = await decompressToBuffer('xz', input, { maxOutputBytes: 1 << 30, maxRatio: 1000, threaded: true });
      assert.equal(sha256(external), sha256(Buffer.concat([text, noise])), check);
      assert.equal(sha256(inProcess), sha256(external), check);
    }
  });

  it('reads concatenated streams and stream padding whole, as `xz -d` does', async () => {
    const input = Buffer.concat([xz(text), Buffer.alloc(8), xz(noise)]);
    assert.equal(sha256(await decompressToBuffer('xz', input, limits())), sha256(Buffer.concat([text, noise])));
  });

  it('refuses corrupt, truncated and legacy .lzma input, as liblzma does', async () => {
    const good = xz(text);
    const corrupt = Buffer.from(good);
    corrupt[Math.floor(corrupt.length / 2)]! ^= 0xff;
    assert.equal(await refusal(corrupt), 'decompression_failed');
    assert.equal(await refusal(good.subarray(0, good.length - 20)), 'decompression_failed');
    assert.equal(await refusal(xz(text, '--format=lzma')), 'decompression_failed');
    assert.equal(await refusal(Buffer.from('not xz at all')), 'decompression_failed');
  });

  it('stops a decompression bomb early', async () => {
    const zeros = xz(Buffer.alloc(256 * 1024 * 1024));
    const started = Date.now();
    assert.equal(await refusal(zeros), 'decompression_bomb');
    assert.equal(await refusal(zeros, { maxOutputBytes: 1024 * 1024, maxRatio: 1_000_000 }), 'decompression_bomb');
    // Decoding the whole 256 MiB would take seconds; the bound stops it within the first MiBs.
    assert.ok(Date.now() - started < 5000, `${Date.now() - started} ms`);
  });

  it('lists a .deb payload as the in-process decoder does, and quarantines the same malformed one', async () => {
    const files: Record<string, string | Buffer> = { 'usr/share/doc/x/README': 'x\n', 'usr/lib/x/blob': noise };
    for (let i = 0; i < 300; i++) files[`usr/share/x/${i}/f+${i}~1`] = `file ${i}\n`;
    const deb = await buildDeb(work.dir, { name: 'xz-listed', version: '1:2.0+ds1-1+b4', files, compression: 'xz' });
    const viaXz = await listDebPayload(deb, { xzDecoder: () => startXzDecoder() });
    assert.deepEqual(viaXz, await listDebPayload(deb));
    assert.equal(viaXz.filter((f) => f.type === 'file').length, 302);
    const control = 'Package: broken\nVersion: 1.0-1\nArchitecture: amd64\nMaintainer: T <t@example.invalid>\nDescription: d\n';
    const payload = await makeTar(work.dir, { './usr/share/broken/f': text }, 'xz');
    payload[Math.floor(payload.length / 2)]! ^= 0xff;
    const broken = await writeArArchive(join(work.dir, 'broken.deb'), [
      { name: 'debian-binary', data: Buffer.from('2.0\n') },
      { name: 'control.tar.gz', data: await makeTar(work.dir, { './control': control }) },
      { name: 'data.tar.xz', data: payload },
    ]);
    await assert.rejects(listDebPayload(broken, { xzDecoder: () => startXzDecoder() }), (error: unknown) => error instanceof PackageFormatError && error.code === 'decompression_failed');
  });

  it('tells a decoder that could not run or was killed from a corrupt payload (DecoderFailure, not a format error)', async () => {
    const input = xz(text);
    const missing = decompressToBuffer('xz', input, limits({ xzDecoder: () => startXzDecoder(join(work.dir, 'no-such-xz')) }));
    await assert.rejects(missing, (error: unknown) => error instanceof DecoderFailure && !(error instanceof PackageFormatError));
    const killed = join(work.dir, 'killed-xz');
    writeFileSync(killed, '#!/bin/sh\nhead -c 100 >/dev/null\nkill -9 $$\n');
    chmodSync(killed, 0o755);
    await assert.rejects(decompressToBuffer('xz', input, limits({ xzDecoder: () => startXzDecoder(killed) })), (error: unknown) => error instanceof DecoderFailure && /killed/.test(error.message));
  });

  it('gives an xz RPM payload (the antivirus step and SBOMs read it) as liblzma does', async () => {
    const rpm = await buildRpm(work.dir, { name: 'xz-payload', version: '2.4.1', release: '1.el9', payloadCompression: 'xz', files: { '/usr/share/xz-payload/text': text.toString(), '/usr/share/xz-payload/noise': noise.toString('base64') } });
    const pkg = await readRpmPackage(rpm);
    assert.equal(pkg.payloadCompressor, 'xz');
    const read = async (limits: typeof DEFAULT_PAYLOAD_LIMITS) => {
      const chunks: Buffer[] = [];
      for await (const chunk of openRpmPayload(rpm, pkg, limits)) chunks.push(chunk as Buffer);
      return sha256(Buffer.concat(chunks));
    };
    const limits = withSystemXz(DEFAULT_PAYLOAD_LIMITS);
    assert.ok(limits.xzDecoder);
    assert.equal(await read(limits), await read(DEFAULT_PAYLOAD_LIMITS));
  });

  it('lists real payloads from the APT cache as the in-process decoder does (skipped when empty)', async (t) => {
    const cache = '/var/cache/apt/archives';
    let debs: string[] = [];
    try {
      debs = readdirSync(cache).filter((f) => f.endsWith('.deb')).map((f) => join(cache, f));
    } catch {
      // no cache
    }
    if (debs.length === 0) return t.skip('no .deb in the APT cache');
    // A few of the smaller ones: the comparison decodes each twice.
    const sample = debs.sort((a, b) => statSync(a).size - statSync(b).size).filter((_, i) => i % Math.max(1, Math.floor(debs.length / 8)) === 0).slice(0, 8);
    for (const deb of sample) assert.deepEqual(await listDebPayload(deb, { xzDecoder: () => startXzDecoder() }), await listDebPayload(deb), deb);
  });
});
