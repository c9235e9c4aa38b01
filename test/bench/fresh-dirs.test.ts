import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freshDirs, removeRunDirs, skipsRecentlyFreedInodes } from '../../bench/lib/fresh-dirs.js';

describe('bench run folders', () => {
  let tmp: string;
  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'fresh-dirs-'));
  });
  after(() => rm(tmp, { recursive: true, force: true }));

  it('tells a journal-less ext4 from a journalled one, XFS and tmpfs, by the mount that holds the path', async () => {
    const journals = join(tmp, 'jbd2');
    const plain = join(tmp, 'plain');
    const journalled = join(tmp, 'journalled');
    await mkdir(join(plain, 'deep'), { recursive: true });
    await mkdir(journalled, { recursive: true });
    await mkdir(join(tmp, 'xfs'));
    await mkdir(join(tmp, 'ram'));
    await mkdir(journals);
    await writeFile(join(journals, 'loop7-8'), '');
    const mounts = [
      '/dev/vdz / ext4 rw 0 0',
      `/dev/loop6 ${plain} ext4 rw 0 0`,
      `/dev/loop7 ${journalled} ext4 rw 0 0`,
      `/dev/sdz ${join(tmp, 'xfs')} xfs rw 0 0`,
      `tmpfs ${join(tmp, 'ram')} tmpfs rw 0 0`,
    ].join('\n');
    // The folder need not exist yet: its nearest existing parent decides.
    assert.equal(skipsRecentlyFreedInodes(join(plain, 'deep', 'not-yet', 'data'), mounts, journals), true);
    assert.equal(skipsRecentlyFreedInodes(join(journalled, 'data'), mounts, journals), false);
    assert.equal(skipsRecentlyFreedInodes(join(tmp, 'xfs', 'data'), mounts, journals), false);
    assert.equal(skipsRecentlyFreedInodes(join(tmp, 'ram', 'data'), mounts, journals), false);
  });

  it('removes a run\'s folders when it ends, then makes the next run wait until that deletion is a minute old', async () => {
    const work = join(tmp, 'work');
    const data = join(work, 'data');
    await mkdir(join(data, 'repo'), { recursive: true });
    await writeFile(join(data, 'repo', 'file'), 'x');
    await removeRunDirs(work, [data], false);
    assert.equal(existsSync(data), false);
    const deletedAt = Number(await readFile(join(work, '.last-deletion'), 'utf8'));
    assert.ok(Date.now() - deletedAt < 10_000);

    const waits: number[] = [];
    await freshDirs(work, [data], { affected: () => true, wait: async (ms) => waits.push(ms) });
    assert.equal(waits.length, 1);
    assert.ok(waits[0]! > 50_000 && waits[0]! <= 61_000, `waited ${waits[0]} ms`);
    // Nowhere the deletion matters, no wait.
    await freshDirs(work, [data], { affected: () => false, wait: async (ms) => waits.push(ms) });
    assert.equal(waits.length, 1);
  });

  it('removes what a killed run left, and keeps a run\'s folders when asked', async () => {
    const work = join(tmp, 'work2');
    const data = join(work, 'data');
    await mkdir(data, { recursive: true });
    await writeFile(join(work, '.last-deletion'), String(Date.now() - 120_000));
    const waits: number[] = [];
    await freshDirs(work, [data, join(work, 'never-made')], { affected: () => true, wait: async (ms) => waits.push(ms) });
    assert.equal(existsSync(data), false);
    // The leftover was just deleted: the run waits for it too.
    assert.equal(waits.length, 1);
    await mkdir(data);
    await removeRunDirs(work, [data], true);
    assert.equal(existsSync(data), true);
  });
});
