/**
 * Reads the lead, signature header and main header of a .rpm file with positioned reads:
 * only the headers are loaded into memory, never the payload.
 *
 * Layout: lead (96 bytes) | signature header, padded to 8 bytes | main header | payload.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { PackageFormatError } from '../errors.js';
import {
  DEFAULT_HEADER_LIMITS,
  HEADER_INTRO_SIZE,
  parseHeaderIntro,
  RpmHeader,
  type HeaderLimits,
} from './header.js';
import { packageFromHeaders, type RpmPackage } from './package.js';

/** Magic of the lead: ed ab ee db. */
export const LEAD_MAGIC = Buffer.from([0xed, 0xab, 0xee, 0xdb]);
export const LEAD_SIZE = 96;
/** The only signature type rpm still writes and reads: a header structure. */
const RPMSIGTYPE_HEADERSIG = 5;

/** Read limits; any field left out takes its default from DEFAULT_HEADER_LIMITS. */
export type RpmReadLimits = Partial<HeaderLimits>;

/** The lead fields that still mean something. */
export interface RpmLead {
  major: number;
  minor: number;
  /** 0 binary, 1 source. */
  type: number;
  name: string;
}

/** Both headers of a package and where they sit in the file. */
export interface RpmHeaders {
  lead: RpmLead;
  signature: RpmHeader;
  header: RpmHeader;
  /** Offset of the main header's magic. */
  headerStart: number;
  /** Offset just past the main header, where the payload starts. */
  headerEnd: number;
  fileSize: number;
}

async function readAt(fh: FileHandle, position: number, length: number, what: string): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await fh.read(buf, done, length - done, position + done);
    if (bytesRead === 0) throw new PackageFormatError('truncated_header', `the file ends inside the ${what}`);
    done += bytesRead;
  }
  return buf;
}

function parseLead(buf: Buffer): RpmLead {
  if (!buf.subarray(0, 4).equals(LEAD_MAGIC)) {
    throw new PackageFormatError('not_rpm', 'not an RPM package (wrong lead magic)');
  }
  const major = buf.readUInt8(4);
  if (major !== 3 && major !== 4) {
    throw new PackageFormatError('unsupported_rpm_version', `RPM format version ${major} is not supported`);
  }
  const signatureType = buf.readUInt16BE(78);
  if (signatureType !== RPMSIGTYPE_HEADERSIG) {
    throw new PackageFormatError('unsupported_signature_type', `signature type ${signatureType} is not supported`);
  }
  const nameBytes = buf.subarray(10, 76);
  const nul = nameBytes.indexOf(0);
  return {
    major,
    minor: buf.readUInt8(5),
    type: buf.readUInt16BE(6),
    name: nameBytes.subarray(0, nul < 0 ? nameBytes.length : nul).toString('latin1'),
  };
}

async function readHeaderAt(
  fh: FileHandle,
  position: number,
  what: string,
  limits: HeaderLimits,
  fileSize: number,
): Promise<{ header: RpmHeader; end: number; storeSize: number }> {
  if (position + HEADER_INTRO_SIZE > fileSize) throw new PackageFormatError('truncated_header', `the file ends before the ${what} header`);
  const intro = parseHeaderIntro(await readAt(fh, position, HEADER_INTRO_SIZE, `${what} header`), what, limits);
  const bodyStart = position + HEADER_INTRO_SIZE;
  // Check against the real file size before allocating, so a lying size costs nothing.
  if (bodyStart + intro.bodySize > fileSize) throw new PackageFormatError('truncated_header', `the file ends inside the ${what} header`);
  const body = await readAt(fh, bodyStart, intro.bodySize, `${what} header`);
  return { header: RpmHeader.parse(what, intro, body, limits), end: bodyStart + intro.bodySize, storeSize: intro.storeSize };
}

/** Reads and validates the lead and both headers of the package at `path`. */
export async function readRpmHeaders(path: string, limits: RpmReadLimits = {}): Promise<RpmHeaders> {
  const effective: HeaderLimits = { ...DEFAULT_HEADER_LIMITS, ...limits };
  const fh = await open(path, 'r');
  try {
    const { size: fileSize } = await fh.stat();
    if (fileSize < LEAD_SIZE) {
      // Tell "not an rpm at all" from "an rpm cut short" by the magic when there is one.
      const head = await fh.read(Buffer.alloc(4), 0, 4, 0);
      const code = head.bytesRead === 4 && head.buffer.equals(LEAD_MAGIC) ? 'truncated_header' : 'not_rpm';
      throw new PackageFormatError(code, 'the file is too short to be an RPM package');
    }
    const lead = parseLead(await readAt(fh, 0, LEAD_SIZE, 'lead'));
    const sig = await readHeaderAt(fh, LEAD_SIZE, 'signature', effective, fileSize);
    // The signature store is padded so that the main header starts on an 8-byte boundary.
    const headerStart = sig.end + ((8 - (sig.storeSize % 8)) % 8);
    const main = await readHeaderAt(fh, headerStart, 'main', effective, fileSize);
    return { lead, signature: sig.header, header: main.header, headerStart, headerEnd: main.end, fileSize };
  } finally {
    await fh.close();
  }
}

/** Reads the package at `path` and extracts what a repository needs (headers only, bounded). */
export async function readRpmPackage(path: string, limits: RpmReadLimits = {}): Promise<RpmPackage> {
  const h = await readRpmHeaders(path, limits);
  return packageFromHeaders(h.signature, h.header, {
    leadType: h.lead.type,
    headerStart: h.headerStart,
    headerEnd: h.headerEnd,
    fileSize: h.fileSize,
  });
}
