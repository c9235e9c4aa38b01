/**
 * The .xz container (https://tukaani.org/xz/xz-file-format.txt), just enough of it to append a
 * block to a single-stream file: stream header, blocks, index (one record per block: unpadded
 * and uncompressed size), stream footer. apt's decoder reads only the first stream of a file, so
 * growing Packages.xz means adding a block inside the one stream and rewriting its index and
 * footer; the blocks already written stay byte for byte as they are.
 */
import { crc32 } from 'node:zlib';

const HEADER_MAGIC = Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]);
const FOOTER_MAGIC = Buffer.from('YZ', 'latin1');
export const XZ_HEADER_SIZE = 12;
const FOOTER_SIZE = 12;

export interface XzBlockRecord {
  /** Block header + compressed data + check, without the padding to a multiple of four. */
  unpaddedSize: number;
  uncompressedSize: number;
}

export interface XzLayout {
  /** The two stream-flag bytes (they carry the check type); the footer repeats them. */
  flags: Buffer;
  blocks: XzBlockRecord[];
  /** Offset where the index starts: header and every block come before it. */
  indexOffset: number;
}

export class XzFormatError extends Error {}

const padded = (n: number) => (n + 3) & ~3;

function readVarint(buf: Buffer, at: number): [value: number, next: number] {
  let value = 0;
  let shift = 1;
  for (let i = 0; i < 9; i++) {
    const byte = buf[at + i];
    if (byte === undefined) throw new XzFormatError('truncated index');
    value += (byte & 0x7f) * shift;
    if ((byte & 0x80) === 0) return [value, at + i + 1];
    shift *= 128;
  }
  throw new XzFormatError('varint too long');
}

