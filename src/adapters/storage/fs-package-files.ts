import { createReadStream } from 'node:fs';
import { constants } from 'node:fs';
import { copyFile, mkdir, open as openFile, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import type { Readable } from 'node:stream';
import { fsyncDir, inFolder, isErrno, linkReplacing, removeFile } from './atomic.js';
import type { PackageFiles, PublishedFile } from './interfaces.js';
import { listFilesRecursive } from './list-files.js';
import { isAbandonedTemp } from './temp-names.js';
import { readLocalHead } from './local-file.js';
import { checkStoragePath } from './storage-path.js';

const SHA256 = /^[0-9a-f]{64}$/;

/**
 * `PackageFiles` on DATA_DIR. Every accepted file is kept once, by SHA-256, in `store/` (not
 * served); the published tree `repo/` holds hard links to it at pool paths, so publishing,
 * unpublishing and promotion never copy package bytes, and the tree can be rebuilt from the store.
 * Quarantined files move to `quarantine/`. Paths come from validated package names and are
 * re-checked here.
 */
export class FsPackageFiles implements PackageFiles {
  readonly storeDir: string;
  readonly repoDir: string;
  readonly quarantineDir: string;
  readonly tempDir: string;
  /**
   * Temp files this process moved away (into the store or quarantine): discarding one after that
   * needs no system call (every upload's temp file is discarded once its upload is done).
   */
  private readonly movedTemps = new Set<string>();

  /**
   * `copiesOf(poolPath)`: the other places of the published tree that hold the same file (a
   * `noarch` RPM in each architecture's tree); published, unpublished and checked with it.
   */
  constructor(dataDir: string, private readonly copiesOf: (poolPath: string) => readonly string[] = () => []) {
    this.storeDir = join(dataDir, 'store');
    this.repoDir = join(dataDir, 'repo');
    this.quarantineDir = join(dataDir, 'quarantine');
    this.tempDir = join(dataDir, 'tmp');
  }

  async init(): Promise<void> {
    for (const dir of [this.storeDir, this.repoDir, this.quarantineDir, this.tempDir]) await mkdir(dir, { recursive: true });
  }

  /**
   * Temp files a killed process left behind (an upload being received, an index being written):
   * never served (dotfiles), never referenced, removed at start-up when their writer is gone
   * (temp-names.ts: how that is known with replicas on other hosts or in containers).
   */
  async removeAbandonedTempFiles(): Promise<void> {
    for (const dir of [this.repoDir, this.storeDir, this.tempDir]) {
      for (const path of await listFilesRecursive(dir)) {
        if (await isAbandonedTemp(path)) await removeFile(path);
      }
    }
  }

  private blobPath(sha256: string): string {
    if (!SHA256.test(sha256)) throw new Error(`not a sha256: ${sha256}`);
    return join(this.storeDir, sha256.slice(0, 2), sha256);
  }

  repoPath(poolPath: string): string {
    return join(this.repoDir, ...checkStoragePath(poolPath));
  }

  /** Moves an uploaded temp file into the store (a no-op when those bytes are already there). */
  async keep(tempFile: string, sha256: string, alongside?: () => Promise<void>): Promise<void> {
    const target = this.blobPath(sha256);
    if (await exists(target)) {
      await removeFile(tempFile);
      this.moved(tempFile);
      await alongside?.();
      return;
    }
    // The store's 256 folders exist after the first uploads: created only when the rename says so.
    await inFolder(target, () => rename(tempFile, target));
    this.moved(tempFile);
    // Both awaited, whichever fails first: the folder's fsync is what a crash needs, not what a link needs.
    const synced = fsyncDir(dirname(target));
    synced.catch(() => undefined);
    await alongside?.();
    await synced;
  }

  async has(sha256: string): Promise<boolean> {
    return exists(this.blobPath(sha256));
  }

  open(sha256: string): Readable {
    return createReadStream(this.blobPath(sha256));
  }

  storedPath(sha256: string): string {
    return this.blobPath(sha256);
  }

  /** Makes the stored file visible at `poolPath` in the published tree (atomic replace). */
  async publish(sha256: string, poolPath: string): Promise<void> {
    for (const path of [poolPath, ...this.copiesOf(poolPath)]) await this.publishOne(sha256, path);
  }

  private async publishOne(sha256: string, poolPath: string): Promise<void> {
    const target = this.repoPath(poolPath);
    // Most often the name is free (one link makes the file appear whole) and its folder exists.
    await inFolder(target, () => linkReplacing(this.blobPath(sha256), target, { nameLikelyFree: true }));
  }

  async unpublish(poolPath: string): Promise<void> {
    for (const path of [poolPath, ...this.copiesOf(poolPath)]) await removeFile(this.repoPath(path));
  }

  async removePublishedTree(path: string): Promise<void> {
    await rm(this.repoPath(path), { recursive: true, force: true });
  }

  async isPublished(poolPath: string): Promise<boolean> {
    for (const path of [poolPath, ...this.copiesOf(poolPath)]) if (!(await exists(this.repoPath(path)))) return false;
    return true;
  }

  async openPublished(path: string): Promise<PublishedFile | null> {
    let handle: FileHandle;
    try {
      // No link is followed (the tree holds none), and a FIFO cannot hang the open.
      handle = await openFile(this.repoPath(path), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch (err) {
      if (isErrno(err, 'ENOENT', 'ENOTDIR', 'ELOOP', 'EISDIR')) return null;
      throw err;
    }
    const info = await handle.stat();
    if (!info.isFile()) {
      await handle.close();
      return null;
    }
    return {
      size: info.size,
      modified: info.mtime,
      stream: (range) => handle.createReadStream(range ? { start: range.start, end: range.end, autoClose: true } : { autoClose: true }),
      close: () => handle.close(),
    };
  }

  /** Moves the file out of the store into quarantine (kept for analysis, never served). */
  async quarantine(sha256: string, keepInStore: boolean): Promise<void> {
    const target = join(this.quarantineDir, sha256);
    if (await exists(target)) return;
    if (keepInStore) await copyFile(this.blobPath(sha256), target);
    else await rename(this.blobPath(sha256), target);
  }

  /** Quarantines a temp upload that never reached the store (antivirus detection). */
  async quarantineTemp(tempFile: string, sha256: string): Promise<void> {
    if (!SHA256.test(sha256)) throw new Error(`not a sha256: ${sha256}`);
    await rename(tempFile, join(this.quarantineDir, sha256));
    this.moved(tempFile);
  }

  private moved(tempFile: string): void {
    // Bounded: a caller that never discards only costs the others their shortcut.
    if (this.movedTemps.size >= 10_000) this.movedTemps.clear();
    this.movedTemps.add(tempFile);
  }

  async forget(sha256: string): Promise<void> {
    await removeFile(this.blobPath(sha256));
  }

  readHead(tempFile: string, bytes: number): Promise<Buffer> {
    return readLocalHead(tempFile, bytes);
  }

  async discard(tempFile: string): Promise<void> {
    if (this.movedTemps.delete(tempFile)) return;
    await removeFile(tempFile);
  }

  async listPublishedPackages(): Promise<string[]> {
    const found: string[] = [];
    for (const top of ['apt/pool', 'rpm']) {
      for (const file of await listFilesRecursive(join(this.repoDir, top))) {
        const rel = relative(this.repoDir, file);
        if (/\.(deb|rpm)$/.test(rel)) found.push(rel);
      }
    }
    return found;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return false;
    throw error;
  }
}

