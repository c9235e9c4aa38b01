import type { Logger } from 'pino';
import {
  distributionPublishState,
  filesListedBetween,
  highestIndexedSeq,
  indexEntriesAfter,
  indexEntriesPage,
  type IndexEntryRow,
  listDistributions,
  lockDistributionPublishing,
  markDistributionPublished,
} from '../../adapters/db/distributions.table.js';
import type { Db, DbDialect } from '../../adapters/db/index.js';
import type { Metrics } from '../../adapters/metrics/metrics.js';
import type { Signer } from '../../adapters/signing/signer.js';
import { findDistribution, type PackageFormat } from '../../domain/distributions.js';
import { DomainError } from '../../domain/errors.js';
import { isoUtc } from '../../domain/time.js';
import type { IndexEntry, IndexWriter } from '../../adapters/storage/interfaces.js';

interface Fingerprint {
  count: number;
  sum: number;
  max: number;
  mod: number;
}

const sameFingerprint = (a: Fingerprint, b: Fingerprint) => a.count === b.count && a.sum === b.sum && a.max === b.max && a.mod === b.mod;
const emptyFingerprint = (): Fingerprint => ({ count: 0, sum: 0, max: 0, mod: 0 });

/** Adds one indexed row to a fingerprint, as the distribution's totals (distributionPublishState) count it. */
function addSeq(f: Fingerprint, seq: number): Fingerprint {
  f.count += 1;
  f.sum += seq;
  f.max = Math.max(f.max, seq);
  f.mod += seq % 65521;
  return f;
}

/**
 * Rows per page of a full publish. Pages are index range reads (migration 0014), so small ones
 * cost little. The writers hold a page or two in flight each; past ~250 rows that outlives two
 * young-generation collections and V8 promotes the rows to the old generation, which no full
 * collection clears before the publish ends (bundled service, 50,000 packages, one architecture
 * and component: peak RSS 140 MiB at 200 or 250 rows, 160 at 500, 234 at 2,000, the full rebuild's
 * time the same from 100 to 500; with 4 architectures × 2 components the peak is the same at 250
 * and 500 rows and the full rebuild ~12 % longer at 250, each page split over eight indexes).
 */
const BATCH = 250;

/**
 * A distribution's index entries in index order, read in keyset-paginated batches. Each batch is
 * its own query, so rows committed meanwhile may be included: `written` fingerprints exactly the
 * rows yielded, which is what the index then holds.
 */
/**
 * A row as the index writer takes it. Its file list goes to Contents only once it has arrived by
 * the `generation` being published: a list stored later (its `listed_generation` higher) is added
 * by the next publish, as a contents-only entry, never twice.
 */
const entryOf = (r: IndexEntryRow, generation: number): IndexEntry => ({
  component: r.component,
  arch: r.arch,
  text: r.index_entry,
  ...(r.files === undefined || r.listed_generation === null || Number(r.listed_generation ?? 0) > generation ? {} : { contents: { name: r.name, files: r.files } }),
});