function writeVarint(value: number, out: number[]): void {
  let v = value;
  while (v >= 0x80) {
    out.push((v % 128) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
}

/** Reads where the blocks of a single-stream .xz file are, from its footer and index. */
export function parseXzLayout(data: Buffer): XzLayout {
  if (data.length < XZ_HEADER_SIZE + FOOTER_SIZE || !data.subarray(0, 6).equals(HEADER_MAGIC)) {
    throw new XzFormatError('not an xz stream');
  }
  const flags = data.subarray(6, 8);
  const footer = data.subarray(data.length - FOOTER_SIZE);
  if (!footer.subarray(10, 12).equals(FOOTER_MAGIC) || !footer.subarray(8, 10).equals(flags)) {
    throw new XzFormatError('not a single xz stream (footer does not match the header)');
  }
  const indexSize = (footer.readUInt32LE(4) + 1) * 4;
  const indexOffset = data.length - FOOTER_SIZE - indexSize;
  if (indexOffset < XZ_HEADER_SIZE || data[indexOffset] !== 0x00) throw new XzFormatError('index not found');
  let [count, at] = readVarint(data, indexOffset + 1);
  const blocks: XzBlockRecord[] = [];
  let blockBytes = 0;
  while (count-- > 0) {
    const [unpaddedSize, a1] = readVarint(data, at);
    const [uncompressedSize, a2] = readVarint(data, a1);
    blocks.push({ unpaddedSize, uncompressedSize });
    blockBytes += padded(unpaddedSize);
    at = a2;
  }
  if (XZ_HEADER_SIZE + blockBytes !== indexOffset) throw new XzFormatError('index does not describe the blocks');
  return { flags: Buffer.from(flags), blocks, indexOffset };
}

/**
 * The layout of a single-stream .xz file known only by its last bytes (`tail`), its total
 * length and its header flags: for a file written as a stream, without keeping it in memory.
 */
export function parseXzTail(tail: Buffer, totalLength: number, flags: Buffer): XzLayout {
  const footer = tail.subarray(tail.length - FOOTER_SIZE);
  if (tail.length < FOOTER_SIZE || !footer.subarray(10, 12).equals(FOOTER_MAGIC) || !footer.subarray(8, 10).equals(flags)) {
    throw new XzFormatError('not a single xz stream (footer does not match the header)');
  }
  const indexSize = (footer.readUInt32LE(4) + 1) * 4;
  const indexOffset = totalLength - FOOTER_SIZE - indexSize;
  const at0 = tail.length - FOOTER_SIZE - indexSize;
  if (at0 < 0) throw new XzFormatError('index larger than the bytes kept');
  if (indexOffset < XZ_HEADER_SIZE || tail[at0] !== 0x00) throw new XzFormatError('index not found');
  let [count, at] = readVarint(tail, at0 + 1);
  const blocks: XzBlockRecord[] = [];
  let blockBytes = 0;
  while (count-- > 0) {
    const [unpaddedSize, a1] = readVarint(tail, at);
    const [uncompressedSize, a2] = readVarint(tail, a1);
    blocks.push({ unpaddedSize, uncompressedSize });
    blockBytes += padded(unpaddedSize);
    at = a2;
  }
  if (XZ_HEADER_SIZE + blockBytes !== indexOffset) throw new XzFormatError('index does not describe the blocks');
  return { flags: Buffer.from(flags), blocks, indexOffset };
}

/** The index and stream footer that close a stream made of these blocks. */
export function xzIndexAndFooter(blocks: readonly XzBlockRecord[], flags: Buffer): Buffer {
  const bytes: number[] = [0x00];
  writeVarint(blocks.length, bytes);
  for (const b of blocks) {
    writeVarint(b.unpaddedSize, bytes);
    writeVarint(b.uncompressedSize, bytes);
  }
  while (bytes.length % 4 !== 0) bytes.push(0);
  const index = Buffer.from(bytes);
  const indexCrc = Buffer.alloc(4);
  indexCrc.writeUInt32LE(crc32(index));
  const backward = Buffer.alloc(4);
  backward.writeUInt32LE((index.length + 4) / 4 - 1);
  const footerBody = Buffer.concat([backward, flags]);
  const footerCrc = Buffer.alloc(4);
  footerCrc.writeUInt32LE(crc32(footerBody));
  return Buffer.concat([index, indexCrc, footerCrc, footerBody, FOOTER_MAGIC]);
}

/** The blocks of a stream (padding included) and their records, to splice into another stream. */
export function xzBlocksOf(data: Buffer): { bytes: Buffer; records: XzBlockRecord[]; flags: Buffer } {
  const layout = parseXzLayout(data);
  return { bytes: data.subarray(XZ_HEADER_SIZE, layout.indexOffset), records: layout.blocks, flags: layout.flags };
}

/** CRC-64/XZ (ECMA-182, reflected), the check `xz --check=crc64` writes, as two 32-bit halves. */
const CRC64_TABLE = (() => {
  const lo = new Uint32Array(256);
  const hi = new Uint32Array(256);
  // The reflected polynomial 0xC96C5795D7870F42.
  const polyHi = 0xc96c5795;
  const polyLo = 0xd7870f42;
  for (let n = 0; n < 256; n++) {
    let l = n;
    let h = 0;
    for (let k = 0; k < 8; k++) {
      const carry = l & 1;
      l = ((l >>> 1) | ((h & 1) << 31)) >>> 0;
      h >>>= 1;
      if (carry) {
        l = (l ^ polyLo) >>> 0;
        h = (h ^ polyHi) >>> 0;
      }
    }
    lo[n] = l;
    hi[n] = h;
  }
  return { lo, hi };
})();

export function crc64(data: Uint8Array): Buffer {
  let l = 0xffffffff;
  let h = 0xffffffff;
  const { lo, hi } = CRC64_TABLE;
  for (let i = 0; i < data.length; i++) {
    const index = (l ^ data[i]!) & 0xff;
    l = (((l >>> 8) | (h << 24)) ^ lo[index]!) >>> 0;
    h = ((h >>> 8) ^ hi[index]!) >>> 0;
  }
  const out = Buffer.alloc(8);
  out.writeUInt32LE((l ^ 0xffffffff) >>> 0, 0);
  out.writeUInt32LE((h ^ 0xffffffff) >>> 0, 4);
  return out;
}

/** LZMA2 chunks carry at most 64 KiB each when stored uncompressed. */
const LZMA2_STORED_CHUNK = 0x10000;

/**
 * One xz block holding `data` as stored (uncompressed) LZMA2 chunks, as xz itself writes data it
 * cannot compress, ready to splice into a stream with these `flags` (xzIndexAndFooter). For the few
 * hundred bytes an upload adds to an index: no encoder to start (liblzma's, on a pool thread, took
 * ~1 ms at rest for a 1 KB stanza), at the cost of not compressing them until the next full write.
 * Null for a check type other than CRC32 or CRC64, or for no data.
 */
export function storedXzBlock(data: Uint8Array, flags: Buffer): { bytes: Buffer; records: XzBlockRecord[]; flags: Buffer } | null {
  const checkType = flags.length === 2 && flags[0] === 0 ? flags[1]! : -1;
  if (data.length === 0 || (checkType !== 0x01 && checkType !== 0x04)) return null;
  // Block header: size, flags (one filter, no sizes), LZMA2 (id 0x21) with a 4 KiB dictionary (property 0), padding, CRC32.
  const header = Buffer.from([0x02, 0x00, 0x21, 0x01, 0x00, 0x00, 0x00, 0x00, 0, 0, 0, 0]);
  header.writeUInt32LE(crc32(header.subarray(0, 8)), 8);
  const chunks: Buffer[] = [header];
  let compressed = 0;
  for (let at = 0; at < data.length; at += LZMA2_STORED_CHUNK) {
    const piece = data.subarray(at, Math.min(data.length, at + LZMA2_STORED_CHUNK));
    // 0x01: stored chunk resetting the dictionary (the first); 0x02: stored, dictionary kept.
    const control = Buffer.from([at === 0 ? 0x01 : 0x02, (piece.length - 1) >> 8, (piece.length - 1) & 0xff]);
    chunks.push(control, Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength));
    compressed += control.length + piece.length;
  }
  chunks.push(Buffer.from([0x00]));
  compressed += 1;
  const check = checkType === 0x04 ? crc64(data) : Buffer.alloc(4);
  if (checkType === 0x01) check.writeUInt32LE(crc32(data));
  const unpaddedSize = header.length + compressed + check.length;
  chunks.push(Buffer.alloc(padded(header.length + compressed) - (header.length + compressed)), check);
  return { bytes: Buffer.concat(chunks), records: [{ unpaddedSize, uncompressedSize: data.length }], flags: Buffer.from(flags) };
}
