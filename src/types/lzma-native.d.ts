/** The part of lzma-native (liblzma bindings) Tollgate uses: a streaming .xz decoder and a one-shot encoder. */
declare module 'lzma-native' {
  import type { Duplex } from 'node:stream';
  export function createDecompressor(options?: { memlimit?: number; threads?: number; synchronous?: boolean }): Duplex;
  export function compress(data: Buffer, options?: { preset?: number; check?: number; threads?: number }): Promise<Buffer>;
  export const CHECK_CRC64: number;
  const lzma: { createDecompressor: typeof createDecompressor; compress: typeof compress; CHECK_CRC64: number };
  export default lzma;
}
