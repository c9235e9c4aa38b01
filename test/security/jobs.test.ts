/**
 * The daily-job scheduler: slot arithmetic, one run per daily slot recorded in job_runs (so a
 * restart neither repeats nor loses a run), one replica per slot, the setting read at each tick,
 * and the edition rule (Community runs only the expiry job). Both database backends.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { backends, startTestApp, type TestApp } from '../helpers/app.js';
import { JobScheduler, latestSlot, nextSlot } from '../../src/services/jobs.js';
import { patchSettings } from './support.js';
import { IMPORT_SYNC_JOB } from '../../src/services/imports/index.js';

describe('job slots', () => {
  it('finds the latest and next daily slot in UTC', () => {
    const now = new Date('2026-03-10T07:59:00Z');
    assert.equal(latestSlot(now, '08:00').toISOString(), '2026-03-09T08:00:00.000Z');
    assert.equal(latestSlot(now, '03:00').toISOString(), '2026-03-10T03:00:00.000Z');
    assert.equal(nextSlot(now, '08:00').toISOString(), '2026-03-10T08:00:00.000Z');
    assert.equal(latestSlot(new Date('2026-03-10T08:00:00Z'), '08:00').toISOString(), '2026-03-10T08:00:00.000Z');
  });
});

for (const backend of backends()) {
  describe(`job scheduler (${backend})`, () => {
    let app: TestApp;
    const log = pino({ level: 'silent' });

    before(async () => {
      app = await startTestApp({ backend });
    });
    after(async () => {
      await app.close();
    });

    it('runs a job once per daily slot, across replicas and restarts', async () => {
      let runs = 0;
      const job = { name: 'test_job', timeSetting: 'schedule_sla_check' as const, enterpriseOnly: true, run: async () => `run ${++runs}` };
      const a = new JobScheduler(app.ctx.db, app.ctx.settings, log, 'enterprise');
      const b = new JobScheduler(app.ctx.db, app.ctx.settings, log, 'enterprise');
      a.register(job);
      b.register(job);
      const t0 = new Date('2030-01-01T09:00:00Z');
      await Promise.all([a.tick(t0), b.tick(t0)]);
      assert.equal(runs, 1, 'first tick: the missed slot runs once, on one replica');
      await a.tick(new Date('2030-01-01T12:00:00Z'));
      await b.tick(new Date('2030-01-02T07:59:00Z'));
      assert.equal(runs, 1, 'no new slot yet');
      await b.tick(new Date('2030-01-02T08:00:30Z'));
      assert.equal(runs, 2, 'the 08:00 slot of the next day');
      const restarted = new JobScheduler(app.ctx.db, app.ctx.settings, log, 'enterprise');
      restarted.register(job);
      await restarted.tick(new Date('2030-01-02T08:05:00Z'));
      assert.equal(runs, 2, 'a restart does not repeat the run');

      await patchSettings(app, await app.tokenFor('admin'), { schedule_sla_check: '10:00' });
      await restarted.tick(new Date('2030-01-02T10:01:00Z'));
      assert.equal(runs, 3, 'a changed time applies at the next tick');
      const row = await app.ctx.db.selectFrom('job_runs').selectAll().where('job', '=', 'test_job').executeTakeFirstOrThrow();
      assert.equal(row.last_result, 'run 3');
      assert.deepEqual(Object.keys(await restarted.nextRuns(new Date('2030-01-02T10:01:00Z'))), ['test_job']);
      assert.equal((await restarted.nextRuns(new Date('2030-01-02T10:01:00Z'))).test_job, '2030-01-03T10:00:00.000+00:00');
    });

    it('registers the security, retention and import sync jobs; the Community edition runs only expiry', async () => {
      assert.deepEqual(app.ctx.jobs.active().map((j) => j.name).sort(), ['audit_retention', IMPORT_SYNC_JOB, 'security_expiry', 'security_sla_warnings', 'security_sync'].sort());
      const community = new JobScheduler(app.ctx.db, app.ctx.settings, log, 'community');
      for (const j of app.ctx.jobs.active()) community.register(j);
      assert.deepEqual(community.active().map((j) => j.name).sort(), ['security_expiry']);
      await app.ctx.jobs.runNow('security_sync');
      const row = await app.ctx.db.selectFrom('job_runs').selectAll().where('job', '=', 'security_sync').executeTakeFirstOrThrow();
      assert.equal(row.last_result, 'no feeds configured');
    });
  });
}
