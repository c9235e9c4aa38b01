/**
 * One rpm-md document (primary.xml, filelists.xml or other.xml) gzipped as it grows: the head,
 * then any number of pieces of package chunks, then the close. Each piece is deflated on its own
 * and ended by a sync flush (byte-aligned), so the .xml.gz is one gzip member whose deflate stream
 * is the pieces side by side: any gzip reader reads it, dnf's included. As pigz does with its
 * blocks, each piece is deflated with the 32 KiB of XML before it as a preset dictionary: the
 * reader has those bytes in its window, so a piece of one package compresses about as well as
 * it would in the middle of one long deflate run.
 *
 * Both SHA-256s (of the file and of its uncompressed content), the CRC-32 and the sizes are
 * carried along, and {@link GzipXmlDocument.finish} works on copies of them: the document can be
 * finished (its tail written, its repomd record taken) and still be extended later by more
 * pieces. An append to a published document then costs what the new packages cost — a copy of the
 * old file cut before its tail, the new piece and a new tail — however many packages it lists.
 *
 * That is also why the root element carries no `packages="N"` count, unlike createrepo_c's: the
 * count sits in the first bytes, so changing it changes the SHA-256 of the whole document, which
 * would have to be read and hashed again on every append (~100 MB at 50,000 packages). No reader
 * uses it: libsolv (dnf, zypper), createrepo_c's own parser and yum's read packages until the
 * element closes; createrepo_c itself only learns the number at the end and patches it into the
 * head afterwards.
 */
import { createHash, type Hash } from 'node:crypto';
import { promisify } from 'node:util';
import { constants as zlibConstants, crc32, deflateRaw } from 'node:zlib';

const deflateRawAsync = promisify(deflateRaw);

export type DocumentType = 'primary' | 'filelists' | 'other';
export const DOCUMENT_TYPES: readonly DocumentType[] = ['primary', 'filelists', 'other'];

const XML_HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n';
const ROOT_OPEN: Record<DocumentType, string> = {
  primary: '<metadata xmlns="http://linux.duke.edu/metadata/common" xmlns:rpm="http://linux.duke.edu/metadata/rpm">\n',
  filelists: '<filelists xmlns="http://linux.duke.edu/metadata/filelists">\n',
  other: '<otherdata xmlns="http://linux.duke.edu/metadata/other">\n',
};
const ROOT_CLOSE: Record<DocumentType, string> = { primary: '</metadata>', filelists: '</filelists>', other: '</otherdata>' };

/** createrepo_c's gzip level (zlib's default); level 9 took 3.5x the CPU for 4% smaller files. */
const GZIP_LEVEL = 6;
/** gzip member header: deflate, no name, mtime 0, OS Unix (what Node's gzip writes). */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0x03]);
/** An empty final fixed-Huffman block: ends the deflate stream after the sync-flushed pieces. */
const DEFLATE_END = Buffer.from([0x03, 0x00]);

/** How far back a deflate match may reach, and so how much preceding XML a piece may refer to. */
const WINDOW = 32 * 1024;

/** Raw deflate of one piece, ended by a sync flush so pieces can be concatenated; it may refer to `window` (the XML before it). */
const deflatePiece = (data: Buffer, window: Buffer | null): Promise<Buffer> =>
  deflateRawAsync(data, { level: GZIP_LEVEL, finishFlush: zlibConstants.Z_SYNC_FLUSH, ...(window && window.length > 0 ? { dictionary: window } : {}) });

/** The last WINDOW bytes of `before` followed by `added`. */
const slide = (before: Buffer, added: Buffer): Buffer =>
  added.length >= WINDOW ? added.subarray(added.length - WINDOW) : Buffer.concat([before.subarray(Math.max(0, before.length - (WINDOW - added.length))), added]);

/** What repomd.xml says of a finished document. */
export interface DocumentFacts {
  /** SHA-256 (hex) of the .xml.gz. */
  checksum: string;
  /** SHA-256 (hex) of the XML. */
  openChecksum: string;
  size: number;
  openSize: number;
}

