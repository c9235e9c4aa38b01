/**
 * Reads the payload of .deb packages admitted without it (DEB_PAYLOAD_CHECK=background), after
 * their upload was answered: decompressing data.tar is most of an upload's cost (xz decodes about
 * 20 MB/s per core; hashing, checking the control file and storing run at hundreds), so uploads
 * are published from their control file and this catches up behind them: one package at a time
 * while uploads are under way, one per core once they are not, decoding off the event loop (by the
 * system's xz where it runs, else on the thread pool) so requests keep it.
 *
 * What it reads: the payload's file list, for the Contents indexes (the next publish adds the
 * package's lines), and the payload's well-formedness, which the format step would otherwise
 * have checked: a package whose data.tar turns out malformed (a broken archive, an unsafe path,
 * a decompression bomb) is quarantined, taking it out of the index, with the reason.
 */
import { availableParallelism } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { recordFileLists, unlistedPackages, type UnlistedPackage } from '../../adapters/db/packages.table.js';
import type { Db } from '../../adapters/db/index.js';
import type { PackageFiles } from '../../adapters/storage/interfaces.js';
import { withSystemXz } from '../../adapters/storage/xz.js';
import { listDebPayload, type DebFileEntry } from '../../domain/deb/reader.js';
import { DecoderFailure, PackageFormatError } from '../../domain/errors.js';
import { fileEntry } from '../formats/deb.js';

/** Packages read per look-up of what is pending. */
const BATCH = 16;
/**
 * While uploads are under way a read begins only this long after the previous one began: uploads
 * get the CPU (two cores decode xz at ~40 MB/s; they take in packages faster than that), and
 * Contents still progresses in a stream of uploads that never pauses. (A read that takes longer
 * is followed by the next at once; counting from its end was within the spread of
 * bench/real-packages, 2026-11-29.)
 */
const YIELD_MS = 2000;
const POLL_MS = 50;
/**
 * Payloads read side by side while no upload is under way: one per core (the decoding runs in an
 * xz process or on the thread pool, the tar walk on the event loop), at most four. One reader left a core idle after a
 * burst: 400 real packages (900 MB) were uploaded in 17 s and listed in Contents ~115 s later.
 */
const READERS = Math.max(1, Math.min(4, availableParallelism()));
/**
 * The readers beyond the first begin only once no upload has been seen for this long: between one
 * client's answer and its next upload none is under way for a moment, and a read begun then
 * would hold a core for seconds of a real package's xz.
 */
const QUIET_MS = 500;
/**
 * With no uploads under way, the lists read within this long of each other are stored together:
 * one transaction and one generation for them, and so one publish (after a burst of 2,000 tiny
 * packages, one each made 2,000 commits and ~600 appends of Contents lines).
 */
const GATHER_MS = 250;
/**
 * After a failed pass (the disk full, the database gone for a moment) it looks again after a
 * pause that doubles while passes keep failing: nothing else would, until the next upload.
 */
const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 30_000;

export interface DeferredFileListsDeps {
  db: Db;
  files: PackageFiles;
  /** Asks for a publish of the distribution (coalesced; the Contents lines go out with it). */
  publish: (codename: string) => Promise<void>;
  /** True while uploads are being processed: reading waits (up to YIELD_MS) for them. */
  busy: () => boolean;
  log: Logger;
  /** How long read lists may wait to be stored together (default GATHER_MS; tests). */
  gatherMs?: number;
  /** Payloads read side by side when no upload is under way (default READERS; tests). */
  readers?: number;
  /** Reads a stored .deb's file list (default listDebPayload, xz decoded by the system's xz when it runs; tests watch the reads). */
  listPayload?: (path: string) => Promise<DebFileEntry[]>;
}

/** A payload's file list, its xz decoded by the system's xz where it runs (found at the first read). */
function listWithSystemXz(path: string): Promise<DebFileEntry[]> {
  return listDebPayload(path, withSystemXz({}));
}

/** Takes a package whose payload is malformed out of its distribution (the security service's quarantine). */
export type MalformedPayloadHandler = (pkg: UnlistedPackage, reason: string) => Promise<void>;

export class DeferredFileLists {
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private malformed: MalformedPayloadHandler | null = null;
  private retry: { delayMs: number; timer: NodeJS.Timeout | null } = { delayMs: RETRY_FIRST_MS, timer: null };

  constructor(private readonly deps: DeferredFileListsDeps) {}

  /** Set once the security service exists (it is built after the repository). */
  onMalformed(handler: MalformedPayloadHandler): void {
    this.malformed = handler;
  }

  /** Reads whatever is pending; called while reading, it looks again once done. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.retry.timer) clearTimeout(this.retry.timer);
    this.retry.timer = null;
    this.running = this.drain()
      .then(() => {
        this.retry.delayMs = RETRY_FIRST_MS;
      })
      .catch((err: unknown) => {
        this.deps.log.error({ err, retryInMs: this.retry.delayMs }, 'reading deferred file lists failed; trying again');
        this.retryLater();
      })
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private retryLater(): void {
    if (this.stopped || this.retry.timer) return;
    this.retry.timer = setTimeout(() => {
      this.retry.timer = null;
      this.kick();
    }, this.retry.delayMs);
    this.retry.timer.unref();
    this.retry.delayMs = Math.min(this.retry.delayMs * 2, RETRY_MAX_MS);
  }

  /** Resolves once nothing is pending or being read (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Stops after the package being read. */
  stop(): void {
    this.stopped = true;
    if (this.retry.timer) clearTimeout(this.retry.timer);
    this.retry.timer = null;
  }

