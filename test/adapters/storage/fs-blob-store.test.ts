import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import { describe, it } from 'node:test';
import { FsBlobStore } from '../../../src/adapters/storage/fs-blob-store.js';
import { DomainError } from '../../../src/domain/errors.js';
import { makeTempDir } from '../../helpers/tmp.js';

const isCode = (code: string) => (err: unknown): boolean => err instanceof DomainError && err.code === code;

async function setup(t: { after: (fn: () => Promise<void>) => void }) {
  const { dir, cleanup } = await makeTempDir();
  t.after(cleanup);
  const root = join(dir, 'pool-root');
  const outside = join(dir, 'outside');
  await mkdir(outside);
  await writeFile(join(outside, 'secret'), 'do not touch');
  const tmp = async (content: string): Promise<string> => {
    const p = join(dir, `upload-${Math.random().toString(36).slice(2)}`);
    await writeFile(p, content);
    return p;
  };
  return { dir, root, outside, store: new FsBlobStore(root), tmp };
}

describe('FsBlobStore', () => {
  it('puts, opens, lists and removes blobs', async (t) => {
    const { root, store, tmp } = await setup(t);
    await store.put(await tmp('deb one'), 'pool/main/h/hello/hello_1.0_amd64.deb');
    await store.put(await tmp('deb two'), 'pool/main/libf/libfoo/libfoo1_2_amd64.deb');
    await store.put(await tmp('deb one v2'), 'pool/main/h/hello/hello_1.0_amd64.deb');
    assert.equal(await text(await store.open('pool/main/h/hello/hello_1.0_amd64.deb')), 'deb one v2');
    assert.equal(await readFile(join(root, 'pool/main/libf/libfoo/libfoo1_2_amd64.deb'), 'utf8'), 'deb two');
    assert.deepEqual(await store.list(), ['pool/main/h/hello/hello_1.0_amd64.deb', 'pool/main/libf/libfoo/libfoo1_2_amd64.deb']);
    assert.deepEqual(await store.list('pool/main/h/'), ['pool/main/h/hello/hello_1.0_amd64.deb']);
    assert.deepEqual(await store.list('pool/main/zzz'), []);
    assert.equal(await store.exists('pool/main/h/hello/hello_1.0_amd64.deb'), true);
    await store.remove('pool/main/h/hello/hello_1.0_amd64.deb');
    await store.remove('pool/main/h/hello/hello_1.0_amd64.deb');
    assert.equal(await store.exists('pool/main/h/hello/hello_1.0_amd64.deb'), false);
    await assert.rejects(store.open('pool/main/h/hello/hello_1.0_amd64.deb'), isCode('blob_not_found'));
  });

  it('refuses paths that are absolute or climb out of the root', async (t) => {
    const { store, tmp } = await setup(t);
    const bad = ['../outside/secret', 'pool/../../outside/secret', '/etc/passwd', 'pool//x', 'pool/./x', 'pool\\..\\x', 'a\0b', '', 'pool/x/', 'a/' + 'x'.repeat(300)];
    for (const p of bad) {
      await assert.rejects(store.put(await tmp('x'), p), isCode('bad_blob_path'), `put ${JSON.stringify(p)}`);
      await assert.rejects(store.open(p), isCode('bad_blob_path'), `open ${JSON.stringify(p)}`);
      await assert.rejects(store.remove(p), isCode('bad_blob_path'), `remove ${JSON.stringify(p)}`);
      await assert.rejects(store.exists(p), isCode('bad_blob_path'), `exists ${JSON.stringify(p)}`);
    }
    await assert.rejects(store.list('../outside'), isCode('bad_blob_path'));
  });

  it('does not follow symlinks out of the root', async (t) => {
    const { root, outside, store, tmp } = await setup(t);
    await mkdir(join(root, 'pool'), { recursive: true });
    await symlink(outside, join(root, 'pool', 'escape'));
    await symlink(join(outside, 'secret'), join(root, 'pool', 'secret-link'));

    await assert.rejects(store.open('pool/escape/secret'), isCode('bad_blob_path'));
    await assert.rejects(store.open('pool/secret-link'), isCode('bad_blob_path'));
    await assert.rejects(store.put(await tmp('evil'), 'pool/escape/new/file.deb'), isCode('bad_blob_path'));
    await assert.rejects(store.put(await tmp('evil'), 'pool/escape/secret'), isCode('bad_blob_path'));
    await assert.rejects(store.remove('pool/escape/secret'), isCode('bad_blob_path'));
    await assert.rejects(store.exists('pool/escape/secret'), isCode('bad_blob_path'));
    assert.equal(await store.exists('pool/secret-link'), false, 'a symlink is not a blob');
    assert.deepEqual(await store.list(), [], 'symlinks are not listed or followed');
    await store.remove('pool/secret-link'); // unlinks the link only
    assert.equal(await readFile(join(outside, 'secret'), 'utf8'), 'do not touch');
    assert.deepEqual(await readdir(outside), ['secret'], 'nothing was created outside the root');
  });
});
