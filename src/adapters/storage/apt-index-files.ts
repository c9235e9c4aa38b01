/**
 * The three files of one APT index (Packages, Packages.gz, Packages.xz), kept so that adding
 * packages only costs the new bytes: each file is an immutable `by-hash` object; a new
 * generation copies the previous object and appends (a gzip member to .gz, a block inside the
 * one xz stream to .xz), and the digests continue from saved hash states instead of re-reading.
 */
import { createHash, type Hash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, type TransformCallback, type Writable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { setImmediate } from 'node:timers/promises';
import { promisify } from 'node:util';
import { createGzip, gzip, gzipSync } from 'node:zlib';
import { DomainError } from '../../domain/errors.js';
import { packagesIndex } from '../../domain/repo/apt/stanza.js';
import { parseXzTail, storedXzBlock, xzBlocksOf, xzIndexAndFooter, type XzBlockRecord } from '../../domain/repo/xz-container.js';
import { extendObject, finishWrite, objectPath, placeObject } from './apt-by-hash.js';
import { isErrno, syncFile } from './atomic.js';
import { tempPathFor } from './temp-names.js';
import type { ContentDigests } from './hash-stream.js';
import type { SpareCopies } from './spare-copies.js';
import lzma from 'lzma-native';
import { startXz, type XzOptions } from './xz.js';

const gzipAsync = promisify(gzip);
/**
 * Appends up to this size are compressed on the event loop and stored uncompressed in the xz
 * block (the next full write compresses them): one upload's stanzas, about 1 KB each.
 */
const STORED_APPEND_BYTES = 16 * 1024;
const ALGORITHMS = ['md5', 'sha1', 'sha256', 'sha512'] as const;
const SLICE = 4 * 1024 * 1024;

/**
 * `text` as one gzip member: compressed here when small (an upload's stanzas or file list: a pool
 * thread's round trip cost more than the work), on a pool thread otherwise.
 */
export function gzipMember(text: Buffer, level: number): Promise<Buffer> {
  return text.length <= STORED_APPEND_BYTES ? Promise.resolve(gzipSync(text, { level })) : gzipAsync(text, { level });
}

/** The base name of an index: `Packages` for a binary-<arch> folder, `Sources` for a source folder. */
export type IndexBaseName = 'Packages' | 'Sources';
export type VariantName = IndexBaseName | `${IndexBaseName}.gz` | `${IndexBaseName}.xz` | `Contents-${string}.gz`;

/** The four digests APT's Release lists, computed incrementally. */
export class Digests {
  private constructor(private readonly hashes: Hash[], public size: number) {}

  static empty(): Digests {
    return new Digests(ALGORITHMS.map((a) => createHash(a)), 0);
  }

  copy(): Digests {
    return new Digests(this.hashes.map((h) => h.copy()), this.size);
  }

  updateSync(data: Uint8Array): this {
    for (const h of this.hashes) h.update(data);
    this.size += data.byteLength;
    return this;
  }

  /** Hashes in slices, yielding between them so a 40 MB index does not stall the event loop. */
  async update(data: Uint8Array): Promise<this> {
    for (let at = 0; at < data.byteLength; at += SLICE) {
      const slice = data.subarray(at, at + SLICE);
      for (const h of this.hashes) h.update(slice);
      this.size += slice.byteLength;
      if (at + SLICE < data.byteLength) await setImmediate();
    }
    return this;
  }

  /** Final digests of the content hashed so far plus `tail` (left out of this state). */
  async finish(tail: Uint8Array = Buffer.alloc(0)): Promise<ContentDigests> {
    const copy = await this.copy().update(tail);
    const [md5, sha1, sha256, sha512] = copy.hashes.map((h) => h.digest('hex')) as [string, string, string, string];
    return { size: copy.size, md5, sha1, sha256, sha512 };
  }
}

/** One file of the index as it stands on disk, and what is needed to extend it. */
export interface VariantState {
  name: VariantName;
  /** Absolute path of the by-hash object holding the whole file (never modified). */
  object: string;
  digests: ContentDigests;
  /** Hash state over the part that stays as it is when appending (all of it but the xz index). */
  prefix: Digests;
  xz: { blocks: XzBlockRecord[]; flags: Buffer; indexOffset: number } | null;
  /**
   * The uncompressed content's digests, for a file served only compressed (Contents): apt fetches
   * an optional index only when Release lists its uncompressed name, and checks what it unpacks
   * against these.
   */
  plain?: { digests: ContentDigests; prefix: Digests };
}

/** The index files of one distribution component/architecture, ready for the next append. */
export interface AptIndexState {
  indexDir: string;
  variants: VariantState[];
  /** Appends since the last full write: each adds a small, less compressed gzip member and xz block. */
  appends: number;
}

export interface IndexFileOptions {
  /** Appends allowed before the next publish rewrites the files in full. */
  maxAppends: number;
  gzipLevel: number;
  xz: XzOptions;
  sync: boolean;
  /** Copies of the current files made after each publish, for the next append (spare-copies.ts). */
  spares?: SpareCopies;
}

export interface WrittenVariant {
  name: VariantName;
  digests: ContentDigests;
}

/** Passes bytes through, hashing them on the way. */
export class HashTap extends Transform {
  constructor(readonly digests: Digests) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.digests.updateSync(chunk);
    done(null, chunk);
  }
}

