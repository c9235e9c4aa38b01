/**
 * Reader for the `ar` container used by .deb files (see deb(5), ar(5)).
 *
 * Only headers are read: members are located by offset and streamed on demand, so a 500 MB
 * package never sits in memory. Layout: the 8-byte magic `!<arch>\n`, then per member a 60-byte
 * ASCII header (name 16, mtime 12, uid 6, gid 6, mode 8, size 10, terminator "`\n") followed by
 * the data, padded with one '\n' to an even offset.
 */
import { createReadStream } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { PackageFormatError } from '../errors.js';
import { knownPrefix, type KnownBytes } from '../known-bytes.js';

export const AR_MAGIC = '!<arch>\n';
const HEADER_BYTES = 60;
const TERMINATOR = '`\n';

/** One member of an ar archive: where its data starts in the file and how long it is. */
export interface ArMember {
  name: string;
  /** Byte offset of the member's data (after the header and any BSD long name). */
  offset: number;
  size: number;
  mtime: number;
  mode: number;
}

/** Caps applied while walking the archive. */
export interface ArLimits {
  maxMembers: number;
  maxNameLength: number;
  /** Cap on a GNU long-name table (`//` member) that is read into memory. */
  maxNameTableBytes: number;
}

export const DEFAULT_AR_LIMITS: ArLimits = { maxMembers: 64, maxNameLength: 255, maxNameTableBytes: 64 * 1024 };

/**
 * An ar archive opened once for several reads. Its first `PREFIX_BYTES` are read up front, and
 * every read or member inside them is served from memory: a .deb's headers, debian-binary,
 * control.tar and the start of data.tar usually lie there, so reading a package takes one open
 * and one read instead of a round trip to the thread pool for each header and member.
 */
export class ArFile {
  private constructor(
    private readonly path: string,
    /** Opened on the first read past the prefix when the prefix came from memory. */
    private handle: Promise<FileHandle> | null,
    readonly size: number,
    private readonly prefix: Buffer,
  ) {}

