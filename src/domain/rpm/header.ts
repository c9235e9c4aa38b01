/**
 * The RPM header structure: an index of 16-byte entries (tag, type, offset, count) followed by
 * a data store. Used twice in a package file: the signature header and the main header.
 *
 * Everything here reads untrusted bytes: counts and offsets are validated against the store,
 * values are decoded lazily (only the tags a caller asks for) and the total number of bytes
 * decoded is capped, so overlapping entries cannot multiply memory use.
 */
import { PackageFormatError } from '../errors.js';
import { RpmType } from './tags.js';

/** Magic of a header structure: 8e ad e8 01. */
export const HEADER_MAGIC = Buffer.from([0x8e, 0xad, 0xe8, 0x01]);
/** Size of the header intro: magic (4), reserved (4), index count (4), store size (4). */
export const HEADER_INTRO_SIZE = 16;
/** Size of one index entry. */
export const INDEX_ENTRY_SIZE = 16;

/** Bounds applied while parsing a header. */
export interface HeaderLimits {
  /** Largest accepted index + store, in bytes. */
  maxHeaderBytes: number;
  /** Largest accepted number of index entries. */
  maxIndexEntries: number;
  /** Largest accepted element count of one array entry. */
  maxArrayCount: number;
  /** Largest accepted single string, in bytes. */
  maxStringBytes: number;
}

/** Defaults: rpm itself refuses more than 65535 tags; 64 MiB is far above any real header. */
export const DEFAULT_HEADER_LIMITS: HeaderLimits = {
  maxHeaderBytes: 64 * 1024 * 1024,
  maxIndexEntries: 65_535,
  maxArrayCount: 2_000_000,
  maxStringBytes: 8 * 1024 * 1024,
};

/** Index count and store size announced by a header intro. */
export interface HeaderIntro {
  indexCount: number;
  storeSize: number;
  /** Bytes of index + store that follow the intro. */
  bodySize: number;
}

interface IndexEntry {
  readonly tag: number;
  readonly type: number;
  readonly offset: number;
  readonly count: number;
}

/** Values a tag can decode to. */
type Decoded = string[] | number[] | Buffer;

const FIXED_WIDTH: Partial<Record<number, number>> = {
  [RpmType.CHAR]: 1,
  [RpmType.INT8]: 1,
  [RpmType.INT16]: 2,
  [RpmType.INT32]: 4,
  [RpmType.INT64]: 8,
  [RpmType.BIN]: 1,
};

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Header strings carry no declared encoding. Valid UTF-8 is taken as is; anything else is read
 * as Latin-1 the way createrepo_c does (bytes 0x80-0xBF, C1 controls in Latin-1, are dropped).
 */
export function decodeHeaderText(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    let out = '';
    for (const b of bytes) {
      if (b >= 0x80 && b < 0xc0) continue;
      out += String.fromCharCode(b);
    }
    return out;
  }
}

/** Validates a 16-byte header intro (magic, counts) against the limits. */
export function parseHeaderIntro(intro: Buffer, what: string, limits: HeaderLimits): HeaderIntro {
  if (intro.length < HEADER_INTRO_SIZE) {
    throw new PackageFormatError('truncated_header', `${what} header is truncated`);
  }
  if (!intro.subarray(0, 4).equals(HEADER_MAGIC)) {
    throw new PackageFormatError('bad_header_magic', `${what} header has a wrong magic`);
  }
  const indexCount = intro.readUInt32BE(8);
  const storeSize = intro.readUInt32BE(12);
  if (indexCount < 1 || indexCount > limits.maxIndexEntries) {
    throw new PackageFormatError('bad_header_index', `${what} header announces ${indexCount} index entries`);
  }
  const bodySize = indexCount * INDEX_ENTRY_SIZE + storeSize;
  if (bodySize > limits.maxHeaderBytes) {
    throw new PackageFormatError('header_too_large', `${what} header is ${bodySize} bytes (limit ${limits.maxHeaderBytes})`);
  }
  return { indexCount, storeSize, bodySize };
}

/** One parsed header: typed, validated, lazily decoded access to its tags. */
export class RpmHeader {
  private readonly cache = new Map<number, Decoded>();
  private decodedBytes = 0;
  private readonly decodeBudget: number;

  private constructor(
    private readonly what: string,
    private readonly store: Buffer,
    private readonly entries: ReadonlyMap<number, IndexEntry>,
    private readonly limits: HeaderLimits,
  ) {
    // A well-formed header decodes each store byte about once; overlap beyond that is hostile.
    this.decodeBudget = store.length * 2 + 65_536;
  }

  /** Parses the index + store that follow an intro; `body` must be exactly `intro.bodySize` bytes. */
  static parse(what: string, intro: HeaderIntro, body: Buffer, limits: HeaderLimits = DEFAULT_HEADER_LIMITS): RpmHeader {
    if (body.length < intro.bodySize) {
      throw new PackageFormatError('truncated_header', `${what} header is truncated`);
    }
    const storeStart = intro.indexCount * INDEX_ENTRY_SIZE;
    const store = body.subarray(storeStart, storeStart + intro.storeSize);
    const entries = new Map<number, IndexEntry>();
    for (let i = 0; i < intro.indexCount; i++) {
      const at = i * INDEX_ENTRY_SIZE;
      const entry: IndexEntry = {
        tag: body.readUInt32BE(at),
        type: body.readUInt32BE(at + 4),
        offset: body.readUInt32BE(at + 8),
        count: body.readUInt32BE(at + 12),
      };
      validateEntry(what, entry, store.length, limits);
      // rpm keeps the first occurrence of a duplicated tag; so do we.
      if (!entries.has(entry.tag)) entries.set(entry.tag, entry);
    }
    return new RpmHeader(what, store, entries, limits);
  }

