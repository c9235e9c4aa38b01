/**
 * The package pool seam: where uploaded package files are kept, addressed by a relative path
 * (`pool/main/h/hello/hello_1.0_amd64.deb`). Small on purpose so an object store (S3) can
 * implement it later; the filesystem implementation is `FsBlobStore`.
 */
import type { Readable } from 'node:stream';

export interface BlobStore {
  /** Move a finished local temp file to `relPath`, replacing any existing blob atomically. */
  put(tempFile: string, relPath: string): Promise<void>;
  /** A read stream of the blob (DomainError `not_found` / `blob_not_found` if absent). */
  open(relPath: string): Promise<Readable>;
  /** Delete the blob; no error if it is already gone. */
  remove(relPath: string): Promise<void>;
  /** Whether a blob exists at `relPath`. */
  exists(relPath: string): Promise<boolean>;
  /** Relative paths of all blobs under `prefix` (default: everything), sorted. */
  list(prefix?: string): Promise<string[]>;
}
