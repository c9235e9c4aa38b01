/**
 * Bounded byte streams for feed files: every reader counts what it decompresses and stops with a
 * DomainError when a cap is passed, so a hostile or broken feed cannot exhaust memory or disk.
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { createGunzip } from 'node:zlib';
import { DomainError } from '../../errors.js';

/** Error for a feed that is larger than allowed. */
export function feedTooLarge(code: string, message: string): DomainError {
  return new DomainError('too_large', code, message);
}

/** Error for a feed that cannot be read. */
export function feedMalformed(code: string, message: string): DomainError {
  return new DomainError('invalid', code, message);
}

/** The first bytes of a file (fewer when the file is shorter). */
export async function readMagic(path: string, length = 4): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const buf = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buf, 0, length, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** True for the gzip magic number. */
export function isGzip(magic: Buffer): boolean {
  return magic.length >= 2 && magic[0] === 0x1f && magic[1] === 0x8b;
}

/** True for a zip local file header (`PK\x03\x04`) or an empty zip (`PK\x05\x06`). */
export function isZip(magic: Buffer): boolean {
  return magic.length >= 4 && magic[0] === 0x50 && magic[1] === 0x4b && (magic[2] === 3 || magic[2] === 5);
}

/**
 * The file's bytes, gunzipped when it starts with the gzip magic, as chunks; throws
 * `tooLargeCode` once more than `maxBytes` (after decompression) have been produced.
 */
export async function* readFileBounded(path: string, maxBytes: number, tooLargeCode: string): AsyncGenerator<Buffer> {
  const gz = isGzip(await readMagic(path, 2));
  const file = createReadStream(path);
  const source = gz ? file.pipe(createGunzip()) : file;
  if (gz) file.on('error', (err) => source.destroy(err));
  let total = 0;
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > maxBytes) throw feedTooLarge(tooLargeCode, `feed exceeds ${maxBytes} bytes`);
      yield chunk;
    }
  } catch (err) {
    if (err instanceof DomainError) throw err;
    const message = err instanceof Error ? err.message : String(err);
    throw feedMalformed('feed_unreadable', `cannot read feed: ${message}`);
  } finally {
    source.destroy();
    file.destroy();
  }
}
