/**
 * The storage seams, declared once. Services hold these interfaces; `FsPackageFiles` implements
 * them on a local folder (DATA_DIR), and an object store could implement them later without a
 * service changing.
 */
import type { Readable } from 'node:stream';
import type { Distribution } from '../../domain/distributions.js';
import type { Signer } from '../signing/signer.js';

/**
 * Package files. Every accepted file is kept once, by SHA-256, in the pool (never served); the
 * published tree holds it at pool paths; quarantine keeps detected or rejected files apart; temp
 * files are uploads being received.
 */
export interface PackageFiles {
  /** Folder new temp files are written to (uploads being received). */
  readonly tempDir: string;
  /** Root of the published tree, served at /repo/ and read by the index writers. */
  readonly repoDir: string;
  /** Creates the folders. */
  init(): Promise<void>;
  /** Removes temp files whose writing process is gone (a crash mid-upload or mid-index write). */
  removeAbandonedTempFiles(): Promise<void>;
  /** The first `bytes` bytes of a temp file (format sniffing). */
  readHead(tempFile: string, bytes: number): Promise<Buffer>;
  /** Deletes a temp file; no error when it is already gone (moved into the pool or quarantine). */
  discard(tempFile: string): Promise<void>;

  /**
   * Moves a temp file into the pool under its SHA-256 (a no-op when those bytes are there);
   * resolves once its name there is durable. `alongside` (a pool link of those bytes, say) runs as
   * soon as the bytes are at that name, while the name is made durable.
   */
  keep(tempFile: string, sha256: string, alongside?: () => Promise<void>): Promise<void>;
  /** Whether the pool holds these bytes. */
  has(sha256: string): Promise<boolean>;
  /** A read stream of pooled bytes. */
  open(sha256: string): Readable;
  /** Local path of pooled bytes, for readers that seek (package readers, antivirus units). */
  storedPath(sha256: string): string;
  /** Drops pooled bytes; no error when already gone. */
  forget(sha256: string): Promise<void>;

  /** Makes pooled bytes visible at `poolPath` in the published tree (atomic replace). */
  publish(sha256: string, poolPath: string): Promise<void>;
  /** Removes `poolPath` from the published tree; no error when already gone. */
  unpublish(poolPath: string): Promise<void>;
  /** Removes a folder of the published tree and all it holds (a retired distribution's `apt/dists/<codename>`). */
  removePublishedTree(path: string): Promise<void>;
  /** Whether `poolPath` is in the published tree. */
  isPublished(poolPath: string): Promise<boolean>;
  /**
   * Opens a file of the published tree for reading, or null when there is none (or it is not a
   * regular file). Size, date and content all come from the one open file, so a file replaced
   * while it is served (an index being republished) is served whole, as it was when opened.
   */
  openPublished(path: string): Promise<PublishedFile | null>;
  /** Package files (.deb, .rpm) present in the published tree, as pool paths. */
  listPublishedPackages(): Promise<string[]>;

  /** Moves pooled bytes to quarantine (a copy when another row still uses them). */
  quarantine(sha256: string, keepInStore: boolean): Promise<void>;
  /** Quarantines a temp upload that never reached the pool. */
  quarantineTemp(tempFile: string, sha256: string): Promise<void>;
}

/** A file of the published tree, open; `stream` closes it when done, `close` when not streamed. */
export interface PublishedFile {
  size: number;
  modified: Date;
  /** The bytes from `start` to `end` (inclusive), or all of them. */
  stream(range?: { start: number; end: number }): Readable;
  close(): Promise<void>;
}

/** A package's stored index text (APT stanza, RPM repodata chunks) and where it is listed. */
export interface IndexEntry {
  /** APT component (`main` for RPM). */
  component: string;
  /** The package's architecture: `all`/`noarch` ones are listed under every architecture. */
  arch: string;
  text: string;
  /** APT: the package's name and its file list (JSON, as stored), for the Contents indices. */
  contents?: { name: string; files: string };
  /** Appended to Contents only: the package is in the index already, its file list arrived since. */
  contentsOnly?: boolean;
}

/** Writes one distribution's signed index from the stored per-package entries, atomically. */
export interface IndexWriter {
  /** Writes the whole index from every entry. */
  write(dist: Distribution, entries: readonly IndexEntry[], signer: Signer): Promise<void>;
  /** Same, reading the entries in batches as it writes them (memory stays flat however many). */
  writeBatches?(dist: Distribution, batches: AsyncIterable<readonly IndexEntry[]>, signer: Signer): Promise<void>;
  /**
   * Adds entries to the index this writer last wrote for the distribution; false when it cannot
   * (nothing written by this process yet, files changed underneath), and the caller writes in full.
   */
  append?(dist: Distribution, entries: readonly IndexEntry[], signer: Signer): Promise<boolean>;
  /** Drops what the writer remembers of a distribution (another process published it). */
  forget?(codename: string): void;
  /** Settles once the writes of the distribution under way, and what they clean up after answering, are done. */
  settled?(codename: string): Promise<void>;
  /** Settles once work the writer does in the background between publishes is done (shutdown, tests). */
  idle?(): Promise<void>;
  /** Begins no more background work, and drops what it made for publishes that will not come (shutdown). */
  stop?(): void;
}