/**
 * Passes an .xz stream through, hashing all but its last `window` bytes: the index and footer at
 * the end are rewritten by every append, so the saved state must stop where they begin.
 */
class XzTailTap extends Transform {
  readonly prefix = Digests.empty();
  /**
   * The chunks not hashed yet, at least the last `window` bytes once that many have passed. Kept
   * as they came (they are the same buffers the file receives): joining them at every chunk copied
   * up to two windows per 64 KiB chunk, ~250 MB of short-lived buffers for a 10 MB Packages.xz.
   */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private head = Buffer.alloc(0);
  flags: Buffer | null = null;
  total = 0;

  /**
   * 256 KiB: the xz index takes a few bytes per block of ~768 KiB (xz -T0 at -0), so it fits in
   * the window up to tens of GB of Packages; each index being written holds this much.
   */
  constructor(private readonly window = 1 << 18) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    if (!this.flags) {
      this.head = Buffer.concat([this.head, chunk.subarray(0, 8 - this.head.length)]);
      if (this.head.length >= 8) this.flags = this.head.subarray(6, 8);
    }
    this.total += chunk.length;
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    while (this.pendingBytes - this.pending[0]!.length >= this.window) {
      const first = this.pending.shift()!;
      this.prefix.updateSync(first);
      this.pendingBytes -= first.length;
    }
    done(null, chunk);
  }

  /** After the end: the layout, the prefix hash state, and the bytes after the prefix. */
  finish(): { xz: NonNullable<VariantState['xz']>; prefix: Digests; tail: Buffer } {
    if (!this.flags) throw new DomainError('unavailable', 'xz_failed', 'xz produced no stream');
    const pending = Buffer.concat(this.pending);
    this.pending = [];
    const layout = parseXzTail(pending, this.total, this.flags);
    const hashed = this.total - pending.length;
    const keep = layout.indexOffset - hashed;
    this.prefix.updateSync(pending.subarray(0, keep));
    return { xz: { blocks: layout.blocks, flags: layout.flags, indexOffset: layout.indexOffset }, prefix: this.prefix, tail: pending.subarray(keep) };
  }
}

/**
 * Writes `data`, waiting for the drain when the stream asks for it. A stream that failed or closed
 * before (or while) waiting rejects: a write to a destroyed stream is never drained.
 */
export function writeAndWait(stream: Writable, data: Buffer): Promise<void> {
  if (stream.destroyed) return Promise.reject(stream.errored ?? new Error('write to a closed stream'));
  if (stream.write(data)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onClose = () => settle(stream.errored ?? new Error('stream closed before it drained'));
    const settle = (error?: Error | null) => {
      stream.off('error', settle).off('close', onClose).off('drain', settle);
      if (error) reject(error);
      else resolve();
    };
    stream.once('error', settle).once('close', onClose).once('drain', settle);
  });
}

