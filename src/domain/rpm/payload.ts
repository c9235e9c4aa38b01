/**
 * Access to the decompressed payload (a cpio archive) of an RPM, streamed and bounded.
 */
import { createReadStream } from 'node:fs';
import { pipeline, type Readable } from 'node:stream';
import { createBoundedDecompressor, type Compression, type DecompressionLimits } from '../compression.js';
import { PackageFormatError } from '../errors.js';
import { DEFAULT_CPIO_LIMITS, readCpioEntries, type CpioEntry, type CpioLimits } from './cpio.js';
import type { RpmPackage } from './package.js';

/** Caps for the decompressed payload. */
export interface PayloadLimits {
  maxOutputBytes: number;
  /** Largest accepted decompressed/compressed ratio. */
  maxRatio: number;
  /** An xz payload's decoder in another process (DecompressionLimits.xzDecoder). */
  xzDecoder?: DecompressionLimits['xzDecoder'];
}

export const DEFAULT_PAYLOAD_LIMITS: PayloadLimits = { maxOutputBytes: 4 * 1024 ** 3, maxRatio: 500 };

/** PAYLOADCOMPRESSOR values this reader decodes. bzip2 and legacy lzma are refused. */
const COMPRESSORS: Record<string, Compression> = {
  gzip: 'gzip',
  xz: 'xz',
  zstd: 'zstd',
  identity: 'none',
  none: 'none',
};

/** The decompression to apply to a package's payload, or a PackageFormatError. */
export function payloadCompression(pkg: Pick<RpmPackage, 'payloadCompressor' | 'payloadFormat'>): Compression {
  if (pkg.payloadFormat !== 'cpio') {
    throw new PackageFormatError('unsupported_payload_format', `payload format ${pkg.payloadFormat} is not supported`);
  }
  const kind = COMPRESSORS[pkg.payloadCompressor];
  if (!kind) {
    throw new PackageFormatError('unsupported_payload_compressor', `payload compressor ${pkg.payloadCompressor} is not supported`);
  }
  return kind;
}

type PayloadPackage = Pick<RpmPackage, 'payloadCompressor' | 'payloadFormat' | 'payloadOffset' | 'packageSize' | 'archiveSize'>;

/** The decompressed payload of the package at `path` as a stream; errors arrive on the stream. */
export function openRpmPayload(path: string, pkg: PayloadPackage, limits: PayloadLimits = DEFAULT_PAYLOAD_LIMITS): Readable {
  const kind = payloadCompression(pkg);
  if (pkg.archiveSize > limits.maxOutputBytes) {
    throw new PackageFormatError('payload_too_large', `the payload declares ${pkg.archiveSize} bytes (limit ${limits.maxOutputBytes})`);
  }
  const compressedSize = Math.max(0, pkg.packageSize - pkg.payloadOffset);
  const file = createReadStream(path, { start: pkg.payloadOffset });
  const decompressor = createBoundedDecompressor(kind, limits, compressedSize);
  // pipeline destroys every stage with the first error, so the consumer sees it on `decompressor`.
  return pipeline(file, decompressor, () => undefined);
}

/**
 * Iterates the files in the package's payload, e.g. to hand each one to an antivirus scanner.
 * Each `content` must be consumed (or abandoned) before the next entry is requested.
 */
export async function* iterateRpmPayload(
  path: string,
  pkg: PayloadPackage,
  limits: PayloadLimits = DEFAULT_PAYLOAD_LIMITS,
  cpioLimits: CpioLimits = DEFAULT_CPIO_LIMITS,
): AsyncGenerator<{ entry: CpioEntry; content: AsyncIterable<Buffer> }> {
  const stream = openRpmPayload(path, pkg, limits);
  try {
    yield* readCpioEntries(stream, cpioLimits);
  } finally {
    stream.destroy();
  }
}