  /**
   * Reads what is pending and stores the lists (together when read close together, GATHER_MS),
   * asking for a publish after each store without waiting for it: the publishes coalesce, so the
   * packages read while one runs go out together in the next (one publish per package held
   * Contents to the publisher's pace, ~40–65 packages/s after a burst). A batch's publishes are
   * awaited before the next batch is looked up. Lists read but not stored when a stop comes are
   * read again at the next start.
   *
   * Readers share the batch. While uploads are under way only the first reads, one package per
   * YIELD_MS; the others wait until none has been seen for QUIET_MS.
   */
  private async drain(): Promise<void> {
    const gatherMs = this.deps.gatherMs ?? GATHER_MS;
    const readers = Math.max(1, this.deps.readers ?? READERS);
    // A pass begins when an upload is stored: as if one had just been seen.
    this.busySeenAt = Date.now();
    while (!this.stopped) {
      const pending = await unlistedPackages(this.deps.db, BATCH * readers);
      if (pending.length === 0) return;
      const publishes: Array<Promise<void>> = [];
      let unstored: Array<{ pkg: UnlistedPackage; files: string }> = [];
      let firstReadAt = 0;
      const storeUnstored = async () => {
        if (unstored.length === 0) return;
        const lists = unstored;
        unstored = [];
        for (const codename of await this.store(lists)) publishes.push(this.publish(codename));
      };
      let next = 0;
      let failed = false;
      const reader = async (first: boolean) => {
        while (!this.stopped && !failed && next < pending.length) {
          if (first) {
            await this.yieldToUploads();
          } else if (!this.quiet()) {
            await sleep(POLL_MS);
            continue;
          }
          if (this.stopped || failed || next >= pending.length) return;
          const pkg = pending[next++]!;
          const files = await this.read(pkg);
          if (unstored.length === 0) firstReadAt = Date.now();
          unstored.push({ pkg, files });
          // While uploads are under way reads are seconds apart: nothing to gather.
          if (this.deps.busy() || Date.now() - firstReadAt >= gatherMs) await storeUnstored();
        }
      };
      try {
        // A failed read or store ends the pass once the other readers have finished theirs (no
        // reader outlives its pass: the retry starts a new one).
        const ended = await Promise.allSettled(Array.from({ length: readers }, (_, i) => reader(i === 0).catch((error: unknown) => {
          failed = true;
          throw error;
        })));
        const failure = ended.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (failure) throw failure.reason;
        await storeUnstored();
      } finally {
        await Promise.all(publishes);
      }
    }
  }

  /** Stores read lists, a transaction per distribution; the distributions where any was stored (not by another replica first). */
  private async store(lists: ReadonlyArray<{ pkg: UnlistedPackage; files: string }>): Promise<string[]> {
    const byDistribution = new Map<string, Array<{ id: string; files: string }>>();
    for (const { pkg, files } of lists) {
      const group = byDistribution.get(pkg.distribution) ?? [];
      group.push({ id: pkg.id, files });
      byDistribution.set(pkg.distribution, group);
    }
    const changed: string[] = [];
    for (const [codename, group] of byDistribution) if ((await recordFileLists(this.deps.db, codename, group)) > 0) changed.push(codename);
    return changed;
  }

  private publish(codename: string): Promise<void> {
    return this.deps.publish(codename).catch((err: unknown) => this.deps.log.error({ err, codename }, 'publish after a file list failed'));
  }

  private lastRead = 0;
  private busySeenAt = 0;

  /** True once no upload has been seen under way for QUIET_MS (the readers waiting poll it). */
  private quiet(): boolean {
    const now = Date.now();
    if (this.deps.busy()) this.busySeenAt = now;
    return now - this.busySeenAt >= QUIET_MS;
  }

  private async yieldToUploads(): Promise<void> {
    while (!this.stopped && this.deps.busy() && Date.now() - this.lastRead < YIELD_MS) {
      await sleep(POLL_MS);
    }
    this.lastRead = Date.now();
  }

  /**
   * Reads one package's payload: its file list (JSON) to store. A malformed payload is
   * quarantined *before* its (empty) list is stored: stored first, a quarantine that failed (the
   * database gone for a moment) would leave the package in the index and never read again, a
   * hole in the gate. Quarantined first, a failure leaves it unlisted for the retry; a
   * quarantined package is no longer looked up, and quarantining one twice (two replicas racing)
   * changes nothing.
   */
  private async read(pkg: UnlistedPackage): Promise<string> {
    const { files, log } = this.deps;
    let list = '[]';
    try {
      list = JSON.stringify((await (this.deps.listPayload ?? listWithSystemXz)(files.storedPath(pkg.sha256))).map(fileEntry));
    } catch (error) {
      // The decoder failed, not the payload: this pass fails, and the package is read again by the next.
      if (error instanceof DecoderFailure) throw error;
      if (error instanceof PackageFormatError) {
        await this.quarantine(pkg, error);
      } else {
        // Not the package's fault (its stored file unreadable): it keeps an empty list rather than
        // holding up every package behind it; `sync-index` reports a missing file.
        log.error({ err: error, package: pkg.name, version: pkg.version }, 'payload unreadable: no Contents lines for this package');
      }
    }
    return list;
  }

  private async quarantine(pkg: UnlistedPackage, malformed: PackageFormatError): Promise<void> {
    if (!this.malformed) throw new Error('no handler for malformed payloads');
    await this.malformed(pkg, `payload check: ${malformed.code}: ${malformed.message}`);
    this.deps.log.warn({ package: pkg.name, version: pkg.version, code: malformed.code }, 'malformed payload: package quarantined');
  }
}