  /** Whether the tag is present. */
  has(tag: number): boolean {
    return this.entries.has(tag);
  }

  /** Tags present, in index order. */
  tags(): number[] {
    return [...this.entries.keys()];
  }

  /** A STRING, or the first element of an I18NSTRING / STRING_ARRAY; undefined when absent. */
  string(tag: number): string | undefined {
    const values = this.stringArray(tag);
    return values?.[0];
  }

  /** A STRING_ARRAY (or any string-typed tag, as an array); undefined when absent. */
  stringArray(tag: number): string[] | undefined {
    const entry = this.entries.get(tag);
    if (!entry) return undefined;
    if (entry.type !== RpmType.STRING && entry.type !== RpmType.STRING_ARRAY && entry.type !== RpmType.I18NSTRING) {
      throw this.typeError(entry, 'a string');
    }
    return this.decode(entry) as string[];
  }

  /** Integer values of a CHAR/INT8/INT16/INT32/INT64 tag; undefined when absent. */
  numbers(tag: number): number[] | undefined {
    const entry = this.entries.get(tag);
    if (!entry) return undefined;
    if (entry.type < RpmType.CHAR || entry.type > RpmType.INT64) throw this.typeError(entry, 'an integer');
    return this.decode(entry) as number[];
  }

  /** The first value of an integer tag; undefined when absent. */
  number(tag: number): number | undefined {
    return this.numbers(tag)?.[0];
  }

  /** The bytes of a BIN tag; undefined when absent. */
  bin(tag: number): Buffer | undefined {
    const entry = this.entries.get(tag);
    if (!entry) return undefined;
    if (entry.type !== RpmType.BIN) throw this.typeError(entry, 'binary');
    return this.decode(entry) as Buffer;
  }

  private typeError(entry: IndexEntry, expected: string): PackageFormatError {
    return new PackageFormatError('bad_header_value', `${this.what} header tag ${entry.tag} has type ${entry.type}, expected ${expected}`);
  }

  private charge(bytes: number): void {
    this.decodedBytes += bytes;
    if (this.decodedBytes > this.decodeBudget) {
      throw new PackageFormatError('bad_header_index', `${this.what} header entries overlap beyond reason`);
    }
  }

  private decode(entry: IndexEntry): Decoded {
    const cached = this.cache.get(entry.tag);
    if (cached) return cached;
    let value: Decoded;
    const { store } = this;
    if (entry.type === RpmType.BIN) {
      this.charge(entry.count);
      value = Buffer.from(store.subarray(entry.offset, entry.offset + entry.count));
    } else if (entry.type >= RpmType.CHAR && entry.type <= RpmType.INT64) {
      const width = FIXED_WIDTH[entry.type] ?? 1;
      this.charge(entry.count * width);
      const numbers = new Array<number>(entry.count);
      for (let i = 0; i < entry.count; i++) {
        const at = entry.offset + i * width;
        if (width === 1) numbers[i] = store.readUInt8(at);
        else if (width === 2) numbers[i] = store.readUInt16BE(at);
        else if (width === 4) numbers[i] = store.readUInt32BE(at);
        else {
          const big = store.readBigUInt64BE(at);
          if (big > BigInt(Number.MAX_SAFE_INTEGER)) {
            throw new PackageFormatError('bad_header_value', `${this.what} header tag ${entry.tag} holds an absurd 64-bit value`);
          }
          numbers[i] = Number(big);
        }
      }
      value = numbers;
    } else {
      value = this.decodeStrings(entry);
    }
    this.cache.set(entry.tag, value);
    return value;
  }

  private decodeStrings(entry: IndexEntry): string[] {
    const { store } = this;
    const out = new Array<string>(entry.count);
    let at = entry.offset;
    for (let i = 0; i < entry.count; i++) {
      const end = store.indexOf(0, at);
      if (end < 0) {
        throw new PackageFormatError('bad_header_index', `${this.what} header tag ${entry.tag} runs past the data store`);
      }
      if (end - at > this.limits.maxStringBytes) {
        throw new PackageFormatError('bad_header_value', `${this.what} header tag ${entry.tag} holds a string of ${end - at} bytes`);
      }
      this.charge(end - at + 1);
      out[i] = decodeHeaderText(store.subarray(at, end));
      at = end + 1;
    }
    return out;
  }
}

function validateEntry(what: string, entry: IndexEntry, storeSize: number, limits: HeaderLimits): void {
  const fail = (detail: string): never => {
    throw new PackageFormatError('bad_header_index', `${what} header tag ${entry.tag}: ${detail}`);
  };
  if (entry.type < RpmType.CHAR || entry.type > RpmType.I18NSTRING) fail(`unknown data type ${entry.type}`);
  if (entry.count < 1) fail('zero element count');
  if (entry.type !== RpmType.BIN && entry.count > limits.maxArrayCount) fail(`absurd element count ${entry.count}`);
  if (entry.type === RpmType.STRING && entry.count !== 1) fail('a STRING with several elements');
  if (entry.offset >= storeSize) fail(`data offset ${entry.offset} outside the ${storeSize}-byte store`);
  const width = FIXED_WIDTH[entry.type];
  // String elements take at least one byte (the terminator) each.
  const minBytes = entry.count * (width ?? 1);
  if (entry.offset + minBytes > storeSize) fail(`data runs past the ${storeSize}-byte store`);
}
