import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
/** The size chunks are gathered to before a write (hash-stream.ts' WRITE_BYTES): the tests cross it. */
const BLOCK_BYTES = 1 << 20;
import { hashStream } from '../../../src/adapters/storage/hash-stream.js';
import { DomainError } from '../../../src/domain/errors.js';
import { exec } from '../../helpers/apt.js';
import { makeTempDir } from '../../helpers/tmp.js';

/** Deterministic bytes, different at every offset of a block. */
function pattern(length: number, seed: number): Buffer {
  const data = Buffer.alloc(length);
  for (let i = 0; i < length; i++) data[i] = (i * 131 + seed + (i >> 11)) & 0xff;
  return data;
}

/** `data` cut into chunks of `size` bytes (the last shorter). */
async function* chunksOf(data: Buffer, size: number): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < data.length; at += size) yield data.subarray(at, at + size);
}

const digestOf = (algorithm: string, data: Buffer) => createHash(algorithm).update(data).digest('hex');

describe('hashStream', () => {
  it('copies a stream to a temp file and computes the same digests as coreutils', async (t) => {
    const { dir, cleanup } = await makeTempDir();
    t.after(cleanup);
    const source = join(dir, 'source.bin');
    const data = Buffer.alloc(3 * 1024 * 1024 + 17);
    for (let i = 0; i < data.length; i++) data[i] = (i * 31 + (i >> 12)) & 0xff;
    await writeFile(source, data);
    const result = await hashStream(createReadStream(source, { highWaterMark: 64 * 1024 }), { tempDir: join(dir, 'tmp') });
    assert.equal(result.size, data.length);
    assert.ok((await readFile(result.path)).equals(data));
    for (const [tool, key] of [['md5sum', 'md5'], ['sha1sum', 'sha1'], ['sha256sum', 'sha256'], ['sha512sum', 'sha512']] as const) {
      assert.equal(result[key], execFileSync(tool, [source], { encoding: 'utf8' }).split(' ')[0], tool);
    }
  });

  it('stops at maxBytes with too_large and removes the temp file', async (t) => {
    const { dir, cleanup } = await makeTempDir();
    t.after(cleanup);
    let produced = 0;
    async function* endless(): AsyncGenerator<Uint8Array> {
      for (;;) {
        produced += 65536;
        yield new Uint8Array(65536);
      }
    }
    await assert.rejects(hashStream(endless(), { tempDir: dir, maxBytes: 1_000_000 }), (err: unknown) => {
      assert.ok(err instanceof DomainError);
      assert.equal(err.kind, 'too_large');
      assert.equal(err.code, 'file_too_large');
      return true;
    });
    assert.ok(produced <= 1_000_000 + 65536, 'reading stops at the limit');
    assert.deepEqual(await readdir(dir), []);
  });

  it('removes the temp file when the source fails', async (t) => {
    const { dir, cleanup } = await makeTempDir();
    t.after(cleanup);
    async function* failing(): AsyncGenerator<string> {
      yield 'some data';
      throw new Error('connection reset');
    }
    await assert.rejects(hashStream(failing(), { tempDir: dir }), /connection reset/);
    assert.deepEqual(await readdir(dir), []);
  });

  it('gives the same file and digests on both sides of the block size, whatever the chunking (writes gathered across chunk boundaries)', async (t) => {
    const { dir, cleanup } = await makeTempDir();
    t.after(cleanup);
    const lengths = [0, 1, BLOCK_BYTES - 1, BLOCK_BYTES, BLOCK_BYTES + 1, 2 * BLOCK_BYTES, 5 * BLOCK_BYTES + 12_345];
    for (const [index, length] of lengths.entries()) {
      const data = pattern(length, index);
      for (const chunk of [65_536, 100_003, 3 * BLOCK_BYTES]) {
        const result = await hashStream(chunksOf(data, chunk), { tempDir: dir, sync: false });
        const what = `${length} bytes in chunks of ${chunk}`;
        assert.equal(result.size, length, what);
        assert.ok((await readFile(result.path)).equals(data), what);
        for (const algorithm of ['md5', 'sha1', 'sha256', 'sha512'] as const) assert.equal(result[algorithm], digestOf(algorithm, data), `${what}: ${algorithm}`);
      }
    }
  });

  it('keeps the first bytes when asked (keepHead), across chunk boundaries, fewer when the content is shorter', async (t) => {
    const { dir, cleanup } = await makeTempDir();
    t.after(cleanup);
    const keep = 65_536;
    for (const length of [0, 10, keep - 1, keep, keep + 1, 3 * keep + 7]) {
      const data = pattern(length, length);
      for (const chunk of [1000, 4096, keep, 100_003]) {
        const result = await hashStream(chunksOf(data, chunk), { tempDir: dir, sync: false, keepHead: keep });
        assert.ok(result.head?.equals(data.subarray(0, keep)), `${length} bytes in chunks of ${chunk}`);
      }
    }
    assert.equal((await hashStream(chunksOf(pattern(10, 1), 4), { tempDir: dir, sync: false })).head, undefined, 'nothing kept unless asked');
  });

  it('streams side by side keep their own digests', async (t) => {
    const { dir, cleanup } = await makeTempDir();
    t.after(cleanup);
    const inputs = Array.from({ length: 6 }, (_, i) => pattern(3 * BLOCK_BYTES + i * 4099, 100 + i));
    const results = await Promise.all(inputs.map((data) => hashStream(chunksOf(data, 65_536), { tempDir: dir, sync: false })));
    for (const [i, result] of results.entries()) {
      assert.equal(result.sha256, digestOf('sha256', inputs[i]!), `stream ${i}`);
      assert.ok((await readFile(result.path)).equals(inputs[i]!), `stream ${i}`);
    }
  });

  it('stops at maxBytes past the first block and leaves no file behind', async (t) => {
    const { dir, cleanup } = await makeTempDir();
    t.after(cleanup);
    async function* endless(): AsyncGenerator<Uint8Array> {
      for (;;) yield pattern(65_536, 7);
    }
    await assert.rejects(hashStream(endless(), { tempDir: dir, maxBytes: 3 * BLOCK_BYTES + 5 }), (err: unknown) => err instanceof DomainError && err.code === 'file_too_large');
    assert.deepEqual(await readdir(dir), []);
    // Nothing is left in a bad state: the next stream is whole.
    const data = pattern(2 * BLOCK_BYTES + 3, 9);
    assert.equal((await hashStream(chunksOf(data, 65_536), { tempDir: dir })).sha256, digestOf('sha256', data));
  });

  it('reports a full disk under a large stream as ENOSPC and removes the temp file', { skip: process.getuid?.() === 0 ? false : 'needs root to mount a tmpfs' }, async (t) => {
    const { dir, cleanup } = await makeTempDir();
    const mount = join(dir, 'fs');
    await mkdir(mount);
    const mounted = await exec('mount', ['-t', 'tmpfs', '-o', 'size=512k', 'tmpfs', mount]);
    t.after(async () => {
      if (mounted.code === 0) await exec('umount', ['-l', mount]);
      await cleanup();
    });
    if (mounted.code !== 0) return t.skip(`cannot mount a tmpfs: ${mounted.stderr.trim()}`);
    for (let run = 0; run < 3; run++) {
      await assert.rejects(hashStream(chunksOf(pattern(4 * BLOCK_BYTES, run), 65_536), { tempDir: mount }), (err: unknown) => (err as { code?: string }).code === 'ENOSPC');
      assert.deepEqual(await readdir(mount), [], `run ${run}`);
    }
  });

  it("with sync 'background' answers before the fsync, which `durable` reports, and closes its file once done", async (t) => {
    const { dir, cleanup } = await makeTempDir();
    t.after(cleanup);
    const data = pattern(BLOCK_BYTES + 5, 7);
    const openFiles = async () => (await readdir('/proc/self/fd')).length;
    const before = await openFiles();
    const result = await hashStream(chunksOf(data, 64 * 1024), { tempDir: join(dir, 'tmp'), sync: 'background' });
    assert.ok(result.durable instanceof Promise, 'a background sync gives a promise to wait for');
    // Readable at once (the steps read it while the fsync runs).
    assert.ok((await readFile(result.path)).equals(data));
    assert.equal(result.sha256, digestOf('sha256', data));
    await result.durable;
    assert.equal(await openFiles(), before, 'the temp file is closed once synced');
    // The default still syncs before answering, and says nothing more.
    const inline = await hashStream(chunksOf(data, 64 * 1024), { tempDir: join(dir, 'tmp') });
    assert.equal(inline.durable, undefined);
  });
});
