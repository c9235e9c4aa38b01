/**
 * Daily jobs on croner. A one-minute tick compares each job's daily time, read from its
 * `schedule_*` setting (UTC, HH:MM) at every tick so a PATCH applies at once, with the job's last
 * run recorded in `job_runs`: a job runs when its latest daily slot is later than its last run. The claim is one conditional UPDATE, so with several
 * replicas on one database exactly one runs each slot, and a restart neither repeats a run nor
 * loses one that was missed while the service was down. Jobs marked `runAtStart` also run at
 * start-up. The Community edition runs only the jobs not marked `enterpriseOnly`.
 */
import { Cron } from 'croner';
import type { Logger } from 'pino';
import type { Db } from '../adapters/db/index.js';
import { claimJobSlot, recordJobResult } from '../adapters/db/jobs.table.js';
import type { SettingsSnapshot } from './settings.js';
import { isoUtc } from '../domain/time.js';

/** Settings keys holding a daily time. */
export type ScheduleSetting = 'schedule_security_sync' | 'schedule_retention' | 'schedule_sla_check';

/** One scheduled job. */
export interface JobDefinition {
  name: string;
  timeSetting: ScheduleSetting;
  enterpriseOnly: boolean;
  /** Also run once at start-up whatever the last run, for work that must not wait for the next slot after a restart (expiry). */
  runAtStart?: boolean;
  /** Does the work; the returned text is recorded as the last result. */
  run(): Promise<string>;
}

interface SettingsSource {
  all(): Promise<SettingsSnapshot>;
}

/** The latest daily slot at `time` (HH:MM UTC) not after `now`. */
export function latestSlot(now: Date, time: string): Date {
  const [h, m] = time.split(':').map(Number) as [number, number];
  const slot = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), h, m, 0, 0));
  if (slot.getTime() > now.getTime()) slot.setUTCDate(slot.getUTCDate() - 1);
  return slot;
}

/** The next daily slot at `time` (HH:MM UTC) after `now`. */
export function nextSlot(now: Date, time: string): Date {
  const slot = latestSlot(now, time);
  slot.setUTCDate(slot.getUTCDate() + 1);
  return slot;
}

export class JobScheduler {
  private readonly jobs: JobDefinition[] = [];
  private readonly running = new Map<string, Promise<void>>();
  private cron: Cron | null = null;

  constructor(
    private readonly db: Db,
    private readonly settings: SettingsSource,
    private readonly log: Logger,
    private readonly edition: 'community' | 'enterprise',
  ) {}

  register(job: JobDefinition): void {
    if (this.jobs.some((j) => j.name === job.name)) throw new Error(`job ${job.name} registered twice`);
    this.jobs.push(job);
  }

  /** The jobs this edition runs. */
  active(): JobDefinition[] {
    return this.jobs.filter((j) => !j.enterpriseOnly || this.edition === 'enterprise');
  }

  /** Start-up runs, then the one-minute tick. */
  start(): void {
    if (this.cron) return;
    void (async () => {
      for (const job of this.active().filter((j) => j.runAtStart)) await this.execute(job, 'start-up');
      await this.tick();
    })().catch((err: unknown) => this.log.error({ err }, 'scheduler start-up tick failed'));
    this.cron = new Cron('* * * * *', { timezone: 'UTC', protect: true, catch: (err) => this.log.error({ err }, 'scheduler tick failed') }, () => this.tick());
  }

  /** Stops the tick and waits for jobs under way. */
  async stop(): Promise<void> {
    this.cron?.stop();
    this.cron = null;
    await Promise.allSettled([...this.running.values()]);
  }

  /** Runs every job whose latest slot has not been run yet (and that this replica claims). */
  async tick(now = new Date()): Promise<void> {
    const settings = await this.settings.all();
    for (const job of this.active()) {
      const slot = latestSlot(now, settings[job.timeSetting]);
      if (await this.claim(job.name, slot, now)) await this.execute(job, 'schedule');
    }
  }

  /** Runs one job now (tests, admin actions), recording the run. */
  async runNow(name: string): Promise<void> {
    const job = this.jobs.find((j) => j.name === name);
    if (!job) throw new Error(`no job ${name}`);
    await this.execute(job, 'manual');
  }

  /** When each active job runs next (UTC ISO). */
  async nextRuns(now = new Date()): Promise<Record<string, string>> {
    const settings = await this.settings.all();
    return Object.fromEntries(this.active().map((j) => [j.name, isoUtc(nextSlot(now, settings[j.timeSetting]))]));
  }

  private claim(name: string, slot: Date, now: Date): Promise<boolean> {
    return claimJobSlot(this.db, name, isoUtc(slot), isoUtc(now));
  }

  private async execute(job: JobDefinition, trigger: string): Promise<void> {
    const existing = this.running.get(job.name);
    if (existing) return existing;
    const task = (async () => {
      const started = Date.now();
      let result: string;
      try {
        result = await job.run();
        this.log.info({ job: job.name, trigger, ms: Date.now() - started, result }, 'job finished');
      } catch (err) {
        result = `failed: ${err instanceof Error ? err.message : String(err)}`;
        this.log.error({ err, job: job.name, trigger }, 'job failed');
      }
      const at = isoUtc();
      await recordJobResult(this.db, job.name, at, result.slice(0, 1000)).catch((err: unknown) => this.log.warn({ err, job: job.name }, 'could not record the job run'));
    })().finally(() => this.running.delete(job.name));
    this.running.set(job.name, task);
    return task;
  }
}
