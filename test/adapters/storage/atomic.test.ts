import assert from 'node:assert/strict';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { moveIntoPlace, writeFileAtomic } from '../../../src/adapters/storage/atomic.js';
import { makeTempDir } from '../../helpers/tmp.js';

describe('writeFileAtomic', () => {
  it('creates folders, replaces content and leaves no temp file', async (t) => {
    const { dir, cleanup } = await makeTempDir();
    t.after(cleanup);
    const target = join(dir, 'a', 'b', 'Release');
    await writeFileAtomic(target, 'one\n');
    await writeFileAtomic(target, new Uint8Array([116, 119, 111]), { mode: 0o600 });
    assert.equal(await readFile(target, 'utf8'), 'two');
    assert.equal((await stat(target)).mode & 0o777, 0o600);
    assert.deepEqual(await readdir(join(dir, 'a', 'b')), ['Release']);
  });

  it('never lets a reader see a partial file while a large file is rewritten', async (t) => {
    const { dir, cleanup } = await makeTempDir();
    t.after(cleanup);
    const target = join(dir, 'Packages');
    const versions = ['a', 'b', 'c', 'd'].map((ch) => ch.repeat(8 * 1024 * 1024));
    await writeFileAtomic(target, versions[0] as string);
    let stop = false;
    let reads = 0;
    const reader = (async () => {
      while (!stop) {
        const content = await readFile(target, 'utf8');
        reads++;
        assert.ok(versions.includes(content), `torn read of ${content.length} bytes`);
      }
    })();
    for (const v of versions.slice(1)) await writeFileAtomic(target, v);
    stop = true;
    await reader;
    assert.ok(reads > 0);
  });

  it('cleans up its temp file when the write fails', async (t) => {
    const { dir, cleanup } = await makeTempDir();
    t.after(cleanup);
    await writeFile(join(dir, 'file'), 'x');
    // The target is a folder: the final rename fails.
    await assert.rejects(writeFileAtomic(dir, 'data'));
    assert.deepEqual(await readdir(dir), ['file']);
  });
});

describe('moveIntoPlace', () => {
  it('renames a finished temp file into a new folder', async (t) => {
    const { dir, cleanup } = await makeTempDir();
    t.after(cleanup);
    await writeFile(join(dir, 'tmp'), 'payload');
    await moveIntoPlace(join(dir, 'tmp'), join(dir, 'pool', 'x', 'file.deb'));
    assert.equal(await readFile(join(dir, 'pool', 'x', 'file.deb'), 'utf8'), 'payload');
    assert.deepEqual((await readdir(dir)).sort(), ['pool']);
  });
});
