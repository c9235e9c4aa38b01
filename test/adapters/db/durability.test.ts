/**
 * SQLite commits (WAL, synchronous = NORMAL) are made durable by one shared sync of the WAL file
 * before an answer reports them: callers that come while a sync is under way get the next one.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { walDurability } from '../../../src/adapters/db/durability.js';
import { openDatabase } from '../../../src/adapters/db/index.js';
import { startTestApp } from '../../helpers/app.js';
import { makeTempDir } from '../../helpers/tmp.js';

/** A sync that finishes when the test says, recording each one. */
function controlledSync() {
  const started: Array<{ path: string; finish: () => void; fail: (e: Error) => void }> = [];
  const sync = (path: string) => new Promise<void>((resolve, reject) => started.push({ path, finish: resolve, fail: reject }));
  return { started, sync };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('WAL durability (group commit of the syncs)', () => {
  it('starts a sync for the first caller, and one more for every caller that came while it ran', async () => {
    const { started, sync } = controlledSync();
    const durable = walDurability('/db-wal', sync);
    const done: string[] = [];
    const first = durable().then(() => done.push('first'));
    const second = durable().then(() => done.push('second'));
    const third = durable().then(() => done.push('third'));
    await settle();
    assert.equal(started.length, 1, 'one sync under way');
    started[0]!.finish();
    await first;
    await settle();
    assert.deepEqual(done, ['first'], 'the later callers may have committed after the first sync began: they wait for the next');
    assert.equal(started.length, 2, 'the two later callers share one sync');
    started[1]!.finish();
    await Promise.all([second, third]);
    assert.deepEqual(done, ['first', 'second', 'third']);
    assert.deepEqual(started.map((s) => s.path), ['/db-wal', '/db-wal']);
    // Idle again: the next caller starts its own.
    const fourth = durable();
    await settle();
    assert.equal(started.length, 3);
    started[2]!.finish();
    await fourth;
  });

  it('fails the callers of a sync that failed, and the next caller tries again', async () => {
    const { started, sync } = controlledSync();
    const durable = walDurability('/db-wal', sync);
    const first = durable();
    const waiting = durable();
    await settle();
    started[0]!.fail(new Error('EIO'));
    await assert.rejects(first, /EIO/);
    await settle();
    assert.equal(started.length, 2, 'the queued caller still gets a sync of its own');
    started[1]!.finish();
    await waiting;
  });

  it('syncs the WAL of a real SQLite database, and has nothing to do before there is one', async (t) => {
    const { dir, cleanup } = await makeTempDir();
    t.after(cleanup);
    await walDurability(join(dir, 'absent.db-wal'))();
    const handle = openDatabase(null, dir);
    t.after(() => handle.close());
    await handle.db.schema.createTable('t').addColumn('x', 'integer').execute();
    await handle.db.insertInto('t' as never).values({ x: 1 } as never).execute();
    assert.ok(existsSync(join(dir, 'tollgate.db-wal')), 'the commit is in the WAL');
    await handle.durable();
  });

  it('answers a change only once it is durable; reads and refusals do not wait', async (t) => {
    const app = await startTestApp();
    t.after(() => app.close());
    const token = await app.tokenFor('admin');
    let calls = 0;
    let release: () => void = () => undefined;
    app.ctx.durable = () => {
      calls += 1;
      return new Promise((resolve) => (release = resolve));
    };
    let answered = false;
    const created = app.app.inject({
      method: 'POST', url: '/auth/users', headers: { authorization: `Bearer ${token}` },
      payload: { username: 'durable-user', password: 'Str0ng-Passw0rd!', role: 'reader' },
    }).then((res) => {
      answered = true;
      return res;
    });
    for (let i = 0; i < 200 && calls === 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(calls, 1, 'the answer waits for the database to be durable');
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(answered, false, 'not answered before');
    release();
    assert.equal((await created).statusCode, 201, (await created).body);
    const read = await app.app.inject({ method: 'GET', url: '/auth/users', headers: { authorization: `Bearer ${token}` } });
    assert.equal(read.statusCode, 200);
    const refused = await app.app.inject({ method: 'POST', url: '/auth/users', headers: { authorization: `Bearer ${token}` }, payload: { username: '' } });
    assert.ok(refused.statusCode >= 400);
    assert.equal(calls, 1, 'a read and a refusal did not wait');
  });
});