async function* indexedEntries(db: Db, codename: string, written: Fingerprint, withFiles: boolean, generation: number): AsyncGenerator<IndexEntry[]> {
  let after: { seq: number; id: string } | null = null;
  for (;;) {
    const rows = await indexEntriesPage(db, codename, after, BATCH, withFiles, generation);
    if (rows.length === 0) return;
    for (const r of rows) addSeq(written, Number(r.seq));
    yield rows.map((r) => entryOf(r, generation));
    const last = rows.at(-1)!;
    after = { seq: Number(last.seq), id: last.id };
    if (rows.length < BATCH) return;
  }
}

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
  private readonly retry: { firstMs: number; maxMs: number; delayMs: number; timer: NodeJS.Timeout | null; stopped: boolean };

  constructor(
    private readonly db: Db,
    private readonly dialect: DbDialect,
    private readonly writers: Record<PackageFormat, IndexWriter>,
    private readonly signer: () => Promise<Signer>,
    private readonly metrics: Metrics,
    private readonly log: Logger,
    retry: { firstMs: number; maxMs: number } = { firstMs: 1000, maxMs: 30_000 },
  ) {
    this.retry = { ...retry, delayMs: retry.firstMs, timer: null, stopped: false };
  }

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
      const run = this.run(codename)
        .catch((error: unknown) => {
          this.retryLater();
          throw error;
        })
        .finally(() => {
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

  /** Makes the next publish of the distribution a full rewrite (benchmarks, repairs). */
  forget(codename: string): void {
    this.published.delete(codename);
    this.writers[findDistribution(codename)?.format ?? 'deb'].forget?.(codename);
  }

  /**
   * A failed run (the database or disk gone for a moment) leaves its distribution stale, and the
   * change that asked for it may never ask again: an upload answered 503 whose package was stored
   * is answered 200 when retried, without a publish. So every stale distribution is published
   * again after a pause that doubles while runs keep failing.
   */
  private retryLater(): void {
    if (this.retry.timer || this.retry.stopped) return;
    this.retry.timer = setTimeout(() => void this.republishStale(), this.retry.delayMs);
    this.retry.timer.unref();
    this.retry.delayMs = Math.min(this.retry.delayMs * 2, this.retry.maxMs);
  }

  private async republishStale(): Promise<void> {
    this.retry.timer = null;
    try {
      const stale = await this.stale();
      await Promise.all(stale.map((codename) => this.request(codename)));
      this.retry.delayMs = this.retry.firstMs;
    } catch (error) {
      this.log.warn({ err: error, retryInMs: this.retry.delayMs }, 'publishing a stale index failed; trying again');
      // A failed run has already scheduled the next try; a failed look-up (stale()) has not.
      this.retryLater();
    }
  }

  /** No more retries and no more background work in the writers (shutdown); runs under way finish. */
  stop(): void {
    for (const writer of Object.values(this.writers)) writer.stop?.();
    this.retry.stopped = true;
    if (this.retry.timer) clearTimeout(this.retry.timer);
    this.retry.timer = null;
  }

  /** Waits for every run under way (shutdown, tests). */
  async idle(): Promise<void> {
    for (const [codename, state] of this.states) {
      await state.next?.catch(() => undefined);
      await state.current?.catch(() => undefined);
      await Promise.all(Object.values(this.writers).map((w) => w.settled?.(codename)));
    }
    await Promise.all(Object.values(this.writers).map((w) => w.idle?.()));
  }

  /**
   * What this process last published of a distribution: enough to tell whether the index has
   * only grown since (then the writer appends) or changed otherwise (then it is rewritten).
   */
  private readonly published = new Map<string, { generation: number; fingerprint: Fingerprint }>();

  private async run(codename: string): Promise<void> {
    const dist = findDistribution(codename);
    if (!dist) throw new DomainError('not_found', 'unknown_distribution', `Unknown distribution ${codename}`);
    const started = process.hrtime.bigint();
    const signer = await this.signer();
    const writer = this.writers[dist.format];
    // APT indexes list each package's files in Contents; RPM's filelists are in its stored entry.
    const withFiles = dist.format === 'deb';
    let mode: 'append' | 'full' = 'full';
    const work = async (db: Db) => {
      // Everything this run reads stops at `generation` (rows with a higher `seq` committed since
      // are the next run's): then the generation it records as published is exactly what it
      // wrote. It once read on past it, recorded less, and the next run, finding the generation
      // ahead but nothing new, rewrote the whole index (8 of a 2,000-upload burst's 14 full
      // writes, 110 ms each, every upload waiting meanwhile).
      const state = await distributionPublishState(db, codename);
      const generation = state.generation;
      const last = this.published.get(codename);
      // What the index holds once this run is done. Under READ COMMITTED each query sees the
      // commits made before it, so this is taken from the rows actually written, never from a
      // separate count that a concurrent upload could have overtaken (that double-appended it).
      let written: Fingerprint | null = null;
      // Only what this process published itself can be extended, and only if nobody else published since.
      if (last && writer.append && last.generation === state.published) {
        const fresh = await indexEntriesAfter(db, codename, last.fingerprint.max, generation, withFiles);
        const expected = fresh.reduce((f, r) => addSeq(f, Number(r.seq)), { ...last.fingerprint });
        // Equal only if nothing but these additions happened since the last run.
        const current = { count: state.count, sum: state.sum, mod: state.mod, max: await highestIndexedSeq(db, codename, generation) };
        // Packages already listed whose file list was read since: their Contents lines only.
        const listed = withFiles ? await filesListedBetween(db, codename, last.generation, generation, last.fingerprint.max) : [];
        const entries = [...fresh.map((r) => entryOf(r, generation)), ...listed.map((r) => ({ ...entryOf(r, generation), contentsOnly: true }))];
        if (entries.length > 0 && sameFingerprint(expected, current) && (await writer.append(dist, entries, signer))) {
          written = expected;
          mode = 'append';
        }
      }
      if (!written) {
        written = emptyFingerprint();
        if (writer.writeBatches) {
          await writer.writeBatches(dist, indexedEntries(db, codename, written, withFiles, generation), signer);
        } else {
          const entries: IndexEntry[] = [];
          for await (const batch of indexedEntries(db, codename, written, withFiles, generation)) entries.push(...batch);
          await writer.write(dist, entries, signer);
        }
      }
      await markDistributionPublished(db, codename, generation, isoUtc());
      this.published.set(codename, { generation, fingerprint: written });
    };
    try {
      if (this.dialect === 'postgres') {
        // Replicas share the database: one publishes a distribution at a time.
        await this.db.transaction().execute(async (trx) => {
          await lockDistributionPublishing(trx, codename);
          await work(trx);
          // Another replica's publish must not prune by-hash files alongside this one's clean-up.
          await writer.settled?.(codename);
        });
      } else {
        await work(this.db);
      }
    } catch (error) {
      this.published.delete(codename);
      writer.forget?.(codename);
      throw error;
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    this.metrics.publishDuration.observe({ format: dist.format, mode }, seconds);
    this.log.debug({ codename, seconds, mode }, 'index published');
  }

  /** Distributions whose last change was not published (a crash, a failed run). */
  async stale(): Promise<string[]> {
    const rows = await listDistributions(this.db);
    return rows.filter((r) => Number(r.published_generation) < Number(r.generation)).map((r) => r.codename);
  }
}
