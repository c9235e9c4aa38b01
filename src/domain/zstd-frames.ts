/**
 * zstd frame and block headers, read ahead of the decoder (fzstd) so that a frame is refused
 * before the decoder allocates the window its header asks for (see compression.ts).
 */
import { PackageFormatError } from './errors.js';

export const ZSTD_MAGIC = 0xfd2fb528;

/**
 * zstd frames may ask for a window this large at most: fzstd cannot follow longer back-references
 * anyway, and every frame's window grows up to it (plus up to 8 MiB of room) as output comes.
 */
const ZSTD_MAX_WINDOW_BYTES = 1 << 25;

/**
 * Walks zstd frame and block headers alongside the decoder to validate each frame header
 * (window size, declared content size) before the decoder allocates anything for it.
 */
export class ZstdFrameGuard {
  private header: number[] = [];
  private skip = 0;
  private state: 'magic' | 'frame_header' | 'block_header' | 'skippable_size' = 'magic';
  private checksumAfterFrame = 0;
  private frames = 0;
  private window = 0;
  private frameStart = false;
  private firstBlock = false;

  sawFrame(): boolean {
    return this.frames > 0;
  }

  /** The window of the current frame: what the decoder allocates for it. */
  windowBytes(): number {
    return this.window;
  }

  /** Whether the last scan stopped on a frame's first block header (and clears it). */
  takeFrameStart(): boolean {
    const seen = this.frameStart;
    this.frameStart = false;
    return seen;
  }

  /**
   * Scans `bytes` from `from`; stops just after a frame's first block header (the decoder needs
   * more than the frame header before it allocates), answering where it stopped.
   */
  scan(bytes: Uint8Array, from = 0): number {
    let i = from;
    while (i < bytes.length) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, bytes.length - i);
        this.skip -= n;
        i += n;
        continue;
      }
      this.header.push(bytes[i] ?? 0);
      i += 1;
      this.advance();
      if (this.frameStart) return i;
    }
    return i;
  }

  private advance(): void {
    const h = this.header;
    if (this.state === 'magic' && h.length === 4) {
      const magic = (h[0]! | (h[1]! << 8) | (h[2]! << 16) | (h[3]! << 24)) >>> 0;
      if (magic === ZSTD_MAGIC) this.state = 'frame_header';
      else if ((magic & 0xfffffff0) >>> 0 === 0x184d2a50) this.state = 'skippable_size';
      else throw new PackageFormatError('decompression_failed', 'invalid zstd frame magic');
      return;
    }
    if (this.state === 'skippable_size' && h.length === 8) {
      this.skip = (h[4]! | (h[5]! << 8) | (h[6]! << 16) | (h[7]! << 24)) >>> 0;
      this.reset('magic');
      return;
    }
    if (this.state === 'frame_header' && h.length >= 5 && h.length === zstdHeaderLayout(h[4]!).length) {
      this.validateFrameHeader(h);
      this.frames += 1;
      this.checksumAfterFrame = (h[4]! >> 2) & 1 ? 4 : 0;
      this.firstBlock = true;
      this.reset('block_header');
      return;
    }
    if (this.state === 'block_header' && h.length === 3) {
      const raw = h[0]! | (h[1]! << 8) | (h[2]! << 16);
      const last = raw & 1;
      const type = (raw >> 1) & 3;
      const size = raw >>> 3;
      if (type === 3) throw new PackageFormatError('decompression_failed', 'reserved zstd block type');
      this.frameStart = this.firstBlock;
      this.firstBlock = false;
      this.skip = type === 1 ? 1 : size;
      if (last) {
        this.skip += this.checksumAfterFrame;
        this.reset('magic');
      } else {
        this.reset('block_header');
      }
    }
  }

  private reset(state: ZstdFrameGuard['state']): void {
    this.header = [];
    this.state = state;
  }

  private validateFrameHeader(h: number[]): void {
    const descriptor = h[4]!;
    if (descriptor & 0x08) throw new PackageFormatError('decompression_failed', 'reserved zstd header bit set');
    const singleSegment = (descriptor >> 5) & 1;
    if (singleSegment) {
      // The window is the whole declared content: the decoder would allocate it up front.
      const contentSize = zstdContentSize(h, descriptor);
      if (contentSize > ZSTD_MAX_WINDOW_BYTES) {
        throw new PackageFormatError('decompression_bomb', `zstd frame declares a ${contentSize}-byte window`);
      }
      this.window = contentSize;
      return;
    }
    const windowDescriptor = h[5]!;
    const base = 2 ** (10 + (windowDescriptor >> 3));
    const window = base + (base / 8) * (windowDescriptor & 7);
    if (window > ZSTD_MAX_WINDOW_BYTES) {
      throw new PackageFormatError('decompression_bomb', `zstd frame asks for a ${window}-byte window`);
    }
    this.window = window;
  }
}

/** Where the parts of a zstd frame header sit, given its descriptor byte (magic included). */
function zstdHeaderLayout(descriptor: number): { length: number; contentSizeAt: number; contentSizeBytes: number } {
  const singleSegment = (descriptor >> 5) & 1;
  const dictionaryBytes = [0, 1, 2, 4][descriptor & 3]!;
  const contentSizeFlag = descriptor >> 6;
  const contentSizeBytes = contentSizeFlag === 0 ? singleSegment : 1 << contentSizeFlag;
  const contentSizeAt = 5 + (singleSegment ? 0 : 1) + dictionaryBytes;
  return { length: contentSizeAt + contentSizeBytes, contentSizeAt, contentSizeBytes };
}

function zstdContentSize(h: number[], descriptor: number): number {
  const { contentSizeAt, contentSizeBytes } = zstdHeaderLayout(descriptor);
  let value = 0;
  for (let i = contentSizeBytes - 1; i >= 0; i -= 1) value = value * 256 + h[contentSizeAt + i]!;
  return contentSizeBytes === 2 ? value + 256 : value;
}

