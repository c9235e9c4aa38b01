/** The part of lzma-native (liblzma bindings) Tollgate uses: a streaming .xz decoder. */
declare module 'lzma-native' {
  import type { Duplex } from 'node:stream';
  export function createDecompressor(options?: { memlimit?: number; threads?: number; synchronous?: boolean }): Duplex;
  const lzma: { createDecompressor: typeof createDecompressor };
  export default lzma;
}
