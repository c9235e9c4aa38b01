/** The part of lzma-native (liblzma bindings) Tollgate uses: streaming .xz decoders and a one-shot encoder. */
declare module 'lzma-native' {
  import type { Duplex } from 'node:stream';
  export function createDecompressor(options?: { memlimit?: number; threads?: number; synchronous?: boolean }): Duplex;
  /** `streamDecoder` is liblzma's .xz-only decoder (createDecompressor's autoDecoder also takes legacy .lzma). */
  export function createStream(coder: 'streamDecoder', options?: { memlimit?: number; flags?: number; synchronous?: boolean }): Duplex;
  export const CONCATENATED: number;
  export function compress(data: Buffer, options?: { preset?: number; check?: number; threads?: number }): Promise<Buffer>;
  export const CHECK_CRC64: number;
  const lzma: { createDecompressor: typeof createDecompressor; createStream: typeof createStream; compress: typeof compress; CHECK_CRC64: number; CONCATENATED: number };
  export default lzma;
}
