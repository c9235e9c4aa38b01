import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { linkReplacing, moveIntoPlace, writeFileAtomic } from '../../../src/adapters/storage/atomic.js';
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

describe('linkReplacing', () => {
  const inode = async (path: string) => (await stat(path)).ino;

  for (const nameLikelyFree of [false, true]) {
    it(`links a free name, replaces a taken one, leaves no temporary name (nameLikelyFree: ${nameLikelyFree})`, async (t) => {
      const { dir, cleanup } = await makeTempDir();
      t.after(cleanup);
      await writeFile(join(dir, 'object'), 'new');
      await writeFile(join(dir, 'taken'), 'old');
      await linkReplacing(join(dir, 'object'), join(dir, 'free'), { nameLikelyFree });
      await linkReplacing(join(dir, 'object'), join(dir, 'taken'), { nameLikelyFree });
      assert.equal(await inode(join(dir, 'free')), await inode(join(dir, 'object')));
      assert.equal(await readFile(join(dir, 'taken'), 'utf8'), 'new');
      assert.equal(await inode(join(dir, 'taken')), await inode(join(dir, 'object')));
      assert.deepEqual((await readdir(dir)).sort(), ['free', 'object', 'taken']);
    });
  }

  it('leaves no temporary name when the target already is the same file (a rename between two links does nothing)', async (t) => {
    const { dir, cleanup } = await makeTempDir();
    t.after(cleanup);
    await writeFile(join(dir, 'object'), 'same');
    await linkReplacing(join(dir, 'object'), join(dir, 'name'));
    await linkReplacing(join(dir, 'object'), join(dir, 'name'));
    await linkReplacing(join(dir, 'object'), join(dir, 'name'), { nameLikelyFree: true });
    assert.deepEqual((await readdir(dir)).sort(), ['name', 'object']);
    assert.equal((await stat(join(dir, 'object'))).nlink, 2);
  });

  it('fails and leaves no temporary name when the rename cannot replace the target', async (t) => {
    const { dir, cleanup } = await makeTempDir();
    t.after(cleanup);
    await writeFile(join(dir, 'object'), 'x');
    await mkdir(join(dir, 'folder'));
    await writeFile(join(dir, 'folder', 'inside'), 'kept');
    await assert.rejects(linkReplacing(join(dir, 'object'), join(dir, 'folder')), { code: 'EISDIR' });
    assert.deepEqual((await readdir(dir)).sort(), ['folder', 'object']);
    assert.equal((await stat(join(dir, 'object'))).nlink, 1);
  });
});

describe('writeFileAtomic for secrets (mode 0600)', () => {
  it('writes a new file readable by its owner only, and nothing else', async () => {
    const { dir, cleanup } = await makeTempDir();
    await writeFileAtomic(join(dir, 'initial-admin-password'), 'Tg-secret\n', { mode: 0o600 });
    assert.equal(readFileSync(join(dir, 'initial-admin-password'), 'utf8'), 'Tg-secret\n');
    assert.equal(statSync(join(dir, 'initial-admin-password')).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(dir), ['initial-admin-password']);
    await cleanup();
  });

  it('replaces an existing file whole, and its loose mode with 0600', async () => {
    const { dir, cleanup } = await makeTempDir();
    const file = join(dir, 'initial-admin-password');
    writeFileSync(file, 'an older and longer secret that must not survive in part\n', { mode: 0o644 });
    await writeFileAtomic(file, 'new\n', { mode: 0o600 });
    assert.equal(readFileSync(file, 'utf8'), 'new\n');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(dir), ['initial-admin-password']);
    await cleanup();
  });

  it('fails where the file cannot be placed, leaving no temporary file behind', async () => {
    const { dir, cleanup } = await makeTempDir();
    // A folder in the way: the rename fails after the content was written.
    const blocked = join(dir, 'taken');
    writeFileSync(join(dir, 'keep'), '');
    mkdirSync(join(blocked, 'inside'), { recursive: true });
    await assert.rejects(writeFileAtomic(blocked, 'x', { mode: 0o600 }), /EISDIR|ENOTEMPTY|EEXIST/);
    assert.deepEqual(readdirSync(dir).sort(), ['keep', 'taken']);
    await cleanup();
  });
});
