import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
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
});
