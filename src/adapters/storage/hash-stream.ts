/**
 * One pass over an upload: write it to a temp file while computing every digest APT and RPM
 * indexes need, so a large upload never sits in memory and is read only once.
 */
import { createHash, type Hash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { DomainError } from '../../domain/errors.js';
import { inFolder, removeFile } from './atomic.js';
import { tempPathFor } from './temp-names.js';

/** Size and hex digests of some content. */
export interface ContentDigests {
  size: number;
  md5: string;
  sha1: string;
  sha256: string;
  sha512: string;
}

/** A temp file holding hashed content; the caller moves it into place or deletes it. */
export interface HashedTempFile extends ContentDigests {
  path: string;
  /**
   * With `sync: 'background'`: settles once the content is on disk (rejects if the fsync failed).
   * Await it before the file is moved where a crash must not lose it. Absent otherwise.
   */
  durable?: Promise<void>;
  /** The first bytes of the content (`keepHead` of them, fewer when it is shorter), when asked for. */
  head?: Buffer;
}

/** Options for `hashStream`. */
export interface HashStreamOptions {
  /** Folder for the temp file: put it on the same filesystem as the pool so the final move is a rename. */
  tempDir: string;
  /** Refuse content larger than this (DomainError `too_large` / `file_too_large`); the temp file is removed. */
  maxBytes?: number;
  /**
   * fsync the temp file before returning (true, the default), not at all (false), or in the
   * background ('background': the result's `durable` tells when it is done), so that the wait
   * for the disk overlaps whatever the caller does next with the content.
   */
  sync?: boolean | 'background';
  /**
   * Keep the content's first bytes in memory (`head` of the result): the reader that inspects the
   * file next starts from them instead of opening it (a tiny package is read without a file call).
   */
  keepHead?: number;
}

const ALGORITHMS = ['md5', 'sha1', 'sha256', 'sha512'] as const;
/** Bytes gathered before a write. */
const WRITE_BYTES = 1 << 20;

/** Copy `source` to a new temp file under `tempDir`, computing size, MD5, SHA-1, SHA-256 and SHA-512. */
export async function hashStream(source: AsyncIterable<Uint8Array | string>, options: HashStreamOptions): Promise<HashedTempFile> {
  const path = tempPathFor(join(options.tempDir, 'upload'));
  const hashes = newHashes();
  const max = options.maxBytes ?? Number.MAX_SAFE_INTEGER;
  let size = 0;
  const keepHead = options.keepHead ?? 0;
  const head: Uint8Array[] = [];
  let headBytes = 0;
  // The temp folder is created only when missing (it exists after the first upload: one call fewer per upload).
  const handle = await inFolder(path, () => open(path, 'wx', 0o644));
  try {
    // Chunks are written WRITE_BYTES at a time: one thread-pool round trip per chunk (often 64 KiB) was ~14,000 for 900 MB.
    let pending: Uint8Array[] = [];
    let pendingBytes = 0;
    for await (const chunk of source) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += bytes.byteLength;
      if (size > max) throw new DomainError('too_large', 'file_too_large', `content exceeds ${max} bytes`, { max_bytes: max });
      for (const h of hashes) h.update(bytes);
      if (headBytes < keepHead) {
        const part = bytes.subarray(0, keepHead - headBytes);
        head.push(part);
        headBytes += part.byteLength;
      }
      pending.push(bytes);
      pendingBytes += bytes.byteLength;
      if (pendingBytes >= WRITE_BYTES) {
        await writeAll(handle, pending, pendingBytes);
        pending = [];
        pendingBytes = 0;
      }
    }
    if (pendingBytes > 0) await writeAll(handle, pending, pendingBytes);
    if (options.sync === true || options.sync === undefined) await handle.sync();
  } catch (err) {
    await handle.close().catch(() => undefined);
    await removeFile(path);
    throw err;
  }
  if (options.sync === 'background') {
    const durable = handle.sync().finally(() => handle.close());
    // Awaited by whoever moves the file; one that is discarded before never asks.
    durable.catch(() => undefined);
    return { path, size, ...digestsOf(hashes), durable, ...headOf(head, keepHead) };
  }
  await handle.close();
  return { path, size, ...digestsOf(hashes), ...headOf(head, keepHead) };
}

/** Writes `chunks` (`total` bytes) at the file's position; writev may write part of them, then the rest follows. */
async function writeAll(handle: FileHandle, chunks: Uint8Array[], total: number): Promise<void> {
  const written = (await handle.writev(chunks)).bytesWritten;
  if (written === total) return;
  const rest = Buffer.concat(chunks).subarray(written);
  for (let off = 0; off < rest.byteLength; ) off += (await handle.write(rest, off)).bytesWritten;
}

/** Copied: the chunks may be views of the parser's buffers. */
function headOf(chunks: Uint8Array[], keepHead: number): { head?: Buffer } {
  return keepHead > 0 ? { head: Buffer.concat(chunks) } : {};
}

function newHashes(): Hash[] {
  return ALGORITHMS.map((a) => createHash(a));
}

function digestsOf(hashes: Hash[]): Omit<ContentDigests, 'size'> {
  const [md5, sha1, sha256, sha512] = hashes.map((h) => h.digest('hex')) as [string, string, string, string];
  return { md5, sha1, sha256, sha512 };
}
