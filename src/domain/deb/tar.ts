/**
 * Bounded walk over a (compressed) tar stream held in an ar member: every entry header is
 * reported, data is discarded unless the visitor asks to capture it (up to a cap). Used for
 * control.tar (capturing `control`, `conffiles`) and data.tar (listing files).
 */
import type { Readable } from 'node:stream';
import tarStream from 'tar-stream';
import { createBoundedDecompressor, type Compression, type DecompressionLimits } from '../compression.js';
import { DomainError, PackageFormatError } from '../errors.js';
import { chainStreams } from '../stream-chain.js';

export type TarEntryType =
  | 'file'
  | 'link'
  | 'symlink'
  | 'directory'
  | 'character-device'
  | 'block-device'
  | 'fifo'
  | 'contiguous-file';

/** One tar entry header. */
export interface TarEntryHeader {
  /** The name as stored, e.g. `./usr/bin/hello`. */
  name: string;
  size: number;
  mode: number;
  type: TarEntryType;
  /** Target of a symlink or hard link, else null. */
  linkTarget: string | null;
  user: string;
  group: string;
}

/**
 * What to do with an entry's data: capture it whole (≤ limit bytes) or skip it. `tooLarge` makes
 * its error only once the limit is passed: an Error captures a stack, and one made for every
 * control file was 4% of reading a tiny .deb.
 */
export type CaptureDecision = { capture: true; maxBytes: number; tooLarge: () => PackageFormatError } | { capture: false };

export interface TarVisitor {
  /** Called for each entry; may throw a PackageFormatError to abort the walk. */
  onEntry(header: TarEntryHeader): CaptureDecision;
  /** Receives the captured data of an entry for which onEntry asked to capture. */
  onData?(header: TarEntryHeader, data: Buffer): void;
}

export interface TarWalkLimits {
  decompression: DecompressionLimits;
  maxEntries: number;
  tooManyEntries: () => PackageFormatError;
}

/** Walks the tar inside `source` (compressed as `compression`); rejects with PackageFormatError. */
export async function walkTar(
  source: Readable,
  compression: Compression,
  compressedSize: number,
  limits: TarWalkLimits,
  visitor: TarVisitor,
): Promise<void> {
  const extract = tarStream.extract();
  let entries = 0;
  extract.on('entry', (raw, stream, next) => {
    // A failure anywhere destroys the extractor, which destroys the current entry stream with
    // the same error: that error is reported by the chain below, not by the entry.
    stream.on('error', () => undefined);
    try {
      entries += 1;
      if (entries > limits.maxEntries) throw limits.tooManyEntries();
      // tar-stream never ends the entry stream of a directory that declares content, so waiting
      // for its end would hang the upload (found by fuzz/targets/deb-reader).
      if (raw.type === 'directory' && raw.size !== undefined && raw.size > 0) {
        throw new PackageFormatError('bad_tar_archive', `invalid tar archive: directory ${JSON.stringify(raw.name)} declares ${raw.size} bytes of content`);
      }
      const header = toHeader(raw);
      const decision = visitor.onEntry(header);
      if (!decision.capture) {
        stream.on('end', () => next());
        stream.resume();
        return;
      }
      const chunks: Buffer[] = [];
      let length = 0;
      stream.on('data', (chunk: unknown) => {
        if (!Buffer.isBuffer(chunk)) return;
        length += chunk.length;
        if (length > decision.maxBytes) {
          extract.destroy(decision.tooLarge());
          return;
        }
        chunks.push(chunk);
      });
      stream.on('end', () => {
        try {
          visitor.onData?.(header, Buffer.concat(chunks, length));
          next();
        } catch (error) {
          extract.destroy(asError(error));
        }
      });
    } catch (error) {
      stream.resume();
      extract.destroy(asError(error));
    }
  });
  try {
    await chainStreams(source, createBoundedDecompressor(compression, limits.decompression, compressedSize), extract);
  } catch (error) {
    if (error instanceof DomainError) throw error;
    const detail = error instanceof Error ? error.message : String(error);
    throw new PackageFormatError('bad_tar_archive', `invalid tar archive: ${detail}`);
  }
}

const ENTRY_TYPES: ReadonlySet<string> = new Set<TarEntryType>([
  'file',
  'link',
  'symlink',
  'directory',
  'character-device',
  'block-device',
  'fifo',
  'contiguous-file',
]);

function toHeader(raw: tarStream.Header): TarEntryHeader {
  // tar-stream reports unknown type flags as null and consumes pax/GNU long-name entries itself.
  const rawType: unknown = raw.type;
  if (typeof rawType !== 'string' || !ENTRY_TYPES.has(rawType)) {
    throw new PackageFormatError('bad_tar_archive', `tar entry ${JSON.stringify(String(raw.name).slice(0, 200))} has an unsupported type`);
  }
  const type = rawType as TarEntryType;
  return {
    name: raw.name,
    size: raw.size ?? 0,
    mode: raw.mode ?? 0,
    type,
    linkTarget: type === 'symlink' || type === 'link' ? (raw.linkname ?? '') : null,
    user: raw.uname ?? String(raw.uid ?? ''),
    group: raw.gname ?? String(raw.gid ?? ''),
  };
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
