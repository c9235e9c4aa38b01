/**
 * Rewriting an RPM's signature header to carry our OpenPGP signatures, as `rpmsign --addsign
 * --rpmv3` lays it out (rpm 4.18): one immutable region (tag 62) covering every entry, entries
 * in tag order with their data in the same order and naturally aligned, the region trailer last,
 * and RESERVEDSPACE (1008) shrunk or grown so the header keeps its size when it can. The main
 * header and the payload are never touched, so their digests in the signature header stay valid.
 *
 * Which tag a signature goes in depends on the key (rpm's own mapping): header-only RSA 268,
 * EdDSA 267; header+payload RSA 1002, EdDSA 1005.
 */
import { PackageFormatError } from '../errors.js';
import { DEFAULT_HEADER_LIMITS, HEADER_INTRO_SIZE, INDEX_ENTRY_SIZE, parseHeaderIntro } from './header.js';
import { RpmType } from './tags.js';

export const LEAD_BYTES = 96;
const REGION_TAG = 62; // RPMTAG_HEADERSIGNATURES
const RESERVED_SPACE_TAG = 1008;

/** Signature tags (rpmtag.h RPMSIGTAG_*) holding OpenPGP signatures. */
export const SignatureTag = {
  DSA: 267, // header-only, DSA and EdDSA keys
  RSA: 268, // header-only, RSA keys
  OPENPGP: 278, // rpm 4.19+: any number of header-only signatures
  PGP: 1002, // header + payload, RSA keys
  GPG: 1005, // header + payload, DSA and EdDSA keys
} as const;

const SIGNATURE_TAGS = new Set<number>(Object.values(SignatureTag));

export type SigningAlgorithm = 'rsa' | 'eddsa';

export interface SignatureEntry {
  tag: number;
  type: number;
  count: number;
  /** The entry's bytes in the store (strings with their NUL). */
  data: Buffer;
}

/** Where the parts of an RPM file lie, read from its first bytes. */
export interface RpmSections {
  lead: Buffer;
  signature: SignatureEntry[];
  /** Offset of the main header (after the signature header and its padding to 8 bytes). */
  headerStart: number;
  /** Offset just past the main header: the payload starts here. */
  headerEnd: number;
  /** Size of the signature header with its padding. */
  signatureSize: number;
}

/** The length of an entry's data, checked against what the store holds. */
function dataLength(type: number, count: number, store: Buffer, offset: number): number {
  const fixed: Partial<Record<number, number>> = { [RpmType.CHAR]: 1, [RpmType.INT8]: 1, [RpmType.BIN]: 1, [RpmType.INT16]: 2, [RpmType.INT32]: 4, [RpmType.INT64]: 8 };
  const width = fixed[type];
  if (width !== undefined) return width * count;
  if (type === RpmType.STRING || type === RpmType.STRING_ARRAY || type === RpmType.I18NSTRING) {
    let at = offset;
    for (let i = 0; i < (type === RpmType.STRING ? 1 : count); i++) {
      const nul = store.indexOf(0, at);
      if (nul < 0) throw new PackageFormatError('bad_signature_header', 'a signature header string is not terminated');
      at = nul + 1;
    }
    return at - offset;
  }
  throw new PackageFormatError('bad_signature_header', `signature header entry of unknown type ${type}`);
}

/**
 * Reads the lead, the signature header's entries and the main header's extent from `prefix`,
 * the file's first bytes. Returns null when `prefix` is too short: the caller reads more
 * (`needed` bytes) and asks again.
 */
export function readRpmSections(prefix: Buffer): RpmSections | { needed: number } {
  const sigStart = LEAD_BYTES;
  if (prefix.length < sigStart + HEADER_INTRO_SIZE) return { needed: sigStart + HEADER_INTRO_SIZE };
  const sigIntro = parseHeaderIntro(prefix.subarray(sigStart, sigStart + HEADER_INTRO_SIZE), 'signature', DEFAULT_HEADER_LIMITS);
  const sigEnd = sigStart + HEADER_INTRO_SIZE + sigIntro.bodySize;
  const headerStart = sigEnd + ((8 - (sigEnd % 8)) % 8);
  if (prefix.length < headerStart + HEADER_INTRO_SIZE) return { needed: headerStart + HEADER_INTRO_SIZE };
  const mainIntro = parseHeaderIntro(prefix.subarray(headerStart, headerStart + HEADER_INTRO_SIZE), 'main', DEFAULT_HEADER_LIMITS);
  const headerEnd = headerStart + HEADER_INTRO_SIZE + mainIntro.bodySize;

  const indexAt = sigStart + HEADER_INTRO_SIZE;
  const store = prefix.subarray(indexAt + sigIntro.indexCount * INDEX_ENTRY_SIZE, sigEnd);
  const signature: SignatureEntry[] = [];
  for (let i = 0; i < sigIntro.indexCount; i++) {
    const at = indexAt + i * INDEX_ENTRY_SIZE;
    const tag = prefix.readUInt32BE(at);
    const type = prefix.readUInt32BE(at + 4);
    const offset = prefix.readUInt32BE(at + 8);
    const count = prefix.readUInt32BE(at + 12);
    if (tag === REGION_TAG) continue;
    if (offset > store.length) throw new PackageFormatError('bad_signature_header', `signature tag ${tag} points outside the header`);
    const length = dataLength(type, count, store, offset);
    if (offset + length > store.length) throw new PackageFormatError('bad_signature_header', `signature tag ${tag} runs past the header`);
    signature.push({ tag, type, count, data: Buffer.from(store.subarray(offset, offset + length)) });
  }
  return { lead: Buffer.from(prefix.subarray(0, sigStart)), signature, headerStart, headerEnd, signatureSize: headerStart - sigStart };
}

