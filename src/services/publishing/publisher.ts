import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Db, DbDialect } from '../../adapters/db/index.js';
import type { Metrics } from '../../adapters/metrics/metrics.js';
import type { Signer } from '../../adapters/signing/signer.js';
import { findDistribution, INDEXED_STATUSES, type PackageFormat } from '../../domain/distributions.js';
import { DomainError } from '../../domain/errors.js';
import { isoUtc } from '../time.js';
import type { IndexWriter } from './index-writer.js';

interface DistState {
  current: Promise<void> | null;
  next: Promise<void> | null;
}

/**
 * Regenerates and signs distribution indexes. Runs are serialised per distribution and coalesced:
 * a request made while a run is going joins the one run that starts after it, which reads the
 * database afresh and so includes every change committed before the request. The run records the
 * distribution's generation it published, so start-up can finish what a crash interrupted.
 */
export class Publisher {
  private readonly states = new Map<string, DistState>();

  constructor(
    private readonly db: Db,
    private readonly dialect: DbDialect,
    private readonly writers: Record<PackageFormat, IndexWriter>,
    private readonly signer: () => Promise<Signer>,
    private readonly metrics: Metrics,
    private readonly log: Logger,
  ) {}

  private stateOf(codename: string): DistState {
    let state = this.states.get(codename);
    if (!state) this.states.set(codename, (state = { current: null, next: null }));
    return state;
  }

  /** Resolves once an index containing every change committed before this call is published. */
  request(codename: string): Promise<void> {
    const state = this.stateOf(codename);
    if (state.next) return state.next;
    const start = () => {
      const run = this.run(codename).finally(() => {
        if (state.current === run) state.current = null;
      });
      state.current = run;
      return run;
    };
    if (!state.current) return start();
    const next = state.current
      .catch(() => undefined)
      .then(() => {
        state.next = null;
        return start();
      });
    state.next = next;
    return next;
  }

  /** Waits for every run under way (shutdown, tests). */
  async idle(): Promise<void> {
    for (const state of this.states.values()) {
      await state.next?.catch(() => undefined);
      await state.current?.catch(() => undefined);
    }
  }

  private async run(codename: string): Promise<void> {
    const dist = findDistribution(codename);
    if (!dist) throw new DomainError('not_found', 'unknown_distribution', `Unknown distribution ${codename}`);
    const started = process.hrtime.bigint();
    const signer = await this.signer();
    const work = async (db: Db) => {
      const row = await db.selectFrom('distributions').select('generation').where('codename', '=', codename).executeTakeFirstOrThrow();
      const generation = Number(row.generation);
      const entries = await db
        .selectFrom('packages')
        .select('index_entry')
        .where('distribution', '=', codename)
        .where('status', 'in', INDEXED_STATUSES)
        .orderBy('seq')
        .orderBy('id')
        .execute();
      await this.writers[dist.format].write(dist, entries.map((e) => e.index_entry), signer);
      await db
        .updateTable('distributions')
        .set({ published_generation: generation, published_at: isoUtc() })
        .where('codename', '=', codename)
        .where('published_generation', '<', generation)
        .execute();
    };
    if (this.dialect === 'postgres') {
      // Replicas share the database: one publishes a distribution at a time.
      await this.db.transaction().execute(async (trx) => {
        await sql`select pg_advisory_xact_lock(hashtext(${`tollgate:publish:${codename}`}))`.execute(trx);
        await work(trx);
      });
    } else {
      await work(this.db);
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    this.metrics.publishDuration.observe({ format: dist.format }, seconds);
    this.log.debug({ codename, seconds }, 'index published');
  }

  /** Distributions whose last change was not published (a crash, a failed run). */
  async stale(): Promise<string[]> {
    const rows = await this.db
      .selectFrom('distributions')
      .select(['codename', 'generation', 'published_generation'])
      .execute();
    return rows.filter((r) => Number(r.published_generation) < Number(r.generation)).map((r) => r.codename);
  }
}
