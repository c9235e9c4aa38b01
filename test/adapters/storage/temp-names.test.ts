import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { utimes, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { describe, it } from 'node:test';
import { FOREIGN_TEMP_IDLE_MS, isAbandonedTemp, RUN_TAG, tempPathFor, tempWriterOf } from '../../../src/adapters/storage/temp-names.js';
import { makeTempDir } from '../../helpers/tmp.js';

const OTHER_RUN = RUN_TAG === '0badc0de' ? '0badc0df' : '0badc0de';
/** A temp name as a writer of `run` (null: a name from before the run tag) with `pid` gives it. */
const nameBy = (dir: string, run: string | null, pid: number, kind = 'tmp') => join(dir, `.Packages.xz.${run ? `${run}-` : ''}${pid}.0123456789ab.${kind}`);

describe('temp file names', () => {
  it('name their writer by run and pid, and are read back', () => {
    const path = tempPathFor('/data/repo/Packages.xz');
    assert.match(basename(path), /^\.Packages\.xz\.[0-9a-f]{8}-\d+\.[0-9a-f]{12}\.tmp$/);
    assert.deepEqual(tempWriterOf(basename(path)), { run: RUN_TAG, pid: process.pid });
    assert.deepEqual(tempWriterOf(basename(tempPathFor('/x/y', 'spare'))), { run: RUN_TAG, pid: process.pid });
    assert.deepEqual(tempWriterOf('.Packages.4242.0123456789ab.tmp'), { run: null, pid: 4242 }, 'the names of earlier versions');
    for (const name of ['Packages', '.Packages.tmp', '.Packages.42.xyz.tmp', '.generations.json', 'Packages.4242.0123456789ab.tmp.gz']) {
      assert.equal(tempWriterOf(name), null, name);
    }
  });
});

describe('temp file names, many', () => {
  it('never repeat within the process (a counter from a random start) and keep the pattern', () => {
    const names = Array.from({ length: 10_000 }, () => basename(tempPathFor('/data/repo/Packages')));
    assert.equal(new Set(names).size, names.length);
    for (const name of names.slice(0, 50)) assert.deepEqual(tempWriterOf(name), { run: RUN_TAG, pid: process.pid }, name);
  });
});

describe('isAbandonedTemp', () => {
  it('judges a writer of this run by its pid', async (t) => {
    const { dir, cleanup } = await makeTempDir();
    t.after(cleanup);
    const sleeper = spawn('sleep', ['30']);
    t.after(() => sleeper.kill());
    const cases: Array<[string, boolean]> = [
      [nameBy(dir, RUN_TAG, 999_999_999), true],
      [nameBy(dir, RUN_TAG, sleeper.pid!), false],
      [nameBy(dir, RUN_TAG, process.pid, 'spare'), false],
      // pid 1 exists everywhere, whoever owns it.
      [nameBy(dir, RUN_TAG, 1), false],
    ];
    for (const [path, abandoned] of cases) {
      await writeFile(path, 'x');
      assert.equal(await isAbandonedTemp(path), abandoned, basename(path));
    }
  });

  it('leaves the files of another host, container or boot alone until nobody has written them for a day', async (t) => {
    const { dir, cleanup } = await makeTempDir();
    t.after(cleanup);
    // A dead pid here says nothing about a writer elsewhere (the bug this rule fixed).
    const fresh = nameBy(dir, OTHER_RUN, 999_999_999);
    const idle = nameBy(dir, OTHER_RUN, 999_999_999, 'spare');
    const legacyFresh = nameBy(dir, null, 999_999_999);
    const legacyIdle = nameBy(dir, null, 999_999_998);
    for (const path of [fresh, idle, legacyFresh, legacyIdle]) await writeFile(path, 'x');
    const dayAndAMinute = new Date(Date.now() - FOREIGN_TEMP_IDLE_MS - 60_000);
    for (const path of [idle, legacyIdle]) await utimes(path, dayAndAMinute, dayAndAMinute);
    assert.equal(await isAbandonedTemp(fresh), false);
    assert.equal(await isAbandonedTemp(legacyFresh), false);
    assert.equal(await isAbandonedTemp(idle), true);
    assert.equal(await isAbandonedTemp(legacyIdle), true);
    assert.equal(await isAbandonedTemp(join(dir, 'gone', basename(idle))), false, 'a file removed meanwhile');
    assert.equal(await isAbandonedTemp(join(dir, 'Packages')), false);
  });
});
