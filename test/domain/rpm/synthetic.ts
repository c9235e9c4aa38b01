/**
 * Assembles .rpm files byte by byte for malformed-input tests: full control over every index
 * entry, count and offset, which rpmbuild would never let us get wrong.
 */
import { RpmType, Tag } from '../../../src/domain/rpm/tags.js';

export interface SyntheticEntry {
  tag: number;
  type: number;
  value: string | string[] | number[] | Buffer;
  /** Override the element count written in the index. */
  count?: number;
  /** Override the data offset written in the index. */
  offset?: number;
}

const ALIGN: Partial<Record<number, number>> = { [RpmType.INT16]: 2, [RpmType.INT32]: 4, [RpmType.INT64]: 8 };

function encodeValue(e: SyntheticEntry): { data: Buffer; count: number } {
  const v = e.value;
  switch (e.type) {
    case RpmType.STRING:
      return { data: Buffer.from(`${String(v)}\0`), count: 1 };
    case RpmType.STRING_ARRAY:
    case RpmType.I18NSTRING: {
      const items = Array.isArray(v) ? (v as string[]) : [String(v)];
      return { data: Buffer.from(items.map((s) => `${s}\0`).join('')), count: items.length };
    }
    case RpmType.BIN:
      return { data: v as Buffer, count: (v as Buffer).length };
    default: {
      const nums = v as number[];
      const width = { [RpmType.CHAR]: 1, [RpmType.INT8]: 1, [RpmType.INT16]: 2, [RpmType.INT32]: 4, [RpmType.INT64]: 8 }[e.type] ?? 1;
      const data = Buffer.alloc(nums.length * width);
      nums.forEach((n, i) => {
        if (width === 1) data.writeUInt8(n, i);
        else if (width === 2) data.writeUInt16BE(n, i * 2);
        else if (width === 4) data.writeUInt32BE(n, i * 4);
        else data.writeBigUInt64BE(BigInt(n), i * 8);
      });
      return { data, count: nums.length };
    }
  }
}

/** Intro + index + store of one header structure. */
export function buildHeader(entries: SyntheticEntry[], overrides: { indexCount?: number; storeSize?: number; magic?: Buffer } = {}): Buffer {
  const index = Buffer.alloc(entries.length * 16);
  const parts: Buffer[] = [];
  let size = 0;
  entries.forEach((e, i) => {
    const align = ALIGN[e.type] ?? 1;
    const pad = (align - (size % align)) % align;
    if (pad) {
      parts.push(Buffer.alloc(pad));
      size += pad;
    }
    const { data, count } = encodeValue(e);
    index.writeUInt32BE(e.tag, i * 16);
    index.writeUInt32BE(e.type, i * 16 + 4);
    index.writeUInt32BE(e.offset ?? size, i * 16 + 8);
    index.writeUInt32BE(e.count ?? count, i * 16 + 12);
    parts.push(data);
    size += data.length;
  });
  const store = Buffer.concat(parts);
  const intro = Buffer.alloc(16);
  (overrides.magic ?? Buffer.from([0x8e, 0xad, 0xe8, 0x01])).copy(intro, 0);
  intro.writeUInt32BE(overrides.indexCount ?? entries.length, 8);
  intro.writeUInt32BE(overrides.storeSize ?? store.length, 12);
  return Buffer.concat([intro, index, store]);
}

/** A 96-byte lead. */
export function buildLead(type = 0, name = 'synthetic-1-1'): Buffer {
  const lead = Buffer.alloc(96);
  Buffer.from([0xed, 0xab, 0xee, 0xdb]).copy(lead, 0);
  lead.writeUInt8(3, 4);
  lead.writeUInt16BE(type, 6);
  lead.writeUInt16BE(1, 8);
  lead.write(name, 10, 65, 'latin1');
  lead.writeUInt16BE(1, 76);
  lead.writeUInt16BE(5, 78);
  return lead;
}

/** The main-header entries of a small valid binary package. */
export function basicMainEntries(extra: SyntheticEntry[] = []): SyntheticEntry[] {
  return [
    { tag: Tag.NAME, type: RpmType.STRING, value: 'synthetic' },
    { tag: Tag.VERSION, type: RpmType.STRING, value: '1.0' },
    { tag: Tag.RELEASE, type: RpmType.STRING, value: '1' },
    { tag: Tag.SUMMARY, type: RpmType.I18NSTRING, value: ['A synthetic package'] },
    { tag: Tag.ARCH, type: RpmType.STRING, value: 'x86_64' },
    { tag: Tag.SOURCERPM, type: RpmType.STRING, value: 'synthetic-1.0-1.src.rpm' },
    { tag: Tag.PAYLOADFORMAT, type: RpmType.STRING, value: 'cpio' },
    { tag: Tag.PAYLOADCOMPRESSOR, type: RpmType.STRING, value: 'gzip' },
    ...extra,
  ];
}

/** A whole .rpm file: lead, padded signature header, main header, payload. */
export function buildRpmFile(parts: { sig?: Buffer; main?: Buffer; payload?: Buffer; lead?: Buffer } = {}): Buffer {
  const sig = parts.sig ?? buildHeader([{ tag: 1000, type: RpmType.INT32, value: [0] }]);
  const storeSize = sig.readUInt32BE(12);
  const pad = Buffer.alloc((8 - (storeSize % 8)) % 8);
  return Buffer.concat([parts.lead ?? buildLead(), sig, pad, parts.main ?? buildHeader(basicMainEntries()), parts.payload ?? Buffer.alloc(0)]);
}