  /**
   * `known`: the file's size and first bytes, already in memory (the upload just received them).
   * When they hold the prefix, the file is opened only if a read goes past it: never for a tiny package.
   */
  static async open(path: string, prefixBytes = AR_PREFIX_BYTES, known?: KnownBytes): Promise<ArFile> {
    const prefix = knownPrefix(known, prefixBytes);
    if (known && prefix) return new ArFile(path, null, known.size, prefix);
    const handle = await open(path, 'r');
    try {
      const size = (await handle.stat()).size;
      return new ArFile(path, Promise.resolve(handle), size, await readExactly(handle, 0, Math.min(size, prefixBytes)));
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** The members, headers only (data is never read). */
  members(limits: Partial<ArLimits> = {}): Promise<ArMember[]> {
    return listMembers(this, { ...DEFAULT_AR_LIMITS, ...limits });
  }

  /** `length` bytes at `position`; PackageFormatError `truncated_archive` past the end. */
  read(position: number, length: number): Promise<Buffer> {
    if (position + length <= this.prefix.length) return Promise.resolve(this.prefix.subarray(position, position + length));
    return this.opened().then((handle) => readExactly(handle, position, length));
  }

  private opened(): Promise<FileHandle> {
    this.handle ??= open(this.path, 'r');
    return this.handle;
  }

  /** A whole (small) member, refused when larger than `maxBytes`. */
  async memberBytes(member: ArMember, maxBytes: number): Promise<Buffer> {
    if (member.size > maxBytes) {
      throw new PackageFormatError('member_too_large', `ar member ${member.name} is ${member.size} bytes (max ${maxBytes})`);
    }
    return this.read(member.offset, member.size);
  }

  /** The first `bytes` bytes of a member (fewer when it is shorter). */
  memberHead(member: ArMember, bytes: number): Promise<Buffer> {
    return this.read(member.offset, Math.min(bytes, member.size));
  }

  /** Streams a member: from memory when it lies in the prefix, else from the file. */
  stream(member: Pick<ArMember, 'offset' | 'size'>): Readable {
    if (member.size === 0 || member.offset + member.size > this.prefix.length) return openArMember(this.path, member);
    return Readable.from([this.prefix.subarray(member.offset, member.offset + member.size)], { objectMode: false });
  }

  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = null;
    await handle?.then((h) => h.close(), () => undefined);
  }
}

/** What ArFile reads up front: a tiny package whole, the control part of most real ones. */
export const AR_PREFIX_BYTES = 64 * 1024;

/** Lists the members of the ar archive at `path` (headers only; data is never read). */
export async function readArMembers(path: string, limits: Partial<ArLimits> = {}): Promise<ArMember[]> {
  const file = await ArFile.open(path, 4096);
  try {
    return await file.members(limits);
  } finally {
    await file.close();
  }
}

/** Streams the bytes of one member (as returned by readArMembers) from the file at `path`. */
export function openArMember(path: string, member: Pick<ArMember, 'offset' | 'size'>): Readable {
  if (member.size === 0) return Readable.from([]);
  return createReadStream(path, { start: member.offset, end: member.offset + member.size - 1 });
}

/** Reads a whole (small) member into memory, refusing members larger than `maxBytes`. */
export async function readArMemberBytes(path: string, member: ArMember, maxBytes: number): Promise<Buffer> {
  const file = await ArFile.open(path, 0);
  try {
    return await file.memberBytes(member, maxBytes);
  } finally {
    await file.close();
  }
}

async function listMembers(file: ArFile, limits: ArLimits): Promise<ArMember[]> {
  const fileSize = file.size;
  if (fileSize < AR_MAGIC.length) throw new PackageFormatError('not_ar_archive', 'file is too short to be an ar archive');
  const magic = await file.read(0, AR_MAGIC.length);
  if (magic.toString('latin1') !== AR_MAGIC) throw new PackageFormatError('not_ar_archive', 'missing !<arch> magic');

  const members: ArMember[] = [];
  let nameTable: Buffer | null = null;
  let position = AR_MAGIC.length;
  while (position < fileSize) {
    if (members.length >= limits.maxMembers) {
      throw new PackageFormatError('too_many_members', `ar archive has more than ${limits.maxMembers} members`);
    }
    if (position + HEADER_BYTES > fileSize) {
      throw new PackageFormatError('truncated_archive', `ar header at offset ${position} is cut short`);
    }
    const header = parseHeader(await file.read(position, HEADER_BYTES), position);
    let dataOffset = position + HEADER_BYTES;
    let size = header.size;
    if (dataOffset + size > fileSize) {
      throw new PackageFormatError(
        'truncated_archive',
        `ar member at offset ${position} claims ${size} bytes but the file ends ${fileSize - dataOffset} bytes later`,
      );
    }

    let name: string | null;
    const bsdLength = /^#1\/(\d+)$/.exec(header.rawName);
    if (bsdLength) {
      // BSD long name: stored in front of the data and counted in the size.
      const length = Number(bsdLength[1]);
      if (length > limits.maxNameLength || length > size) {
        throw new PackageFormatError('bad_member_name', `ar member name length ${length} is invalid`);
      }
      name = (await file.read(dataOffset, length)).toString('latin1').replace(/\0+$/, '');
      dataOffset += length;
      size -= length;
    } else if (header.rawName === '//') {
      // GNU long-name table: later names `/<offset>` point into it.
      if (size > limits.maxNameTableBytes) {
        throw new PackageFormatError('bad_member_name', `ar long-name table of ${size} bytes is too large`);
      }
      nameTable = await file.read(dataOffset, size);
      name = null;
    } else if (header.rawName === '/' || header.rawName === '/SYM64/') {
      name = null; // symbol tables carry no member
    } else if (/^\/\d+$/.test(header.rawName)) {
      name = gnuLongName(nameTable, Number(header.rawName.slice(1)), limits);
    } else {
      // GNU terminates short names with '/', dpkg-deb and BSD pad with spaces only.
      name = header.rawName.endsWith('/') ? header.rawName.slice(0, -1) : header.rawName;
    }

    if (name !== null) {
      validateMemberName(name, limits);
      members.push({ name, offset: dataOffset, size, mtime: header.mtime, mode: header.mode });
    }
    position = position + HEADER_BYTES + header.size;
    position += position % 2; // even padding; a missing pad byte after the last member is tolerated
  }
  return members;
}

interface RawHeader {
  rawName: string;
  size: number;
  mtime: number;
  mode: number;
}

function parseHeader(bytes: Buffer, position: number): RawHeader {
  if (bytes.toString('latin1', 58, 60) !== TERMINATOR) {
    throw new PackageFormatError('bad_member_header', `ar header at offset ${position} lacks its terminator`);
  }
  const field = (start: number, length: number): string => bytes.toString('latin1', start, start + length).trimEnd();
  const sizeText = field(48, 10);
  if (!/^\d+$/.test(sizeText)) {
    throw new PackageFormatError('bad_member_header', `ar header at offset ${position} has size "${sizeText}"`);
  }
  const size = Number(sizeText);
  const mtimeText = field(16, 12);
  const modeText = field(40, 8);
  return {
    rawName: field(0, 16),
    size,
    mtime: /^\d+$/.test(mtimeText) ? Number(mtimeText) : 0,
    mode: /^[0-7]+$/.test(modeText) ? parseInt(modeText, 8) : 0,
  };
}

function gnuLongName(table: Buffer | null, offset: number, limits: ArLimits): string {
  if (table === null || offset >= table.length) {
    throw new PackageFormatError('bad_member_name', `ar long name /${offset} has no name table entry`);
  }
  const end = table.indexOf('/\n', offset, 'latin1');
  if (end < 0 || end - offset > limits.maxNameLength) {
    throw new PackageFormatError('bad_member_name', `ar long name /${offset} is unterminated or too long`);
  }
  return table.toString('latin1', offset, end);
}

function validateMemberName(name: string, limits: ArLimits): void {
  if (name.length === 0 || name.length > limits.maxNameLength || /[\0-\x1f/\\]/.test(name)) {
    throw new PackageFormatError('bad_member_name', `ar member name ${JSON.stringify(name)} is invalid`);
  }
}

async function readExactly(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await handle.read(buffer, done, length - done, position + done);
    if (bytesRead === 0) throw new PackageFormatError('truncated_archive', `file ends before offset ${position + length}`);
    done += bytesRead;
  }
  return buffer;
}
