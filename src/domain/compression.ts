/**
 * Bounded decompression shared by the .deb and .rpm readers.
 *
 * Every decoder writes its output through one counting sink that stops the stream with
 * `PackageFormatError('decompression_bomb')` as soon as the output passes an absolute cap or a
 * ratio to the compressed size. The decoders are fed in small slices and wait for the consumer
 * between slices, so a tiny input that expands enormously is stopped after a bounded amount of
 * work and memory — never after materialising the whole expansion.
 */
import { type Duplex, Transform, type TransformCallback } from 'node:stream';
import { createGunzip } from 'node:zlib';
import lzma from 'lzma-native';
import { Decompress as ZstdStreamDecoder } from 'fzstd';
import { DecoderFailure, PackageFormatError } from './errors.js';
import { ZSTD_MAGIC, ZstdFrameGuard } from './zstd-frames.js';

export type Compression = 'gzip' | 'xz' | 'zstd' | 'none';

/** Output caps: absolute size, and size divided by the compressed size. */
export interface DecompressionLimits {
  maxOutputBytes: number;
  maxRatio: number;
  /**
   * Decode xz on libuv's thread pool rather than the event loop. Worth its thread hop per slice
   * only for large members read in the background (a package's payload); small ones (control.tar)
   * decode faster in place.
   */
  threaded?: boolean;
  /**
   * Decodes xz in another process instead (the system `xz`: adapters/storage/xz.ts): a stream
   * that takes the compressed bytes and gives the decoded ones, ending only once the decoder has
   * accepted the whole input, and failing otherwise. Bundled with lzma-native, liblzma 5.2.3
   * decodes a large payload at ~60 % of the speed of Debian's xz 5.4.
   */
  xzDecoder?: () => Duplex;
}

/**
 * Below this many compressed bytes the ratio is computed as if the input were this big: tiny
 * but legitimate members (a 300-byte control.tar.gz expands to a 10 KiB tar) would otherwise
 * trip the ratio check.
 */
export const RATIO_FLOOR_BYTES = 64 * 1024;

/**
 * fzstd allocates a fresh window for every frame (up to 64 KiB at once, more as output comes), so
 * a stream of tiny frames costs an allocation per frame: a frame may only start while the windows
 * its header declared so far (an upper bound of what is allocated) stay within this factor of the
 * output (of the floor, at the start). Blocks cost nothing extra: our fzstd patch shifts the window
 * once per several MiB of output, not after every block (it used to, and 4 KB of one-byte blocks
 * under a 32 MiB window took 10 s).
 */
const ZSTD_ALLOCATION_FACTOR = 4096;
const ZSTD_ALLOCATION_FLOOR_BYTES = 32 * 1024;

/** Input slice sizes: the most output one slice can produce before the consumer is consulted. */
const SLICE_BYTES: Record<Exclude<Compression, 'none'> | 'xzThreaded' | 'xzExternal', number> = {
  gzip: 16 * 1024, // deflate expands at most ~1032x: <= 16 MiB per slice
  zstd: 512, // an RLE block is 4 bytes for 128 KiB: <= 16 MiB per slice
  // liblzma decodes a whole input slice before backpressure applies: small slices bound the
  // output buffered at once (a worst-case xz ratio of ~7000:1 gives < 30 MB per slice).
  xz: 4 * 1024,
  // Each slice is a trip to the thread pool: 4 KiB ones cost a fifth of the decoding speed.
  // Still bounded: < 120 MB at the worst-case ratio, and the ratio limit stops far sooner.
  xzThreaded: 16 * 1024,
  // xz waits on a full pipe: its output is bounded by the pipe and the stream's buffer whatever the slice.
  xzExternal: 16 * 1024,
};

/** The compression format announced by the first bytes of a stream, or null when unknown. */
export function detectCompression(firstBytes: Buffer): Compression | null {
  if (firstBytes.length >= 2 && firstBytes[0] === 0x1f && firstBytes[1] === 0x8b) return 'gzip';
  if (firstBytes.length >= 6 && firstBytes.subarray(0, 6).equals(XZ_MAGIC)) return 'xz';
  if (firstBytes.length >= 4 && firstBytes.readUInt32LE(0) === ZSTD_MAGIC) return 'zstd';
  return null;
}

const XZ_MAGIC = Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]);

/** A Transform that decompresses `kind` and fails with a PackageFormatError past `limits`. */
export function createBoundedDecompressor(
  kind: Compression,
  limits: DecompressionLimits,
  compressedSize?: number,
): Transform {
  return new BoundedDecompressor(kind, limits, compressedSize);
}

/** Decompresses a whole buffer within `limits` (for small members such as control.tar). */
export async function decompressToBuffer(kind: Compression, input: Buffer, limits: DecompressionLimits): Promise<Buffer> {
  const stream = createBoundedDecompressor(kind, limits, input.length);
  const chunks: Buffer[] = [];
  const done = new Promise<void>((resolve, reject) => {
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', resolve);
    stream.on('error', reject);
  });
  stream.end(input);
  await done;
  return Buffer.concat(chunks);
}

