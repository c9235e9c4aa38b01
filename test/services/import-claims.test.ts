/**
 * Claims on upstream files, as two replicas sharing the database hold them: one holder at a
 * time, a lapsed claim taken over, and two runs that each need the other's file both finish.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { RunClaims } from '../../src/services/imports/claims.js';
import { backends, startTestApp, type TestApp } from '../helpers/app.js';

const within = <T>(ms: number, work: Promise<T>): Promise<T> =>
  Promise.race([work, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`not done within ${ms} ms`)), ms).unref())]);

for (const backend of backends()) {
  describe(`import claims (${backend})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ backend });
    });
    after(async () => t.close());

    it('one holder at a time; the other waits and gets it when released', async () => {
      const a = new RunClaims(t.ctx.db);
      const b = new RunClaims(t.ctx.db);
      assert.equal(await a.tryTake('bookworm x'), true);
      assert.equal(await a.tryTake('bookworm x'), true, 'a holder may ask again');
      assert.equal(await b.tryTake('bookworm x'), false);
      let got = false;
      const waiting = b.take('bookworm x').then(() => (got = true));
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(got, false);
      await a.release('bookworm x');
      await within(5000, waiting);
      assert.equal(b.holds('bookworm x'), true);
      await b.releaseAll();
    });

    it('a claim whose holder died lapses', async () => {
      await t.ctx.db.insertInto('import_claims').values({ key: 'bookworm dead', holder: 'gone:1:0', expires_at: '2026-01-01T00:00:00+00:00' }).execute();
      const c = new RunClaims(t.ctx.db);
      assert.equal(await c.tryTake('bookworm dead'), true);
      await c.releaseAll();
    });

    it('a run waiting a moment keeps its other claims (what it downloads ahead is not downloaded twice)', async () => {
      const a = new RunClaims(t.ctx.db);
      const b = new RunClaims(t.ctx.db);
      const c = new RunClaims(t.ctx.db);
      assert.equal(await a.tryTake('bookworm x'), true);
      assert.equal(await b.tryTake('bookworm y'), true);
      const waiting = b.take('bookworm x');
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(await c.tryTake('bookworm y'), false, 'y is still held while b waits for x');
      await a.release('bookworm x');
      await within(5000, waiting);
      assert.equal(b.holds('bookworm x') && b.holds('bookworm y'), true);
      await b.releaseAll();
    });

    it('two runs that each hold what the other needs both finish (a run waiting for long gives up what it holds)', async () => {
      const a = new RunClaims(t.ctx.db);
      const b = new RunClaims(t.ctx.db);
      assert.equal(await a.tryTake('bookworm x'), true);
      assert.equal(await b.tryTake('bookworm y'), true);
      // a needs y, b needs x: whoever waits first gives up what it holds.
      await within(10_000, Promise.all([a.take('bookworm y'), b.take('bookworm x')].map((p, i) => p.then(() => (i === 0 ? a : b).releaseAll()))));
      assert.equal((await t.ctx.db.selectFrom('import_claims').select('key').execute()).length, 0);
    });
  });
}
