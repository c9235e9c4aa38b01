/**
 * The spool a distribution export sets its later arrays aside in while the first is streamed
 * (see domain/sbom/stream.ts): each piece deflated on its own, in memory. These arrays are
 * repetitive JSON (refs, SPDX ids, relationship types) that deflate about tenfold: for 50,000
 * packages the CycloneDX dependencies and vulnerabilities (26 MB of text) hold 1.7 MB, the SPDX
 * relationships (40 MB) 4 MB, outside V8's heap; compressing and inflating them costs about
 * 0.2 s. Kept in memory rather than in a temp file: services do no file I/O of their own.
 *
 * Buffers live outside V8's heap and are freed only when a collection finds them dead, so the
 * spool allocates as few as it can: the text is encoded into one reused buffer, the compressed
 * bytes are copied into blocks shared by many pieces (zlib's own output chunk of 16 KiB per
 * piece kept 19 MB for the SPDX relationships), and each piece is inflated into a buffer of
 * exactly its size, which is what the response sends.
 */
import { constants, deflateRawSync, inflateRawSync } from 'node:zlib';
import type { TextSpool } from '../../domain/sbom/stream.js';

const BLOCK = 256 * 1024;

export function deflatedSpool(): TextSpool {
  let scratch = Buffer.allocUnsafe(64 * 1024);
  const blocks: Buffer[] = [];
  let used = BLOCK;
  /** Per piece: block index, offset, compressed length, text length in bytes. */
  const index: number[] = [];
  return {
    write(piece) {
      const size = Buffer.byteLength(piece);
      if (size > scratch.length) scratch = Buffer.allocUnsafe(size);
      scratch.write(piece);
      const compressed = deflateRawSync(scratch.subarray(0, size), { level: constants.Z_BEST_SPEED, chunkSize: 4096 });
      if (used + compressed.length > BLOCK) {
        blocks.push(Buffer.allocUnsafe(Math.max(BLOCK, compressed.length)));
        used = 0;
      }
      compressed.copy(blocks[blocks.length - 1]!, used);
      index.push(blocks.length - 1, used, compressed.length, size);
      used += compressed.length;
    },
    *read() {
      scratch = Buffer.alloc(0);
      for (let i = 0; i < index.length; i += 4) {
        const [block, offset, length, size] = [index[i]!, index[i + 1]!, index[i + 2]!, index[i + 3]!];
        // One output chunk a little larger than the piece (zlib adds a chunk when one fills up).
        yield inflateRawSync(blocks[block]!.subarray(offset, offset + length), { chunkSize: size + 64 });
        // A block is released once its last piece is read.
        if (i + 4 >= index.length || index[i + 4] !== block) blocks[block] = EMPTY;
      }
    },
  };
}

const EMPTY = Buffer.alloc(0);
