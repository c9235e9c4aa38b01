import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createHash } from 'node:crypto';
import { DomainError } from '../../../src/domain/errors.js';
import { FsPackageFiles } from '../../../src/adapters/storage/fs-package-files.js';
import type { PackageFiles } from '../../../src/adapters/storage/interfaces.js';
import { makeTempDir } from '../../helpers/tmp.js';

const isCode = (code: string) => (e: unknown) => e instanceof DomainError && e.code === code;

describe('FsPackageFiles: the storage contract on a local folder', () => {
  let work: { dir: string; cleanup: () => Promise<void> };
  let files: PackageFiles;
  const temp = async (name: string, content: string) => {
    const path = join(files.tempDir, name);
    await writeFile(path, content);
    return { path, sha256: createHash('sha256').update(content).digest('hex') };
  };
  before(async () => {
    work = await makeTempDir('tollgate-files-');
    files = new FsPackageFiles(work.dir);
    await files.init();
  });
  after(() => work.cleanup());

  it('keeps bytes once, publishes them at pool paths, lists, unpublishes and forgets them', async () => {
    const a = await temp('a.tmp', 'package a');
    assert.deepEqual(await files.readHead(a.path, 7), Buffer.from('package'));
    await files.keep(a.path, a.sha256);
    assert.equal(existsSync(a.path), false, 'moved, not copied');
    const again = await temp('a2.tmp', 'package a');
    await files.keep(again.path, again.sha256);
    assert.equal(existsSync(again.path), false, 'the same bytes twice: the second temp file is dropped');
    assert.equal(await files.has(a.sha256), true);
    await files.publish(a.sha256, 'apt/pool/main/a/a/a_1.0+b1_amd64.deb');
    await files.publish(a.sha256, 'rpm/rocky9/x86_64/Packages/a/a-1.0-1.x86_64.rpm');
    assert.deepEqual((await files.listPublishedPackages()).sort(), ['apt/pool/main/a/a/a_1.0+b1_amd64.deb', 'rpm/rocky9/x86_64/Packages/a/a-1.0-1.x86_64.rpm']);
    assert.equal(await readFile(join(files.repoDir, 'apt/pool/main/a/a/a_1.0+b1_amd64.deb'), 'utf8'), 'package a');
    await files.unpublish('apt/pool/main/a/a/a_1.0+b1_amd64.deb');
    assert.equal(await files.isPublished('apt/pool/main/a/a/a_1.0+b1_amd64.deb'), false);
    await files.forget(a.sha256);
    assert.equal(await files.has(a.sha256), false);
    await files.discard(join(files.tempDir, 'never-existed.tmp'));
  });

  it('quarantines temp uploads and pooled bytes out of the served tree', async () => {
    const q = await temp('q.tmp', 'infected');
    await files.quarantineTemp(q.path, q.sha256);
    assert.equal(existsSync(join(work.dir, 'quarantine', q.sha256)), true);
    const k = await temp('k.tmp', 'kept elsewhere');
    await files.keep(k.path, k.sha256);
    await files.quarantine(k.sha256, true);
    assert.equal(await files.has(k.sha256), true, 'still used by another row: copied');
    assert.equal(existsSync(join(work.dir, 'quarantine', k.sha256)), true);
  });

  it('refuses pool paths that are absolute or climb out of the tree, and names that are not SHA-256', async () => {
    const x = await temp('x.tmp', 'x');
    await files.keep(x.path, x.sha256);
    for (const bad of ['../outside', 'apt/../../secret', '/etc/passwd', 'apt//x.deb', 'apt/./x.deb', 'apt\\..\\x', 'a\0b', '', 'apt/x/']) {
      await assert.rejects(files.publish(x.sha256, bad), isCode('bad_storage_path'), JSON.stringify(bad));
      await assert.rejects(files.unpublish(bad), isCode('bad_storage_path'), JSON.stringify(bad));
    }
    await assert.rejects(files.keep(x.path, '../../etc/passwd'), /not a sha256/);
    await assert.rejects(files.quarantineTemp(x.path, 'zz'), /not a sha256/);
  });

  it('publishes at a free pool path as a hard link of the stored bytes, and replaces what a path held', async () => {
    const a = await temp('link-a.tmp', 'link a');
    await files.keep(a.path, a.sha256);
    const poolPath = 'apt/pool/main/l/link/link_1.0-1_amd64.deb';
    await files.publish(a.sha256, poolPath);
    const [stored, published] = await Promise.all([stat(files.storedPath(a.sha256)), stat(join(files.repoDir, poolPath))]);
    assert.equal(published.ino, stored.ino, 'one link, no copy');
    await files.publish(a.sha256, poolPath);
    assert.equal((await stat(join(files.repoDir, poolPath))).ino, stored.ino, 'published again: unchanged');
    const b = await temp('link-b.tmp', 'link b');
    await files.keep(b.path, b.sha256);
    await files.publish(b.sha256, poolPath);
    assert.equal(await readFile(join(files.repoDir, poolPath), 'utf8'), 'link b', 'what the path held is replaced');
    assert.deepEqual((await readdir(dirname(join(files.repoDir, poolPath)))).sort(), ['link_1.0-1_amd64.deb'], 'no temp name left');
  });

  it('runs keep\'s companion step once the bytes are at their store name, and fails with it', async () => {
    const c = await temp('alongside.tmp', 'alongside');
    let seen = false;
    await files.keep(c.path, c.sha256, async () => {
      seen = existsSync(files.storedPath(c.sha256));
      await files.publish(c.sha256, 'apt/pool/main/a/alongside/alongside_1_all.deb');
    });
    assert.equal(seen, true, 'the bytes were stored before it ran');
    assert.equal(await files.isPublished('apt/pool/main/a/alongside/alongside_1_all.deb'), true);
    const again = await temp('alongside-again.tmp', 'alongside');
    let ranForKnownBytes = false;
    await files.keep(again.path, again.sha256, async () => { ranForKnownBytes = true; });
    assert.equal(ranForKnownBytes, true, 'bytes already stored: it still runs');
    const d = await temp('alongside-fails.tmp', 'alongside fails');
    await assert.rejects(files.keep(d.path, d.sha256, async () => { throw new Error('link failed'); }), /link failed/);
  });
});
