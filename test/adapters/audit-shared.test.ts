/**
 * Two replicas writing one audit folder: with the shared append lock (a PostgreSQL advisory lock
 * on PostgreSQL, an in-process mutex standing in for it on SQLite) they extend one chain in turn;
 * without it the chain forks, which is what the lock is for.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AuditLog, type AuditEntry, type AuditIndex, type SharedAppendLock } from '../../src/adapters/audit/audit-log.js';
import { withAuditAppendLock } from '../../src/adapters/db/audit.table.js';
import { backends, startTestApp, type TestApp } from '../helpers/app.js';
import { makeTempDir } from '../helpers/tmp.js';

function memoryIndex(): AuditIndex & { rows: AuditEntry[] } {
  const rows: AuditEntry[] = [];
  return { rows, insert: async (entries) => void rows.push(...entries), maxSeq: async () => Math.max(0, ...rows.map((r) => r.seq)) };
}

function mutex(): SharedAppendLock {
  let tail: Promise<unknown> = Promise.resolve();
  return {
    run<T>(append: () => Promise<T>): Promise<T> {
      const run = tail.then(append);
      tail = run.catch(() => undefined);
      return run;
    },
  };
}

const entries = (log: AuditLog, n: number, who: string) =>
  Array.from({ length: n }, (_, i) => log.record({ action: 'UPLOAD', user: who, result: 'SUCCESS', package: `${who}-${i}`, version: '1.0', detail: `from ${who}` }));

for (const backend of backends()) {
  describe(`audit chain shared by two replicas (${backend})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ backend });
    });
    after(async () => t.close());

    it('with the shared lock, interleaved appends from both make one chain that verifies', async () => {
      const { dir, cleanup } = await makeTempDir('tollgate-audit-shared-');
      const shared: SharedAppendLock = backend === 'postgres' ? { run: (append) => withAuditAppendLock(t.ctx.db, append) } : mutex();
      const index = memoryIndex();
      const a = await AuditLog.open(dir, index, undefined, shared);
      const b = await AuditLog.open(dir, index, undefined, shared);
      const written = await Promise.all([...entries(a, 60, 'a'), ...entries(b, 60, 'b')]);
      assert.deepEqual(written.map((e) => e.seq).sort((x, y) => x - y), Array.from({ length: 120 }, (_, i) => i + 1));
      assert.deepEqual(await a.verify(), { ok: true, entries: 120, files: 1, first_broken: null });
      assert.equal(new Set(index.rows.map((r) => r.seq)).size, 120, 'every entry indexed once');
      // A replica started later continues the same chain.
      const c = await AuditLog.open(dir, memoryIndex(), undefined, shared);
      assert.equal((await c.record({ action: 'LOGIN', user: 'c', result: 'SUCCESS' })).seq, 121);
      assert.equal((await b.verify()).ok, true);
      await cleanup();
    });

    it('without it, the two chains fork (the defect the lock prevents)', async () => {
      const { dir, cleanup } = await makeTempDir('tollgate-audit-fork-');
      const a = await AuditLog.open(dir, memoryIndex());
      const b = await AuditLog.open(dir, memoryIndex());
      await Promise.all([...entries(a, 5, 'a'), ...entries(b, 5, 'b')]);
      const report = await a.verify();
      assert.equal(report.ok, false);
      assert.match(report.first_broken!.reason, /sequence gap|prev_hash/);
      await cleanup();
    });
  });
}
