import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import {
  createBoundedDecompressor,
  decompressToBuffer,
  detectCompression,
  type Compression,
  type DecompressionLimits,
} from '../../src/domain/compression.js';
import { PackageFormatError } from '../../src/domain/errors.js';
import { makeTempDir } from '../helpers/tmp.js';

const exec = promisify(execFile);
const CLI: Record<Exclude<Compression, 'none'>, { command: string; args: string[]; ext: string }> = {
  gzip: { command: 'gzip', args: ['-c', '-6'], ext: 'gz' },
  xz: { command: 'xz', args: ['-c', '-6', '-T1'], ext: 'xz' },
  zstd: { command: 'zstd', args: ['-c', '-q', '-3'], ext: 'zst' },
};
const KINDS = Object.keys(CLI) as Array<Exclude<Compression, 'none'>>;
const GENEROUS: DecompressionLimits = { maxOutputBytes: 1 << 30, maxRatio: 1000 };
const ONE_GIB = 1 << 30;

let dir: string;
let cleanup: () => Promise<void>;
let sample: Buffer;
const compressedFiles = new Map<string, string>();

/** Compresses a file with the real CLI into `<file>.<ext>`. */
async function compressFile(kind: Exclude<Compression, 'none'>, file: string): Promise<string> {
  const { command, args, ext } = CLI[kind];
  await exec('sh', ['-c', `${command} ${args.join(' ')} "$1" > "$1.${ext}"`, 'sh', file]);
  return `${file}.${ext}`;
}

/**
 * 1 GiB of zeros compressed by the real CLI: 128 MiB compressed once, the stream repeated 8
 * times (concatenated gzip members / xz streams / zstd frames are one valid stream).
 */
async function zeroBomb(kind: Exclude<Compression, 'none'>): Promise<string> {
  const fast = { gzip: 'gzip -c -9', xz: 'xz -c -0 -T1', zstd: 'zstd -c -q -1' }[kind];
  const out = join(dir, `bomb.${CLI[kind].ext}`);
  const script = `head -c ${ONE_GIB / 8} /dev/zero | ${fast} > "$1.part" && for i in 1 2 3 4 5 6 7 8; do cat "$1.part"; done > "$1"`;
  await exec('sh', ['-c', script, 'sh', out]);
  return out;
}

async function drain(file: string, kind: Compression, limits: DecompressionLimits, compressedSize?: number): Promise<{ bytes: number; hash: string }> {
  let bytes = 0;
  const hash = createHash('sha256');
  await pipeline(
    createReadStream(file),
    createBoundedDecompressor(kind, limits, compressedSize),
    new Writable({
      write(chunk: Buffer, _encoding, callback) {
        bytes += chunk.length;
        hash.update(chunk);
        callback();
      },
    }),
  );
  return { bytes, hash: hash.digest('hex') };
}