/** Receives decoded bytes; returns false when the consumer wants the producer to wait. */
type Sink = (chunk: Uint8Array) => boolean;

/** One decoder behind the bounded stream. `write` resolves when the chunk may be released. */
interface DecoderEngine {
  write(chunk: Buffer): Promise<void>;
  finish(): Promise<void>;
  destroy(): void;
}

interface EngineContext {
  sink: Sink;
  waitForDemand: () => Promise<void>;
}

class BoundedDecompressor extends Transform {
  private consumed = 0;
  private produced = 0;
  private readonly engine: DecoderEngine;
  private demandWaiters: Array<() => void> = [];

  constructor(
    private readonly kind: Compression,
    private readonly limits: DecompressionLimits,
    private readonly compressedSize?: number,
  ) {
    super();
    const context: EngineContext = {
      sink: (chunk) => this.accept(chunk),
      waitForDemand: () => new Promise<void>((resolve) => this.demandWaiters.push(resolve)),
    };
    this.engine = createEngine(kind, context, limits);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.consumed += chunk.length;
    this.engine.write(chunk).then(
      () => callback(),
      (error: unknown) => callback(this.asFormatError(error)),
    );
  }

  override _flush(callback: TransformCallback): void {
    this.engine.finish().then(
      () => callback(),
      (error: unknown) => callback(this.asFormatError(error)),
    );
  }

  override _read(size: number): void {
    const waiters = this.demandWaiters;
    this.demandWaiters = [];
    for (const wake of waiters) wake();
    super._read(size);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.engine.destroy();
    const waiters = this.demandWaiters;
    this.demandWaiters = [];
    for (const wake of waiters) wake();
    callback(error);
  }

  /** Counts, enforces the limits (throwing aborts the decoder mid-chunk), forwards downstream. */
  private accept(chunk: Uint8Array): boolean {
    if (this.destroyed) throw new PackageFormatError('decompression_failed', 'stream destroyed');
    if (chunk.length === 0) return true;
    this.produced += chunk.length;
    if (this.produced > this.limits.maxOutputBytes) {
      throw new PackageFormatError(
        'decompression_bomb',
        `${this.kind} data expands beyond ${this.limits.maxOutputBytes} bytes`,
      );
    }
    const basis = Math.max(this.compressedSize ?? this.consumed, this.consumed, RATIO_FLOOR_BYTES);
    if (this.produced > basis * this.limits.maxRatio) {
      throw new PackageFormatError(
        'decompression_bomb',
        `${this.kind} data expands more than ${this.limits.maxRatio} times its compressed size`,
      );
    }
    return this.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  }

  private asFormatError(error: unknown): PackageFormatError | DecoderFailure {
    if (error instanceof PackageFormatError || error instanceof DecoderFailure) return error;
    const detail = error instanceof Error ? error.message : String(error);
    return new PackageFormatError('decompression_failed', `invalid ${this.kind} data: ${detail}`);
  }
}

function createEngine(kind: Compression, context: EngineContext, limits: DecompressionLimits): DecoderEngine {
  const threaded = limits.threaded === true;
  switch (kind) {
    case 'none':
      return new PassThroughEngine(context);
    case 'gzip':
      return new StreamEngine(context, createGunzip(), SLICE_BYTES.gzip);
    case 'zstd':
      return new ZstdEngine(context);
    case 'xz':
      if (limits.xzDecoder) return new StreamEngine(context, limits.xzDecoder(), SLICE_BYTES.xzExternal);
      // liblzma accepts every integrity check xz writes (CRC32, CRC64, SHA-256: rpm uses SHA-256).
      // Its .xz decoder, not the auto-detecting one: that also reads legacy .lzma, whose header has
      // no magic (a run of zero bytes parses as one), and which neither xz, dpkg nor rpm take here.
      // Concatenated streams and stream padding are read as `xz -d` reads them.
      return new StreamEngine(context, lzma.createStream('streamDecoder', { memlimit: 256 * 1024 * 1024, flags: lzma.CONCATENATED, synchronous: !threaded }), threaded ? SLICE_BYTES.xzThreaded : SLICE_BYTES.xz);
  }
}

function* slices(chunk: Buffer, size: number): Generator<Buffer> {
  for (let start = 0; start < chunk.length; start += size) yield chunk.subarray(start, start + size);
}

/**
 * Cuts a stream into slices at fixed offsets of the whole stream, whatever chunks it arrives in,
 * so a decoder sees the same writes for the same bytes: fed corrupt input cut at other places,
 * liblzma and fzstd did not always fail alike (found by fuzzing, whole against chunked).
 */
class FixedSlicer {
  private pending: Buffer | null = null;

  constructor(private readonly size: number) {}

  *take(chunk: Buffer): Generator<Buffer> {
    let from = 0;
    if (this.pending) {
      const missing = this.size - this.pending.length;
      if (chunk.length < missing) {
        this.pending = Buffer.concat([this.pending, chunk]);
        return;
      }
      yield Buffer.concat([this.pending, chunk.subarray(0, missing)]);
      this.pending = null;
      from = missing;
    }
    for (; chunk.length - from >= this.size; from += this.size) yield chunk.subarray(from, from + this.size);
    // Copied: the chunk's buffer is its producer's once this write returns.
    if (from < chunk.length) this.pending = Buffer.from(chunk.subarray(from));
  }