/** The entries with every earlier OpenPGP signature removed and ours added. */
export function withOurSignatures(entries: readonly SignatureEntry[], algorithm: SigningAlgorithm, headerOnly: Uint8Array, headerAndPayload: Uint8Array): SignatureEntry[] {
  const kept = entries.filter((e) => !SIGNATURE_TAGS.has(e.tag));
  const bin = (tag: number, bytes: Uint8Array): SignatureEntry => ({ tag, type: RpmType.BIN, count: bytes.length, data: Buffer.from(bytes) });
  return [
    ...kept,
    bin(algorithm === 'rsa' ? SignatureTag.RSA : SignatureTag.DSA, headerOnly),
    bin(algorithm === 'rsa' ? SignatureTag.PGP : SignatureTag.GPG, headerAndPayload),
  ];
}

/** Whether the signature header carries any OpenPGP signature. */
export const hasSignature = (entries: readonly SignatureEntry[]) => entries.some((e) => SIGNATURE_TAGS.has(e.tag));

const ALIGN: Partial<Record<number, number>> = { [RpmType.INT16]: 2, [RpmType.INT32]: 4, [RpmType.INT64]: 8 };

/**
 * The signature header bytes (intro, index, store) plus the padding to 8 bytes that precedes the
 * main header. RESERVEDSPACE is sized so the result is `targetSize` bytes when the entries fit
 * in it, the way rpmsign keeps a package's layout; otherwise it is dropped and the header grows.
 */
export function buildSignatureHeader(entries: readonly SignatureEntry[], targetSize: number): Buffer {
  const base = entries.filter((e) => e.tag !== RESERVED_SPACE_TAG).sort((a, b) => a.tag - b.tag);
  const attempt = (reserved: number): Buffer => {
    const all = reserved > 0 ? [...base, { tag: RESERVED_SPACE_TAG, type: RpmType.BIN, count: reserved, data: Buffer.alloc(reserved) }].sort((a, b) => a.tag - b.tag) : base;
    return layout(all);
  };
  const bare = attempt(0);
  // RESERVEDSPACE adds one index entry (16 bytes) besides its data.
  const room = targetSize - bare.length - INDEX_ENTRY_SIZE;
  if (room <= 0) return bare;
  const sized = attempt(room);
  return sized.length === targetSize ? sized : bare;
}

function layout(entries: readonly SignatureEntry[]): Buffer {
  const indexCount = entries.length + 1;
  const index = Buffer.alloc(indexCount * INDEX_ENTRY_SIZE);
  const parts: Buffer[] = [];
  let offset = 0;
  entries.forEach((e, i) => {
    const align = ALIGN[e.type] ?? 1;
    const pad = (align - (offset % align)) % align;
    if (pad) parts.push(Buffer.alloc(pad));
    offset += pad;
    const at = (i + 1) * INDEX_ENTRY_SIZE;
    index.writeUInt32BE(e.tag, at);
    index.writeUInt32BE(e.type, at + 4);
    index.writeUInt32BE(offset, at + 8);
    index.writeUInt32BE(e.count, at + 12);
    parts.push(e.data);
    offset += e.data.length;
  });
  // The region entry comes first; its trailer, last in the store, says the region spans every entry.
  const trailer = Buffer.alloc(16);
  trailer.writeUInt32BE(REGION_TAG, 0);
  trailer.writeUInt32BE(RpmType.BIN, 4);
  trailer.writeInt32BE(-indexCount * INDEX_ENTRY_SIZE, 8);
  trailer.writeUInt32BE(16, 12);
  index.writeUInt32BE(REGION_TAG, 0);
  index.writeUInt32BE(RpmType.BIN, 4);
  index.writeUInt32BE(offset, 8);
  index.writeUInt32BE(16, 12);
  parts.push(trailer);
  offset += 16;

  const intro = Buffer.alloc(HEADER_INTRO_SIZE);
  intro.set([0x8e, 0xad, 0xe8, 0x01], 0);
  intro.writeUInt32BE(indexCount, 8);
  intro.writeUInt32BE(offset, 12);
  const size = HEADER_INTRO_SIZE + index.length + offset;
  return Buffer.concat([intro, index, ...parts, Buffer.alloc((8 - (size % 8)) % 8)]);
}
