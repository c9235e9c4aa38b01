/**
 * Reading access logs from a local folder: a gzipped file rotated away between listing and
 * reading fails the read with its error instead of crashing the process.
 */
import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { localAccessLogFiles } from '../../../src/adapters/access-logs/log-files.js';
import { parseLogGlob } from '../../../src/domain/downloads/log-glob.js';
import { makeTempDir } from '../../helpers/tmp.js';

describe('local access log files', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  before(async () => { tmp = await makeTempDir('tollgate-logs-'); });
  after(async () => tmp.cleanup());

  it('reads a gzipped log from a position, and rejects (not crashes) when the file is gone', async () => {
    const line = '127.0.0.1 - - [25/Nov/2026:08:00:00 +0000] "GET /repo/apt/pool/main/a/a/a_1.0_amd64.deb HTTP/1.1" 200 10 "-" "apt"\n';
    await writeFile(join(tmp.dir, 'access.log.1.gz'), gzipSync(line.repeat(3)));
    const files = localAccessLogFiles(parseLogGlob(join(tmp.dir, 'access.log*')));
    const [file] = await files.list();
    assert.equal(file!.gzip, true);
    const chunks: Buffer[] = [];
    for await (const chunk of files.read(file!, line.length)) chunks.push(chunk);
    assert.equal(Buffer.concat(chunks).toString(), line.repeat(2));

    await rm(file!.path);
    await assert.rejects(async () => {
      for await (const _chunk of files.read(file!, 0)) { /* drained */ }
    }, /ENOENT/);
  });
});