  /** The last, shorter slice (at the end of the stream). */
  rest(): Buffer | null {
    const rest = this.pending;
    this.pending = null;
    return rest;
  }
}

class PassThroughEngine implements DecoderEngine {
  constructor(private readonly context: EngineContext) {}
  async write(chunk: Buffer): Promise<void> {
    for (const slice of slices(chunk, 64 * 1024)) {
      if (!this.context.sink(slice)) await this.context.waitForDemand();
    }
  }
  async finish(): Promise<void> {}
  destroy(): void {}
}

/**
 * A Node stream decoder (node:zlib gunzip, liblzma's xz decoder), fed in slices; its output
 * events go through the sink and pause it when full.
 */
class StreamEngine implements DecoderEngine {
  private failure: unknown = null;
  private rejectFailed: (error: unknown) => void = () => undefined;
  /** Rejects on the first failure, so that no wait outlives a broken decoder. */
  private readonly failed = new Promise<never>((_resolve, reject) => (this.rejectFailed = reject));
  private readonly ended: Promise<void>;
  private readonly slicer: FixedSlicer;

  constructor(
    context: EngineContext,
    private readonly gunzip: Duplex,
    sliceBytes: number,
  ) {
    this.slicer = new FixedSlicer(sliceBytes);
    this.ended = new Promise<void>((resolve) => this.gunzip.once('end', resolve));
    this.failed.catch(() => undefined);
    this.gunzip.on('data', (chunk: Buffer) => {
      try {
        if (!context.sink(chunk)) {
          this.gunzip.pause();
          void context.waitForDemand().then(() => this.gunzip.resume());
        }
      } catch (error) {
        this.fail(error);
      }
    });
    this.gunzip.on('error', (error) => this.fail(error));
  }

  async write(chunk: Buffer): Promise<void> {
    for (const slice of this.slicer.take(chunk)) await this.feed(slice);
  }

  private async feed(slice: Buffer): Promise<void> {
    const written = new Promise<void>((resolve) => this.gunzip.write(slice, () => resolve()));
    await Promise.race([written, this.failed]);
    if (this.failure !== null) throw this.failure;
  }

  async finish(): Promise<void> {
    if (this.failure !== null) throw this.failure;
    const rest = this.slicer.rest();
    if (rest) await this.feed(rest);
    this.gunzip.end();
    await Promise.race([this.ended, this.failed]);
  }

  destroy(): void {
    this.gunzip.destroy();
  }

  private fail(error: unknown): void {
    if (this.failure === null) {
      this.failure = error;
      this.rejectFailed(error);
    }
    this.gunzip.destroy();
  }
}

/**
 * fzstd's streaming decoder, behind a frame-header guard: fzstd grows a window up to the size
 * the frame header asks for, so absurd windows are refused before it sees them; and the decoder
 * is fed up to each frame's first block header, so every frame's window is paid for (see
 * ZSTD_ALLOCATION_FACTOR) before fzstd allocates it.
 */
class ZstdEngine implements DecoderEngine {
  private readonly guard = new ZstdFrameGuard();
  private readonly slicer = new FixedSlicer(SLICE_BYTES.zstd);
  private blocked = false;
  private readonly decoder: ZstdStreamDecoder;
  private produced = 0;
  private allocated = 0;

  constructor(private readonly context: EngineContext) {
    this.decoder = new ZstdStreamDecoder((chunk) => {
      this.produced += chunk.length;
      if (!context.sink(chunk)) this.blocked = true;
    });
  }

  async write(chunk: Buffer): Promise<void> {
    for (const slice of this.slicer.take(chunk)) await this.feed(slice);
  }

  private async feed(slice: Buffer): Promise<void> {
    for (let from = 0; from < slice.length; ) {
      const to = this.guard.scan(slice, from);
      if (this.guard.takeFrameStart()) this.chargeWindow();
      this.decoder.push(slice.subarray(from, to));
      from = to;
      if (this.blocked) {
        this.blocked = false;
        await this.context.waitForDemand();
      }
    }
  }

  /** Counts the window the coming frame will allocate; refuses a stream of tiny frames. */
  private chargeWindow(): void {
    this.allocated += this.guard.windowBytes();
    if (this.allocated > ZSTD_ALLOCATION_FACTOR * Math.max(this.produced, ZSTD_ALLOCATION_FLOOR_BYTES)) {
      throw new PackageFormatError(
        'decompression_bomb',
        `zstd frames too small for their ${this.guard.windowBytes()}-byte windows (${this.produced} bytes out so far)`,
      );
    }
  }

  async finish(): Promise<void> {
    const rest = this.slicer.rest();
    if (rest) await this.feed(rest);
    if (!this.guard.sawFrame()) throw new PackageFormatError('decompression_failed', 'empty zstd stream');
    this.decoder.push(new Uint8Array(0), true);
  }

  destroy(): void {}
}
