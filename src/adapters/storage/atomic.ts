/**
 * Crash-safe file replacement: write a temp file in the target's folder, fsync it, rename it over
 * the target, fsync the folder. Readers see the old file or the new one, never a torn one.
 */
import { copyFile, link, mkdir, open, rename, truncate, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { tempPathFor } from './temp-names.js';

/**
 * Runs `write`, which creates `path`; creates the parent folders only if it fails for want of
 * them (they exist after the first write: a `mkdir` per file was most of a publish's calls).
 */
export async function inFolder<T>(path: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (!isErrno(err, 'ENOENT')) throw err;
    await mkdir(dirname(path), { recursive: true });
    return write();
  }
}

/** fsync a file written before (through another descriptor, or by another program). */
export async function syncFile(path: string): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** fsync a folder so a rename inside it survives a power loss (ignored where unsupported). */
export async function fsyncDir(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch (err) {
    // Some filesystems refuse fsync on directories (EINVAL/EISDIR/EPERM): nothing more we can do.
    if (!isErrno(err, 'EINVAL', 'EISDIR', 'EPERM', 'EBADF')) throw err;
  } finally {
    // Not waited for: the fsync is what callers order on, and publishes and uploads wait here
    // for a thread-pool round trip each time. A folder's descriptor cannot fail to close.
    void handle?.close().catch(() => undefined);
  }
}

/** Options for `writeFileAtomic` and `replaceFilesAtomic`. */
export interface AtomicWriteOptions {
  /** File mode of the new file (default 0o644). */
  mode?: number;
  /** Skip the fsyncs (for throwaway data: tests, caches). */
  noSync?: boolean;
  /** Fail (ENOENT) rather than create the parent folders: for writes that may outlive their folder. */
  parentMustExist?: boolean;
}

/** Replace `path` with `data` atomically, creating parent folders as needed. */
export function writeFileAtomic(path: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
  return replaceFilesAtomic(dirname(path), [{ name: basename(path), data }], options);
}

/**
 * Replaces several files of one folder, each atomically, with one folder fsync for all: the
 * contents are written and fsynced side by side first, so no name is switched before every new
 * file is whole on disk. The last file is switched after all the others (InRelease, repomd.xml:
 * the one that makes the rest current).
 */
export async function replaceFilesAtomic(dir: string, files: ReadonlyArray<{ name: string; data: string | Uint8Array }>, options: AtomicWriteOptions = {}): Promise<void> {
  const staged = await stageFiles(dir, files, options);
  await staged.commit();
}

/** New files written under temporary names, not yet in place: `commit` switches them in, `discard` drops them. */
export interface StagedFiles {
  commit(): Promise<void>;
  discard(): Promise<void>;
}

/**
 * The first half of `replaceFilesAtomic`, for a caller with other writes to finish before the
 * switch (Release files signed while the index files they name are still being written).
 */
export async function stageFiles(dir: string, files: ReadonlyArray<{ name: string; data: string | Uint8Array }>, options: AtomicWriteOptions = {}): Promise<StagedFiles> {
  if (!options.parentMustExist) await mkdir(dir, { recursive: true });
  const temps = files.map((f) => tempPathFor(join(dir, f.name)));
  const discard = () => Promise.all(temps.map((t) => removeFile(t))).then(() => undefined);
  const written = await Promise.allSettled(files.map(async (f, i) => {
    const handle = await open(temps[i]!, 'wx', options.mode ?? 0o644);
    try {
      await handle.writeFile(f.data);
      if (!options.noSync) await handle.sync();
    } finally {
      await handle.close();
    }
  }));
  const failed = written.find((r) => r.status === 'rejected');
  if (failed) {
    await discard();
    throw failed.reason;
  }
  const commit = async () => {
    const rest = files.length - 1;
    try {
      await Promise.all(files.slice(0, rest).map((f, i) => rename(temps[i]!, join(dir, f.name))));
      if (rest >= 0) await rename(temps[rest]!, join(dir, files[rest]!.name));
    } catch (err) {
      await discard();
      throw err;
    }
    if (!options.noSync) await fsyncDir(dir);
  };
  return { commit, discard };
}

/**
 * Move a finished temp file (already fsynced by its writer) to `target` by rename, creating the
 * parent folders, then fsync the folder. Both paths must be on the same filesystem.
 */
export async function moveIntoPlace(tempPath: string, target: string, options: { noSync?: boolean } = {}): Promise<void> {
  await mkdir(dirname(target), { recursive: true });
  await rename(tempPath, target);
  if (!options.noSync) await fsyncDir(dirname(target));
}

/** Where a hard link cannot be made (another filesystem, none supported, too many): a copy serves. */
export const LINK_REFUSED = ['EXDEV', 'EPERM', 'ENOTSUP', 'EMLINK'];

/**
 * Makes `target` name `source`'s file, a hard link (a copy where links are refused), replacing
 * what holds the name atomically: readers see the old file or the new one. `nameLikelyFree`
 * tries one plain link first (a new pool path, a new digest's name), which is atomic on its own.
 */
export async function linkReplacing(source: string, target: string, options: { nameLikelyFree?: boolean } = {}): Promise<void> {
  if (options.nameLikelyFree) {
    try {
      await link(source, target);
      return;
    } catch (err) {
      if (!isErrno(err, 'EEXIST', ...LINK_REFUSED)) throw err;
    }
  }
  const temp = tempPathFor(target);
  try {
    try {
      await link(source, temp);
    } catch (err) {
      if (!isErrno(err, ...LINK_REFUSED)) throw err;
      await copyFile(source, temp);
    }
    await rename(temp, target);
  } finally {
    // Gone after a rename, except one between two links to the same file, which does nothing
    // (POSIX) and leaves the temporary name; a failed rename (ENOSPC on a full tmpfs) leaves it too.
    await removeFile(temp);
  }
}

/** True when `err` is a Node system error with one of the given codes. */
export function isErrno(err: unknown, ...codes: string[]): boolean {
  return typeof err === 'object' && err !== null && 'code' in err && codes.includes(String((err as { code: unknown }).code));
}

/**
 * Deletes a file; no error when it is not there. What `rm(path, { force: true })` does for a
 * file, without its recursive walker's lstat first (one system call instead of two, on every
 * upload's temp file).
 */
export async function removeFile(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (error) {
    if (!isErrno(error, 'ENOENT')) throw error;
  }
}

/**
 * A temp copy of an earlier generation, cut to `keepBytes` when given and opened for appending:
 * how an append extends an immutable published file (a reflink where the filesystem shares
 * extents). `copy` makes the copy (default `copyFile`); the temp file is removed if any step fails.
 */
export async function openCutCopy(source: string, temp: string, keepBytes: number | null, copy: (source: string, temp: string) => Promise<unknown> = copyFile): Promise<FileHandle> {
  try {
    await copy(source, temp);
    if (keepBytes !== null) await truncate(temp, keepBytes);
    return await open(temp, 'a');
  } catch (error) {
    await removeFile(temp);
    throw error;
  }
}
