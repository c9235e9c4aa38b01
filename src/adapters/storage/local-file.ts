import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';

/**
 * A read stream of a file the caller already holds the path of (an upload's temp file, a pooled
 * file from `PackageFiles.storedPath`): services stream such files through here, never `node:fs`.
 */
export const openLocalFile = (path: string): Readable => createReadStream(path);

/** The whole of a small local file as text; throws `too_large` past `maxBytes` (read no further). */
export async function readLocalText(path: string, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 64 * 1024 }) as AsyncIterable<Buffer>) {
    length += chunk.length;
    if (length > maxBytes) throw Object.assign(new Error(`${path} is larger than ${maxBytes} bytes`), { code: 'too_large' });
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, length).toString('utf8');
}

/** The first `bytes` bytes of a local file (fewer when it is shorter). */
export async function readLocalHead(path: string, bytes: number): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const buf = Buffer.alloc(bytes);
    const { bytesRead } = await handle.read(buf, 0, bytes, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
