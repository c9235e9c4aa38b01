/**
 * Copies of published index files made between publishes, for the next append to extend.
 *
 * An append never modifies a published by-hash object (a client holding the previous InRelease
 * may be reading it): it copies the object, extends the copy and places it as the new one. Where
 * the filesystem shares extents (XFS, btrfs) the copy is free; on ext4 it is a real copy of the
 * whole file (60 MB at 50,000 packages, ~600 MB at 500,000), written and fsynced on the publish's
 * serial path. A spare moves that work to the idle time after a publish: shortly after it, the copy
 * is made and written back to disk in the background, and the next append only adds its bytes and
 * fsyncs them.
 *
 * A spare belongs to one slot (an index folder and file name) and one source object; a publish that
 * finds none, or one made from another source, copies as before. In a burst the next append comes
 * before the spare is ready: it then begins the copy or waits for the one under way (which it would
 * have made itself) and skips the spare's own write-back, since its fsync covers the whole file.
 *
 * Spares are dotfiles (never served) named like temp files with a `.spare` suffix, so start-up
 * removes those whose writer is gone (`FsPackageFiles.removeAbandonedTempFiles`, temp-names.ts).
 */
import { copyFile, open, truncate } from 'node:fs/promises';
import { removeFile } from './atomic.js';
import { tempPathFor } from './temp-names.js';

interface Spare {
  source: string;
  keepBytes: number | null;
  path: string;
  /** Taken by an append: the write-back is left to the append's own fsync. */
  taken: boolean;
  /** Discarded before its copy began: it never begins. */
  cancelled: boolean;
  /** Starts the copy now rather than after the delay (idempotent). */
  begin: () => void;
  /** True once the copy is whole (and written back unless taken first); false if it failed or never began. */
  ready: Promise<boolean>;
}

/** A spare's name: the temp name of its source, marked as a spare rather than a write in flight. */
export const sparePathFor = (source: string) => tempPathFor(source, 'spare');

export class SpareCopies {
  /**
   * `delayMs`: how long after a publish its spares begin. The write-back of a large copy holds up
   * every fsync on the filesystem meanwhile (ext4's journal commits wait for the data of the blocks
   * it allocated): begun at once, it delayed the audit entry of the upload the publish answered
   * (one more upload at 50,000 packages on ext4: a median of 37 ms against 15 with the delay). An
   * append that comes first begins the copy itself.
   */
  constructor(private readonly delayMs = 50) {}

  private readonly bySlot = new Map<string, Spare>();
  private closed = false;
  /** Spares being removed (replaced, or their source out of date). */
  private readonly removals = new Set<Promise<void>>();

  /**
   * Starts a copy of `source` (cut to `keepBytes` when given) for the next append to `slot`,
   * replacing the slot's spare of an earlier source. Never throws; a failed copy only means the
   * append copies for itself.
   */
  prepare(slot: string, source: string, keepBytes: number | null, sync: boolean): void {
    if (this.closed) return;
    const current = this.bySlot.get(slot);
    if (current?.source === source && current.keepBytes === keepBytes) return;
    if (current) this.discard(slot);
    let begin = () => {};
    const began = new Promise<void>((resolve) => { begin = resolve; });
    // Not unref'd: `settled()` waits for it (a process that exits meanwhile waits that long).
    const timer = setTimeout(begin, this.delayMs);
    const spare: Spare = {
      source, keepBytes, path: sparePathFor(source), taken: false, cancelled: false,
      begin: () => { clearTimeout(timer); begin(); },
      ready: Promise.resolve(false),
    };
    spare.ready = began.then(async () => {
      if (spare.cancelled) return false;
      try {
        await copyFile(source, spare.path);
        if (keepBytes !== null) await truncate(spare.path, keepBytes);
        if (sync && !spare.taken) await writeBack(spare.path);
        return true;
      } catch {
        await removeFile(spare.path).catch(() => undefined);
        return false;
      }
    });
    this.bySlot.set(slot, spare);
  }

  /**
   * The spare of `slot` if it was made from `source` cut at `keepBytes`: a whole file the caller
   * now owns (to extend and rename into place, or remove). Null when there is none to use.
   */
  async take(slot: string, source: string, keepBytes: number | null): Promise<string | null> {
    const spare = this.bySlot.get(slot);
    if (!spare) return null;
    if (spare.source !== source || spare.keepBytes !== keepBytes) {
      this.discard(slot);
      return null;
    }
    this.bySlot.delete(slot);
    spare.taken = true;
    spare.begin();
    return (await spare.ready) ? spare.path : null;
  }

  /** Removes the slot's spare once its copy has settled. */
  discard(slot: string): void {
    const spare = this.bySlot.get(slot);
    if (!spare) return;
    this.bySlot.delete(slot);
    spare.cancelled = true;
    spare.begin();
    const removal = spare.ready.then(() => removeFile(spare.path)).catch(() => undefined);
    this.removals.add(removal);
    void removal.then(() => this.removals.delete(removal));
  }

  /** Discards the spares of every slot under `prefix` (a distribution's folder: retired, or published by another process). */
  discardUnder(prefix: string): void {
    for (const slot of [...this.bySlot.keys()]) if (slot.startsWith(prefix)) this.discard(slot);
  }

  /**
   * Shutdown: no more spares; those not begun never begin, the others are removed once their copy
   * settles (a copy cannot be stopped half way). A stop then waits for copies under way only, not
   * for the ones due after the last publish, and leaves no spare behind for the next start to find.
   */
  close(): void {
    this.closed = true;
    this.discardUnder('');
  }

  /** Settles once every spare under way is ready or failed, and every discarded one removed (shutdown, tests, benchmarks). */
  async settled(): Promise<void> {
    await Promise.all([...[...this.bySlot.values()].map((s) => s.ready), ...this.removals]);
  }

  /** The spares held, by slot (tests). */
  held(): Map<string, string> {
    return new Map([...this.bySlot].map(([slot, spare]) => [slot, spare.path]));
  }
}

/** Writes a file's data back to disk (fdatasync), so a later fsync only has the appended bytes to write. */
async function writeBack(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.datasync();
  } finally {
    await handle.close();
  }
}
