/**
 * The reverse-proxy access log files ACCESS_LOG_PATH names, in a local folder, plain or gzipped.
 * Positions count decompressed bytes, so content keeps its positions when rotation compresses it.
 */
import { createReadStream } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { LogGlob } from '../../domain/downloads/log-glob.js';

export interface AccessLogFile {
  path: string;
  gzip: boolean;
  /** Bytes on disk when listed (compressed bytes for a gzip file). */
  size: number;
  mtimeMs: number;
}

export interface AccessLogFiles {
  /** The folder listed, for messages. */
  readonly dir: string;
  /** The matching non-empty regular files, in no particular order; throws when the folder cannot be read. */
  list(): Promise<AccessLogFile[]>;
  /**
   * The content's first line with its newline, cut at `maxBytes`; null while the content has
   * neither (or cannot be read yet, as a gzip file still being written).
   */
  firstLine(file: AccessLogFile, maxBytes: number): Promise<Buffer | null>;
  /**
   * The content from `position`: up to the size listed for a plain file (what is appended meanwhile
   * is read next time), to the end of the stream for a gzip file, which throws when it ends early.
   * Breaking out of the iteration closes the file.
   */
  read(file: AccessLogFile, position: number): AsyncIterable<Buffer>;
}

function openContent(file: AccessLogFile, start: number): Readable {
  if (file.gzip) {
    // pipe() does not forward errors: a file rotated away between listing and reading must fail
    // the read, not surface later as an uncaught exception.
    const source = createReadStream(file.path);
    const gunzip = createGunzip();
    source.once('error', (error) => gunzip.destroy(error));
    return source.pipe(gunzip);
  }
  return createReadStream(file.path, { start, end: file.size - 1 });
}

async function* fromPosition(file: AccessLogFile, position: number): AsyncGenerator<Buffer> {
  const stream = openContent(file, position);
  // A gzip position can only be reached by decompressing the bytes before it.
  let skip = file.gzip ? position : 0;
  try {
    for await (const raw of stream as AsyncIterable<Buffer>) {
      let chunk = raw;
      if (skip > 0) {
        const dropped = Math.min(skip, chunk.length);
        skip -= dropped;
        chunk = chunk.subarray(dropped);
        if (chunk.length === 0) continue;
      }
      yield chunk;
    }
  } finally {
    stream.destroy();
  }
}

async function firstLine(file: AccessLogFile, maxBytes: number): Promise<Buffer | null> {
  const stream = openContent(file, 0);
  const head: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const newline = chunk.indexOf(10);
      head.push(newline === -1 ? chunk : chunk.subarray(0, newline + 1));
      length += newline === -1 ? chunk.length : newline + 1;
      if (newline !== -1 || length >= maxBytes) return Buffer.concat(head).subarray(0, maxBytes);
    }
  } catch {
    // A gzip file still being written ends early: its line is read once it is complete.
  } finally {
    stream.destroy();
  }
  return null;
}

/** The files of `glob`'s folder whose names it matches. */
export function localAccessLogFiles(glob: LogGlob): AccessLogFiles {
  return {
    dir: glob.dir,
    async list() {
      const names = (await readdir(glob.dir)).filter((n) => glob.matches(n));
      const files: AccessLogFile[] = [];
      for (const name of names) {
        const path = join(glob.dir, name);
        const info = await stat(path).catch(() => null);
        if (!info?.isFile() || info.size === 0) continue;
        const handle = await open(path, 'r');
        const magic = Buffer.alloc(2);
        try {
          await handle.read(magic, 0, 2, 0);
        } finally {
          await handle.close();
        }
        files.push({ path, gzip: magic[0] === 0x1f && magic[1] === 0x8b, size: info.size, mtimeMs: info.mtimeMs });
      }
      return files;
    },
    firstLine,
    read: fromPosition,
  };
}