/** The uncompressed document listing these chunk texts (in this order). */
export const documentXml = (type: DocumentType, chunks: readonly string[]): string => XML_HEAD + ROOT_OPEN[type] + chunks.join('') + ROOT_CLOSE[type];

export class GzipXmlDocument {
  private constructor(
    readonly type: DocumentType,
    private readonly gzHash: Hash,
    private readonly openHash: Hash,
    private crc: number,
    private openBytes: number,
    private gzBytes: number,
    /** The last WINDOW bytes of XML so far: the next piece's dictionary. */
    private window: Buffer,
  ) {}

  /** Settles once every piece added so far is accounted for. */
  private accounted: Promise<unknown> = Promise.resolve();

  /** A new document and its first bytes (the gzip header and the deflated head). */
  static async begin(type: DocumentType): Promise<{ document: GzipXmlDocument; bytes: Buffer }> {
    const head = Buffer.from(XML_HEAD + ROOT_OPEN[type], 'utf8');
    const document = new GzipXmlDocument(type, createHash('sha256'), createHash('sha256'), 0, 0, 0, head);
    document.account(Buffer.from(GZIP_HEADER), null);
    const piece = await deflatePiece(head, null);
    document.account(piece, head);
    return { document, bytes: Buffer.concat([GZIP_HEADER, piece]) };
  }

  /** Bytes of the .xml.gz before its tail: where an extension cuts a copy of the finished file. */
  get bodySize(): number {
    return this.gzBytes;
  }

  /**
   * Deflates `text` (package chunks) and accounts for it; returns the bytes to write next. Pieces
   * are accounted in the order this is called (several may be compressing at once on the thread
   * pool), so the caller writes them in that order.
   */
  add(text: string): Promise<Buffer> {
    const open = Buffer.from(text, 'utf8');
    this.openHash.update(open);
    this.crc = crc32(open, this.crc);
    this.openBytes += open.length;
    const deflated = deflatePiece(open, this.window);
    this.window = slide(this.window, open);
    deflated.catch(() => undefined); // surfaces through `piece`
    const piece = this.accounted.then(() => deflated).then((bytes) => {
      this.gzHash.update(bytes);
      this.gzBytes += bytes.length;
      return bytes;
    });
    this.accounted = piece.catch(() => undefined);
    return piece;
  }

  /** The tail (deflated close, end block, gzip trailer) and the finished file's facts; the document itself can still grow. */
  async finish(): Promise<{ bytes: Buffer; facts: DocumentFacts }> {
    await this.accounted;
    const close = Buffer.from(ROOT_CLOSE[this.type], 'utf8');
    const closePiece = await deflatePiece(close, this.window);
    const crc = crc32(close, this.crc);
    const openSize = this.openBytes + close.length;
    const trailer = Buffer.alloc(8);
    trailer.writeUInt32LE(crc >>> 0, 0);
    trailer.writeUInt32LE(openSize % 2 ** 32, 4);
    const bytes = Buffer.concat([closePiece, DEFLATE_END, trailer]);
    const checksum = this.gzHash.copy().update(bytes).digest('hex');
    const openChecksum = this.openHash.copy().update(close).digest('hex');
    return { bytes, facts: { checksum, openChecksum, size: this.gzBytes + bytes.length, openSize } };
  }

  /**
   * An independent copy (of a document with no piece being added): extend it for a new
   * generation, keep this one until that is published.
   */
  fork(): GzipXmlDocument {
    return new GzipXmlDocument(this.type, this.gzHash.copy(), this.openHash.copy(), this.crc, this.openBytes, this.gzBytes, this.window);
  }

  private account(gz: Buffer, open: Buffer | null): void {
    this.gzHash.update(gz);
    this.gzBytes += gz.length;
    if (open) {
      this.openHash.update(open);
      this.crc = crc32(open, this.crc);
      this.openBytes += open.length;
    }
  }
}