/**
 * The error a failed write reports: a full disk met by any of its writers, which is the cause of
 * what the others then fail with (a full disk under the .xz file ends xz, and the next write to
 * it fails with EPIPE, which may reach the loop first). Else the error the loop met.
 */
function rootCause(error: unknown, settled: PromiseSettledResult<unknown>[]): unknown {
  if (isErrno(error, 'ENOSPC', 'EDQUOT')) return error;
  const full = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected' && isErrno(r.reason, 'ENOSPC', 'EDQUOT'));
  return full ? full.reason : error;
}

/**
 * Writes a whole new index from batches of stanzas, streaming: the text goes to the Packages temp
 * file, to gzip and to an xz process at once, each hashed as it is written, so memory stays
 * bounded whatever the number of packages.
 */
export async function writeFullIndex(indexDir: string, batches: AsyncIterable<readonly string[]>, o: IndexFileOptions, base: IndexBaseName = 'Packages'): Promise<AptIndexState> {
  const objectDir = join(indexDir, 'by-hash', 'SHA256');
  await mkdir(objectDir, { recursive: true });
  const temps = { plain: tempPathFor(join(objectDir, base)), gz: tempPathFor(join(objectDir, `${base}.gz`)), xz: tempPathFor(join(objectDir, `${base}.xz`)) };
  const plainDigests = Digests.empty();
  const plainOut = createWriteStream(temps.plain, { flags: 'wx' });
  const plainDone = finished(plainOut);
  const gzip = createGzip({ level: o.gzipLevel });
  const gzTap = new HashTap(Digests.empty());
  const xzTap = new XzTailTap();
  const xz = startXz(o.xz);
  const gzDone = pipeline(gzip, gzTap, createWriteStream(temps.gz, { flags: 'wx' }));
  const xzDone = pipeline(xz.stdout, xzTap, createWriteStream(temps.xz, { flags: 'wx' }));
  // Awaited below on success. On a failure (a full disk under one temp file, a batch that cannot
  // be read) each may reject or emit its error at any moment, often before the catch is reached:
  // unhandled, that would stop the process.
  const written = [plainDone, gzDone, xzDone, xz.done];
  for (const settled of written) settled.catch(() => undefined);
  try {
    for await (const batch of batches) {
      const text = Buffer.from(packagesIndex(batch));
      plainDigests.updateSync(text);
      await Promise.all([writeAndWait(plainOut, text), writeAndWait(gzip, text), writeAndWait(xz.stdin, text)]);
    }
    plainOut.end();
    gzip.end();
    xz.stdin.end();
    await Promise.all(written);
  } catch (error) {
    plainOut.destroy();
    gzip.destroy();
    xz.kill();
    const settled = await Promise.allSettled(written);
    await Promise.all(Object.values(temps).map((t) => rm(t, { force: true })));
    throw rootCause(error, settled);
  }
  if (o.sync) await Promise.all(Object.values(temps).map(syncFile));
  const xzFinal = xzTap.finish();
  const built: Array<{ name: VariantName; temp: string; prefix: Digests; tail: Buffer; xz: VariantState['xz'] }> = [
    { name: base, temp: temps.plain, prefix: plainDigests, tail: Buffer.alloc(0), xz: null },
    { name: `${base}.gz`, temp: temps.gz, prefix: gzTap.digests, tail: Buffer.alloc(0), xz: null },
    { name: `${base}.xz`, temp: temps.xz, prefix: xzFinal.prefix, tail: xzFinal.tail, xz: xzFinal.xz },
  ];
  const variants: VariantState[] = [];
  for (const b of built) {
    const digests = await b.prefix.finish(b.tail);
    variants.push({ name: b.name, object: await placeObject(indexDir, b.temp, digests), digests, prefix: b.prefix, xz: b.xz });
  }
  await finishWrite(indexDir, variants, o.sync);
  return { indexDir, variants, appends: 0 };
}

