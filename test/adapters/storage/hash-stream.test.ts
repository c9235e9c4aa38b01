import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { hashStream } from '../../../src/adapters/storage/hash-stream.js';
import { DomainError } from '../../../src/domain/errors.js';
import { makeTempDir } from '../../helpers/tmp.js';

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
});
