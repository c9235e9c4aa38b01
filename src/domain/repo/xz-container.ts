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
