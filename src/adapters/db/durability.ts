/**
 * SQLite runs in WAL mode with `synchronous = NORMAL`: a commit writes its frames to the `-wal`
 * file without syncing it, so a power loss or an operating-system crash may take back the last
 * commits (a killed process loses nothing: the frames are in the page cache). Syncing at every
 * commit (`FULL`) would stop the event loop for each fsync, since better-sqlite3 is synchronous.
 * Instead an answer that reports a change waits for `durable()`, which syncs the WAL file on the
 * thread pool: every caller whose commits came before a sync began shares it (group commit), so
 * an upload answered 201 is in a database that survives the power loss its index files survive.
 * PostgreSQL's commits are durable when they return (synchronous_commit): nothing to wait for.
 */
import { isErrno, syncFile } from '../storage/atomic.js';

/** Resolves once every commit made before the call is on disk. */
export type Durable = () => Promise<void>;

/** A sync of the WAL file; a missing one (no write yet) has nothing to sync. */
async function syncWal(path: string): Promise<void> {
  try {
    await syncFile(path);
  } catch (error) {
    if (!isErrno(error, 'ENOENT')) throw error;
  }
}

/**
 * `durable()` for the SQLite database whose WAL is `walPath`. A caller that comes while a sync is
 * under way may have committed after it began: it waits for the next one, which every caller
 * arriving meanwhile shares.
 */
export function walDurability(walPath: string, sync: (path: string) => Promise<void> = syncWal): Durable {
  let running: Promise<void> | null = null;
  let next: Promise<void> | null = null;
  const start = (): Promise<void> => {
    const run = sync(walPath).finally(() => {
      if (running === run) running = null;
    });
    running = run;
    return run;
  };
  return () => {
    if (!running) return start();
    next ??= running.catch(() => undefined).then(() => {
      next = null;
      return start();
    });
    return next;
  };
}

/** PostgreSQL: a commit is durable once it returns. */
export const alreadyDurable: Durable = () => Promise.resolve();
