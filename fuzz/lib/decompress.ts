/** The checks shared by the three decompression targets. */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { gunzipSync } from 'node:zlib';
import { createBoundedDecompressor, decompressToBuffer, RATIO_FLOOR_BYTES, type Compression, type DecompressionLimits } from '../../src/domain/compression.js';
import { PackageFormatError } from '../../src/domain/errors.js';
import { invariant } from './harness.js';

/** Smaller than the readers' caps, so that a bomb costs little time; the logic is the same. */
export const LIMITS: DecompressionLimits = { maxOutputBytes: 1024 * 1024, maxRatio: 100 };

/** The same bytes through the stream, written in three pieces and read with pauses. */
async function streamed(kind: Compression, data: Buffer): Promise<Buffer> {
  const cuts = [0, Math.floor(data.length / 3), Math.floor((2 * data.length) / 3), data.length];
  const pieces = [0, 1, 2].map((i) => data.subarray(cuts[i], cuts[i + 1]));
  const out: Buffer[] = [];
  await pipeline(Readable.from(pieces), createBoundedDecompressor(kind, LIMITS, data.length), async (source: AsyncIterable<Buffer>) => {
    for await (const chunk of source) {
      out.push(chunk);
      if (out.length % 4 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
  });
  return Buffer.concat(out);
}

function withinLimits(output: Buffer, inputLength: number): boolean {
  return output.length <= LIMITS.maxOutputBytes && output.length <= Math.max(inputLength, RATIO_FLOOR_BYTES) * LIMITS.maxRatio;
}

/** Errors of the two runs compared by code: the typed error, or the failure itself. */
async function outcome(run: () => Promise<Buffer>): Promise<Buffer | PackageFormatError> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof PackageFormatError) return error;
    throw error;
  }
}

export async function decompressionCheck(kind: Compression, data: Buffer): Promise<void> {
  const whole = await outcome(() => decompressToBuffer(kind, data, LIMITS));
  // A bomb costs its most (liblzma decodes a whole 4 KiB input slice before it can be stopped,
  // fzstd copies its window per block): one refusal per input, not two.
  if (whole instanceof PackageFormatError && whole.code === 'decompression_bomb') throw whole;
  const pieces = await outcome(() => streamed(kind, data));
  if (whole instanceof PackageFormatError || pieces instanceof PackageFormatError) {
    // A stream is refused whatever the chunking. Not always for the same reason: a stream both
    // corrupt and too large may show either first, depending on where the input slices fall.
    invariant(whole instanceof PackageFormatError && pieces instanceof PackageFormatError, () => `${kind}: refused only when ${whole instanceof PackageFormatError ? 'whole' : 'in pieces'}: ${String(whole instanceof PackageFormatError ? whole.message : (pieces as PackageFormatError).message)}`);
    throw whole;
  }
  invariant(withinLimits(whole, data.length), () => `${kind}: ${whole.length} bytes out of ${data.length} passed the limits`);
  invariant(whole.equals(pieces), () => `${kind}: ${whole.length} bytes whole, ${pieces.length} different bytes in pieces`);
  if (kind === 'gzip') {
    let reference: Buffer | null = null;
    try {
      reference = gunzipSync(data, { maxOutputLength: LIMITS.maxOutputBytes + 1 });
    } catch {
      // zlib refuses what we accepted: compared below.
    }
    invariant(reference !== null && reference.equals(whole), () => `gzip: zlib ${reference === null ? 'refuses' : `gives ${reference.length} bytes for`} what we decoded to ${whole.length} bytes`);
  }
}