function isFormatError(code: string): (error: unknown) => boolean {
  return (error: unknown) => {
    assert.ok(error instanceof PackageFormatError, `expected PackageFormatError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    return true;
  };
}

before(async () => {
  ({ dir, cleanup } = await makeTempDir());
  // Compressible text with some incompressible noise: several MiB, many decoder chunks.
  const lines: string[] = [];
  for (let i = 0; i < 200_000; i += 1) lines.push(`line ${i} ${i % 7 === 0 ? randomBytes(12).toString('hex') : 'same'}`);
  sample = Buffer.from(lines.join('\n'));
  await writeFile(join(dir, 'sample'), sample);
  for (const kind of KINDS) compressedFiles.set(kind, await compressFile(kind, join(dir, 'sample')));
});
after(() => cleanup());

describe('detectCompression', () => {
  it('recognises the magic of files made by the real CLIs', async () => {
    for (const kind of KINDS) {
      const file = compressedFiles.get(kind)!;
      assert.equal(detectCompression((await readFile(file)).subarray(0, 8)), kind);
    }
    assert.equal(detectCompression(Buffer.from('ustar')), null);
    assert.equal(detectCompression(Buffer.alloc(0)), null);
  });
});

describe('bounded decompression of real CLI output', () => {
  for (const kind of KINDS) {
    it(`${kind}: streams back the exact original bytes`, async () => {
      const file = compressedFiles.get(kind)!;
      const { bytes, hash } = await drain(file, kind, GENEROUS);
      assert.equal(bytes, sample.length);
      assert.equal(hash, createHash('sha256').update(sample).digest('hex'));
    });

    it(`${kind}: decompressToBuffer equals the original`, async () => {
      const compressed = await readFile(compressedFiles.get(kind)!);
      assert.ok((await decompressToBuffer(kind, compressed, GENEROUS)).equals(sample));
    });

    it(`${kind}: concatenated streams decode as one`, async () => {
      await writeFile(join(dir, 'part1'), 'hello ');
      await writeFile(join(dir, 'part2'), 'world');
      const joined = Buffer.concat([
        await readFile(await compressFile(kind, join(dir, 'part1'))),
        await readFile(await compressFile(kind, join(dir, 'part2'))),
      ]);
      assert.equal((await decompressToBuffer(kind, joined, GENEROUS)).toString(), 'hello world');
    });

    it(`${kind}: truncated or corrupt input fails with decompression_failed`, async () => {
      const compressed = await readFile(compressedFiles.get(kind)!);
      await assert.rejects(decompressToBuffer(kind, compressed.subarray(0, compressed.length - 100), GENEROUS), isFormatError('decompression_failed'));
      const garbage = Buffer.concat([compressed.subarray(0, 16), randomBytes(4096)]);
      await assert.rejects(decompressToBuffer(kind, garbage, GENEROUS), isFormatError('decompression_failed'));
      await assert.rejects(decompressToBuffer(kind, Buffer.alloc(0), GENEROUS), isFormatError('decompression_failed'));
    });

    it(`${kind}: output beyond maxOutputBytes is refused`, async () => {
      const file = compressedFiles.get(kind)!;
      await assert.rejects(drain(file, kind, { maxOutputBytes: sample.length - 1, maxRatio: 1e9 }), isFormatError('decompression_bomb'));
      // The exact size is still allowed: the cap is not off by one.
      assert.equal((await drain(file, kind, { maxOutputBytes: sample.length, maxRatio: 1e9 })).bytes, sample.length);
    });
  }

  it('none: passes bytes through and still enforces maxOutputBytes', async () => {
    assert.ok((await decompressToBuffer('none', sample, GENEROUS)).equals(sample));
    await assert.rejects(decompressToBuffer('none', sample, { maxOutputBytes: 1000, maxRatio: 1000 }), isFormatError('decompression_bomb'));
  });
});

describe('inputs found by fuzzing, decoded alike whole and in pieces', () => {
  const corpus = (target: string, name: string) => readFile(new URL(`../../fuzz/corpus/${target}/${name}`, import.meta.url));
  const inPieces = async (kind: Compression, data: Buffer) => {
    const out: Buffer[] = [];
    const cuts = [0, 7, Math.floor(data.length / 2), data.length];
    await pipeline(cuts.slice(0, -1).map((at, i) => data.subarray(at, cuts[i + 1])), createBoundedDecompressor(kind, GENEROUS, data.length), new Writable({ write: (c: Buffer, _e, cb) => (out.push(c), cb()) }));
    return Buffer.concat(out);
  };

  it('xz: a legacy .lzma header (zero bytes) before an xz stream is refused, as xz -d refuses it', async () => {
    const data = await corpus('decompress-xz', 'lzma-alone-header-before-xz');
    await assert.rejects(decompressToBuffer('xz', data, GENEROUS), isFormatError('decompression_failed'));
    await assert.rejects(inPieces('xz', data), isFormatError('decompression_failed'));
  });

  it('zstd: a corrupt block gives the same result however the input is cut', async () => {
    const data = await corpus('decompress-zstd', 'corrupt-block-cut-differently');
    const whole = await decompressToBuffer('zstd', data, GENEROUS).catch((e: unknown) => e);
    const pieces = await inPieces('zstd', data).catch((e: unknown) => e);
    if (whole instanceof Buffer) assert.ok(pieces instanceof Buffer && whole.equals(pieces), 'the same bytes');
    else assert.ok(whole instanceof PackageFormatError && pieces instanceof PackageFormatError, 'refused both ways');
  });

  it('zstd: sequences running past their block or bitstream, or reaching before the output, are refused in milliseconds', async () => {
    // fzstd decoded them for 0.2-1.5 s: output copied into nowhere, bits and history read out of bounds.
    for (const name of ['finding-sequences-past-block-end.zst', 'finding-sequences-past-bitstream-start.zst', 'finding-offset-before-output.zst', 'finding-state-past-table.zst']) {
      const data = await corpus('decompress-zstd', name);
      const started = Date.now();
      await assert.rejects(decompressToBuffer('zstd', data, GENEROUS), isFormatError('decompression_failed'));
      await assert.rejects(inPieces('zstd', data), isFormatError('decompression_failed'));
      assert.ok(Date.now() - started < 100, `${name}: ${Date.now() - started} ms`);
    }
  });
});

describe('decompression bombs (1 GiB of zeros)', () => {
  const bombs = new Map<string, string>();
  before(async () => {
    const files = await Promise.all(KINDS.map((kind) => zeroBomb(kind)));
    KINDS.forEach((kind, i) => bombs.set(kind, files[i]!));
  });

  for (const kind of KINDS) {
    it(`${kind}: stopped by the ratio limit quickly and without buffering the expansion`, async () => {
      const file = bombs.get(kind)!;
      const { size } = await stat(file);
      const started = Date.now();
      let produced = 0;
      await assert.rejects(
        pipeline(
          createReadStream(file),
          createBoundedDecompressor(kind, { maxOutputBytes: 8 * ONE_GIB, maxRatio: 100 }, size),
          new Writable({
            write(chunk: Buffer, _encoding, callback) {
              produced += chunk.length;
              callback();
            },
          }),
        ),
        isFormatError('decompression_bomb'),
      );
      const elapsed = Date.now() - started;
      assert.ok(produced <= Math.max(size, 64 * 1024) * 100, `${produced} bytes came out before the stop`);
      assert.ok(elapsed < 5000, `took ${elapsed} ms`);
      assert.ok(process.resourceUsage().maxRSS < 600 * 1024, `peak RSS ${process.resourceUsage().maxRSS} KiB`);
    });

    it(`${kind}: stopped by maxOutputBytes when the ratio is not limited`, async () => {
      await assert.rejects(drain(bombs.get(kind)!, kind, { maxOutputBytes: 64 * 1024 * 1024, maxRatio: 1e9 }), isFormatError('decompression_bomb'));
    });
  }

  it('reading the whole 1 GiB (zstd, gzip) keeps memory bounded: real streaming', async () => {
    for (const kind of ['zstd', 'gzip'] as const) {
      const { bytes } = await drain(bombs.get(kind)!, kind, { maxOutputBytes: 2 * ONE_GIB, maxRatio: 1e9 });
      assert.equal(bytes, ONE_GIB);
    }
    assert.ok(process.resourceUsage().maxRSS < 600 * 1024, `peak RSS ${process.resourceUsage().maxRSS} KiB`);
  });
});

describe('zstd frame guard', () => {
  it('refuses a frame asking for a huge window before allocating it', async () => {
    const file = join(dir, 'long');
    await writeFile(file, sample);
    // From a pipe zstd cannot shrink the window to the input size: the header keeps 2^30.
    await exec('sh', ['-c', `cat "$1" | zstd -q -c --long=30 > "$1.zst"`, 'sh', file]);
    await assert.rejects(drain(`${file}.zst`, 'zstd', GENEROUS), isFormatError('decompression_bomb'));
  });

  it('refuses a single-segment frame declaring an absurd content size', async () => {
    // magic, descriptor: single segment + 8-byte content size, then 4 GiB declared, then a raw last block.
    const frame = Buffer.concat([
      Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0xe0]),
      Buffer.from([0, 0, 0, 0, 1, 0, 0, 0]),
      Buffer.from([0x01 | (0 << 1) | (1 << 3), 0, 0, 0x41]),
    ]);
    await assert.rejects(decompressToBuffer('zstd', frame, GENEROUS), isFormatError('decompression_bomb'));
  });

  /** One frame of `blocks` raw one-byte blocks under a window of 2^(10 + exponent) bytes. */
  function tinyBlocks(blocks: number, exponent: number): Buffer {
    const parts = [Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, exponent << 3])];
    for (let i = 0; i < blocks; i += 1) parts.push(Buffer.from([(1 << 3) | (i === blocks - 1 ? 1 : 0), 0, 0, 0x41]));
    return Buffer.concat(parts);
  }

  /** `frames` frames of one raw one-byte block each, under a window of 2^(10 + exponent) bytes. */
  function tinyFrames(frames: number, exponent: number): Buffer {
    return Buffer.concat(Array.from({ length: frames }, () => tinyBlocks(1, exponent)));
  }

  it('reads a stream of tiny blocks under a large window quickly (found by fuzz/targets/decompress-zstd)', async () => {
    // fzstd used to copy its whole window after each block: 1,000 one-byte blocks under 32 MiB took 10 s.
    for (const [blocks, exponent] of [[1000, 15], [16_000, 10], [40_000, 12]] as const) {
      const started = Date.now();
      const out = await decompressToBuffer('zstd', tinyBlocks(blocks, exponent), GENEROUS);
      assert.equal(out.toString(), 'A'.repeat(blocks));
      assert.ok(Date.now() - started < 2000, `${blocks} blocks under 2^${10 + exponent}: ${Date.now() - started} ms`);
    }
  });

  it('refuses a stream of tiny frames under large windows, quickly', async () => {
    // Each frame allocates its window: 1,000 one-byte frames under 32 MiB would zero-fill 40 GB.
    const started = Date.now();
    await assert.rejects(decompressToBuffer('zstd', tinyFrames(1000, 15), GENEROUS), isFormatError('decompression_bomb'));
    assert.ok(Date.now() - started < 2000, `${Date.now() - started} ms`);
    // A few frames are what a parallel encoder writes: still read.
    assert.equal((await decompressToBuffer('zstd', tinyFrames(3, 15), GENEROUS)).toString(), 'AAA');
  });

  it('follows back-references across the window shifts of a long stream', async () => {
    // From a pipe the window stays at 2^20, so fzstd's window buffer fills and shifts many times.
    const file = join(dir, 'shifts');
    const long = Buffer.concat([sample, sample.subarray(0, 1_500_000), sample]);
    await writeFile(file, long);
    await exec('sh', ['-c', `cat "$1" | zstd -q -c -9 --long=20 > "$1.zst"`, 'sh', file]);
    const out = await drain(`${file}.zst`, 'zstd', GENEROUS);
    assert.equal(out.bytes, long.length);
    assert.equal(out.hash, createHash('sha256').update(long).digest('hex'));
  });

  it('still reads the largest window with the small blocks of zstd -19 --long=25', async () => {
    // zstd -19 splits blocks small (~8-14 KiB of output each here, varying with the sample's noise).
    const file = join(dir, 'window25');
    const part = sample.subarray(0, 400_000);
    await writeFile(file, part);
    await exec('sh', ['-c', `cat "$1" | zstd -q -c -19 --long=25 > "$1.zst"`, 'sh', file]);
    const out = await drain(`${file}.zst`, 'zstd', GENEROUS);
    assert.equal(out.bytes, part.length);
    assert.equal(out.hash, createHash('sha256').update(part).digest('hex'));
  });
});
