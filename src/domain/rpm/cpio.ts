/**
 * Streaming reader of the cpio "newc" archive inside an RPM payload (magic 070701, or 070702
 * with checksums). Entries are yielded one at a time with their content as a stream of chunks,
 * so a scanner can look at each file without the archive ever being held in memory.
 */
import { PackageFormatError } from '../errors.js';

/** One archive member. */
export interface CpioEntry {
  /** Path as stored, without the leading './' rpm writes. */
  name: string;
  mode: number;
  size: number;
  /** Regular file (S_IFREG); directories, links and devices have no content to scan. */
  isFile: boolean;
}

/** Bounds for hostile archives. */
export interface CpioLimits {
  maxEntries: number;
  maxNameBytes: number;
}

export const DEFAULT_CPIO_LIMITS: CpioLimits = { maxEntries: 1_000_000, maxNameBytes: 4096 };

const HEADER_SIZE = 110;
const TRAILER = 'TRAILER!!!';

/** Pulls exact byte counts out of an async stream of chunks. */
class ByteReader {
  private pending: Buffer = Buffer.alloc(0);
  private readonly iterator: AsyncIterator<Buffer | Uint8Array | string>;

  constructor(source: AsyncIterable<Buffer | Uint8Array | string>) {
    this.iterator = source[Symbol.asyncIterator]();
  }

  private async more(): Promise<boolean> {
    const next = await this.iterator.next();
    if (next.done) return false;
    const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : Buffer.from(next.value.buffer, next.value.byteOffset, next.value.byteLength);
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    return true;
  }

  async read(n: number): Promise<Buffer> {
    while (this.pending.length < n) {
      if (!(await this.more())) throw new PackageFormatError('truncated_payload', 'the payload archive ends early');
    }
    const out = this.pending.subarray(0, n);
    this.pending = this.pending.subarray(n);
    return out;
  }

  /** Yields the next `progress.left` bytes in chunks as they arrive, counting down. */
  async *chunks(progress: { left: number }): AsyncGenerator<Buffer> {
    while (progress.left > 0) {
      if (this.pending.length === 0 && !(await this.more())) {
        throw new PackageFormatError('truncated_payload', 'the payload archive ends inside a file');
      }
      const take = Math.min(progress.left, this.pending.length);
      const out = this.pending.subarray(0, take);
      this.pending = this.pending.subarray(take);
      progress.left -= take;
      yield out;
    }
  }

  async skip(n: number): Promise<void> {
    const progress = { left: n };
    for await (const chunk of this.chunks(progress)) void chunk;
  }

  async close(): Promise<void> {
    await this.iterator.return?.();
  }
}

function hexField(header: Buffer, index: number): number {
  const text = header.toString('latin1', 6 + index * 8, 14 + index * 8);
  if (!/^[0-9a-fA-F]{8}$/.test(text)) throw new PackageFormatError('bad_payload_archive', 'bad cpio header field');
  return Number.parseInt(text, 16);
}

const pad4 = (n: number): number => (4 - (n % 4)) % 4;

/**
 * Iterates the members of a newc cpio archive. Read each `content` before asking for the next
 * entry if you need it; unread content is skipped.
 */
export async function* readCpioEntries(
  archive: AsyncIterable<Buffer | Uint8Array | string>,
  limits: CpioLimits = DEFAULT_CPIO_LIMITS,
): AsyncGenerator<{ entry: CpioEntry; content: AsyncIterable<Buffer> }> {
  const reader = new ByteReader(archive);
  try {
    for (let count = 0; ; count++) {
      if (count > limits.maxEntries) throw new PackageFormatError('bad_payload_archive', 'too many archive members');
      const header = await reader.read(HEADER_SIZE);
      const magic = header.toString('latin1', 0, 6);
      if (magic === '07070X') {
        throw new PackageFormatError('unsupported_payload_format', 'large-file (stripped) cpio payloads are not supported');
      }
      if (magic !== '070701' && magic !== '070702') throw new PackageFormatError('bad_payload_archive', 'not a newc cpio archive');
      const mode = hexField(header, 1);
      const size = hexField(header, 6);
      const nameSize = hexField(header, 11);
      if (nameSize < 1 || nameSize > limits.maxNameBytes) throw new PackageFormatError('bad_payload_archive', 'bad cpio name size');
      const rawName = await reader.read(nameSize);
      await reader.read(pad4(HEADER_SIZE + nameSize));
      const name = rawName.toString('utf8', 0, nameSize - 1).replace(/^\.\//, '/');
      if (name === TRAILER) return;
      const progress = { left: size };
      const entry: CpioEntry = { name, mode, size, isFile: (mode & 0o170000) === 0o100000 };
      yield { entry, content: reader.chunks(progress) };
      await reader.skip(progress.left);
      await reader.read(pad4(size));
    }
  } finally {
    await reader.close();
  }
}