/**
 * A change to index files whose new digests are known (so Release can be built and signed) while
 * its files are still being written: `written` settles once they are on disk under their names.
 */
export interface StagedWrite<S> {
  state: S;
  /** Already handled against unhandled-rejection reports: await it to learn of a failure. */
  written: Promise<void>;
}

/** False once an index (or a component's Contents files) has had its appends: the next publish writes it in full. */
export const canAppendTo = (state: AptIndexState, o: IndexFileOptions): boolean => state.appends < o.maxAppends;

/**
 * Extends an index written by this process with more Packages (or Sources) text; null when it
 * cannot. The new digests come first; the files are written behind them (see StagedWrite).
 */
export async function appendToIndex(state: AptIndexState, added: Buffer, o: IndexFileOptions): Promise<StagedWrite<AptIndexState> | null> {
  // Compaction: after enough small members and blocks, a full write compresses everything as one.
  if (!canAppendTo(state, o)) return null;
  const [plainV, gzV, xzV] = state.variants;
  if (!plainV || !gzV || !xzV?.xz) return null;
  // Someone removed an object (a pruning bug, a manual clean-up): start over in full.
  const present = await Promise.all(state.variants.map((v) => stat(v.object).then(() => true, () => false)));
  if (present.includes(false)) return null;
  // The new text as one gzip member and one xz block. A few stanzas (an upload's) are compressed
  // here and stored in the xz block as they are: at rest, handing them to pool threads (zlib,
  // liblzma) took ~1.5 ms of an append for well under 0.1 ms of work. More is compressed on those
  // threads (liblzma single-threaded, so one block).
  const stored = added.length <= STORED_APPEND_BYTES ? storedXzBlock(added, xzV.xz.flags) : null;
  const [member, xzStream] = stored
    ? [gzipSync(added, { level: o.gzipLevel }), null]
    : await Promise.all([
      gzipAsync(added, { level: o.gzipLevel }),
      added.length ? lzma.compress(added, { preset: o.xz.preset ?? 0, check: lzma.CHECK_CRC64, threads: 1 }) : null,
    ]);
  const block = stored ?? (xzStream ? xzBlocksOf(xzStream) : null);
  if (block && !block.flags.equals(xzV.xz.flags)) return null;

  const blocks = [...xzV.xz.blocks, ...(block?.records ?? [])];
  const blockBytes = block?.bytes ?? Buffer.alloc(0);
  const growths: Array<{ from: VariantState; appended: Buffer; tail: Buffer; xz: VariantState['xz'] }> = [
    { from: plainV, appended: added, tail: Buffer.alloc(0), xz: null },
    { from: gzV, appended: member, tail: Buffer.alloc(0), xz: null },
    {
      from: xzV, appended: blockBytes, tail: xzIndexAndFooter(blocks, xzV.xz.flags),
      xz: { blocks, flags: xzV.xz.flags, indexOffset: xzV.xz.indexOffset + blockBytes.length },
    },
  ];
  const next = await Promise.all(growths.map(async ({ from, appended, tail, xz }): Promise<VariantState> => {
    const prefix = await from.prefix.copy().update(appended);
    const digests = await prefix.finish(tail);
    return { name: from.name, object: objectPath(state.indexDir, digests), digests, prefix, xz };
  }));
  const written = (async () => {
    await Promise.all(growths.map(({ from, appended, tail }, i) => extendObject(state.indexDir, from, next[i]!.digests, Buffer.concat([appended, tail]), o)));
    await finishWrite(state.indexDir, next, o.sync);
  })();
  // Awaited by the caller once Release is signed; a failure meanwhile must not count as unhandled.
  written.catch(() => undefined);
  return { state: { indexDir: state.indexDir, variants: next, appends: state.appends + 1 }, written };
}

export function writtenVariants(state: AptIndexState): WrittenVariant[] {
  return state.variants.map((v) => ({ name: v.name, digests: v.digests }));
}
