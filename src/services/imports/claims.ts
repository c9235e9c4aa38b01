/**
 * The claims one import run holds on upstream files, so that runs here and on other replicas
 * neither download nor admit one file twice. A run takes claims ahead of its pipeline without
 * waiting; a run that waits for a claim more than a few seconds gives up the others it holds, so
 * two runs that need each other's files cannot wait on each other for ever.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { releaseImportClaim, takeImportClaim } from '../../adapters/db/import-claims.table.js';
import type { Db } from '../../adapters/db/index.js';
import { DomainError } from '../../domain/errors.js';
import { isoUtc } from '../../domain/time.js';

/** A claim outlives the longest download (15 minutes) and the pipeline after it; a dead holder's lapses then. */
const CLAIM_TTL_MS = 30 * 60_000;
const CLAIM_WAIT_MS = 30 * 60_000;
const CLAIM_POLL_MS = 100;
/**
 * How long a waiting run keeps its other claims. Usually the holder is just importing that file
 * and lets go within moments; giving up at once let another run take a claim whose download this
 * run already had under way, so the file was downloaded twice. Past this, the two runs may each
 * hold what the other waits for, and the waiting one gives up what it holds.
 */
const HOLD_WHILE_WAITING_MS = 5_000;

export const claimKey = (distribution: string, sha256: string) => `${distribution} ${sha256}`;

export class RunClaims {
  private readonly holder = `${hostname()}:${process.pid}:${randomBytes(6).toString('hex')}`;
  private readonly held = new Set<string>();
  private waiting = false;

  constructor(private readonly db: Db) {}

  holds(key: string): boolean {
    return this.held.has(key);
  }

  /** Takes the claim if it is free (or lapsed); never waits, and takes nothing while the run waits for one. */
  async tryTake(key: string): Promise<boolean> {
    if (this.held.has(key)) return true;
    if (this.waiting || !(await this.insert(key))) return false;
    this.held.add(key);
    return true;
  }

  /** Takes the claim, giving up every other claim of the run once it has waited HOLD_WHILE_WAITING_MS. */
  async take(key: string): Promise<void> {
    if (await this.tryTake(key)) return;
    this.waiting = true;
    try {
      const giveUp = Date.now() + CLAIM_WAIT_MS;
      const keepOthersUntil = Date.now() + HOLD_WHILE_WAITING_MS;
      for (;;) {
        // Also what a take ahead, under way when the wait began, obtained meanwhile.
        if (Date.now() >= keepOthersUntil) for (const other of [...this.held]) await this.release(other);
        if (await this.insert(key)) break;
        if (Date.now() > giveUp) throw new DomainError('unavailable', 'import_busy', `another import has held ${key} for over ${CLAIM_WAIT_MS / 60_000} minutes`);
        await new Promise((resolve) => setTimeout(resolve, CLAIM_POLL_MS));
      }
      this.held.add(key);
    } finally {
      this.waiting = false;
    }
  }

  async release(key: string): Promise<void> {
    if (this.held.delete(key)) await releaseImportClaim(this.db, key, this.holder);
  }

  async releaseAll(): Promise<void> {
    for (const key of [...this.held]) await this.release(key);
  }

  private insert(key: string): Promise<boolean> {
    const now = Date.now();
    return takeImportClaim(this.db, key, this.holder, isoUtc(new Date(now)), isoUtc(new Date(now + CLAIM_TTL_MS)));
  }
}
