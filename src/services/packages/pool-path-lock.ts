/**
 * One writer at a time per pool path. Whatever decides what a pool path holds does it under the
 * path's lock: an admission (no indexed package holds the path with other bytes, link, insert the
 * row), a promotion's copy, a package entering the index (approval, a rescan), and the clean-up
 * after a deletion, a retirement or a package leaving the index (is the file still named? then
 * keep it).
 * Without it, two uploads of the same name, version and architecture with other bytes both linked
 * their file and the pool served the refused one's bytes under the published one's digests; a
 * deletion or a quarantine removed the file an upload of the same package had just linked for its
 * row (test/e2e/apt-concurrency.test.ts).
 *
 * PostgreSQL: the work runs in a transaction holding an advisory lock on the path, which replicas
 * sharing the database and the pool all take; its queries go through that transaction, so it holds
 * one connection, not two. SQLite is one process: a lock in memory.
 */
import { findPoolConflict, isPostgres, lockPoolPath } from '../../adapters/db/packages.table.js';
import type { Db } from '../../adapters/db/index.js';
import { DomainError } from '../../domain/errors.js';

/**
 * The path a package's lock is taken on: its pool path, or for a source package (whose files,
 * the .orig tarball shared between revisions among them, all go into its pool folder) the folder.
 */
export function poolLockPath(row: { pool_path: string }, hasSourceFiles: boolean): string {
  return hasSourceFiles ? row.pool_path.slice(0, row.pool_path.lastIndexOf('/')) : row.pool_path;
}

/**
 * The check made under the lock before a file is linked at `poolPath`: a 409 `pool_conflict` when
 * an indexed package already holds the path with other bytes (one pool path holds one file).
 */
export async function refuseOccupiedPoolPath(db: Db, poolPath: string, sha256: string): Promise<void> {
  const other = await findPoolConflict(db, poolPath, sha256);
  if (other) {
    throw new DomainError('conflict', 'pool_conflict', `${poolPath} already holds different content (published in ${other.distribution})`, {
      existing_sha256: other.sha256,
      incoming_sha256: sha256,
    });
  }
}

/** Runs `write` in a transaction: `db` itself when it is one already (a pool path's lock on PostgreSQL). */
export function inTransaction<T>(db: Db, write: (trx: Db) => Promise<T>): Promise<T> {
  return db.isTransaction ? write(db) : db.transaction().execute(write);
}

/** Work under way in this process, by pool path: each waits for the one before it. */
const tails = new Map<string, Promise<unknown>>();

/**
 * Runs `work` holding the pool path's lock; `work` gets the database handle to use (on
 * PostgreSQL a transaction: what it writes commits or rolls back with it, and it must not open
 * another).
 */
export function withPoolPathLock<T>(db: Db, poolPath: string, work: (db: Db) => Promise<T>): Promise<T> {
  return withPoolPathLocks(db, [poolPath], work);
}

/**
 * The same for several paths at once (a rescan bringing packages into the index in one
 * transaction), always taken in the same order, so two holders of overlapping sets cannot each
 * wait for the other.
 */
export async function withPoolPathLocks<T>(db: Db, poolPaths: readonly string[], work: (db: Db) => Promise<T>): Promise<T> {
  const paths = [...new Set(poolPaths)].sort();
  if (isPostgres(db)) {
    return db.transaction().execute(async (trx) => {
      for (const path of paths) await lockPoolPath(trx, path);
      return work(trx);
    });
  }
  const from = (i: number): Promise<T> => (i === paths.length ? work(db) : inProcess(paths[i]!, () => from(i + 1)));
  return from(0);
}

async function inProcess<T>(path: string, work: () => Promise<T>): Promise<T> {
  const before = tails.get(path) ?? Promise.resolve();
  const run = before.catch(() => undefined).then(work);
  const tail = run.catch(() => undefined);
  tails.set(path, tail);
  try {
    return await run;
  } finally {
    if (tails.get(path) === tail) tails.delete(path);
  }
}
