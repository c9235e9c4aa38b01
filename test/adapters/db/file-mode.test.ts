import assert from 'node:assert/strict';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { migrateToLatest, openDatabase } from '../../../src/adapters/db/index.js';
import { startTestApp } from '../../helpers/app.js';
import { makeTempDir } from '../../helpers/tmp.js';

const modeOf = (path: string) => statSync(path).mode & 0o777;

describe('SQLite database file permissions', () => {
  it('creates the database and its WAL side files readable by the owner only, whatever the umask', async () => {
    const previous = process.umask(0o022);
    try {
      const t = await startTestApp();
      try {
        await t.tokenFor('reader'); // writes, so the WAL and shared-memory files exist
        for (const file of ['tollgate.db', 'tollgate.db-wal', 'tollgate.db-shm']) {
          assert.equal(modeOf(join(t.dataDir, file)).toString(8), '600', file);
        }
      } finally {
        await t.close();
      }
    } finally {
      process.umask(previous);
    }
  });

  it('tightens the files of an existing installation when it opens them', async () => {
    const tmp = await makeTempDir('tollgate-dbmode-');
    try {
      const file = join(tmp.dir, 'tollgate.db');
      const first = openDatabase(null, tmp.dir);
      await migrateToLatest(first.db);
      await first.close();
      for (const path of [file, `${file}-journal`]) {
        writeFileSync(path, readFileSync(path, { flag: 'a+' }));
        chmodSync(path, 0o644);
      }
      const reopened = openDatabase(null, tmp.dir);
      assert.equal(modeOf(file).toString(8), '600');
      assert.equal(modeOf(`${file}-journal`).toString(8), '600');
      await reopened.close();
    } finally {
      await tmp.cleanup();
    }
  });
});
