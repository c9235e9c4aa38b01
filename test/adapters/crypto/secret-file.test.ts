import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { writeSecretFile } from '../../../src/adapters/crypto/secret-file.js';
import { makeTempDir } from '../../helpers/tmp.js';

describe('writeSecretFile', () => {
  it('writes a new file readable by its owner only, and nothing else', async () => {
    const { dir, cleanup } = await makeTempDir();
    writeSecretFile(join(dir, 'initial-admin-password'), 'Tg-secret\n');
    assert.equal(readFileSync(join(dir, 'initial-admin-password'), 'utf8'), 'Tg-secret\n');
    assert.equal(statSync(join(dir, 'initial-admin-password')).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(dir), ['initial-admin-password']);
    await cleanup();
  });

  it('replaces an existing file whole, and its loose mode with 0600', async () => {
    const { dir, cleanup } = await makeTempDir();
    const file = join(dir, 'initial-admin-password');
    writeFileSync(file, 'an older and longer secret that must not survive in part\n', { mode: 0o644 });
    writeSecretFile(file, 'new\n');
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
    assert.throws(() => writeSecretFile(blocked, 'x'), /EISDIR|ENOTEMPTY|EEXIST/);
    assert.deepEqual(readdirSync(dir).sort(), ['keep', 'taken']);
    await cleanup();
  });
});
