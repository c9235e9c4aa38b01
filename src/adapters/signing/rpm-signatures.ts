/**
 * RPM package signatures. Signing puts the repository key's signatures into a copy of an RPM file: a header-only signature and a
 * header+payload one, in a new signature header; lead, main header and payload are copied
 * byte for byte. The payload is streamed (read once for its signature, once for the copy), so a
 * package of any size signs in constant memory. Verifying checks a package's own header-only
 * signature against a set of trusted keys, for teams that sign in their build system.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { PackageFormatError } from '../../domain/errors.js';
import { DomainError } from '../../domain/errors.js';
import { buildSignatureHeader, hasSignature, readRpmSections, SignatureTag, withOurSignatures, type RpmSections, type SigningAlgorithm } from '../../domain/rpm/signature-header.js';
import { hashStream, type HashedTempFile } from '../storage/hash-stream.js';
import { readRpmHeaders } from '../../domain/rpm/reader.js';
import { Tag } from '../../domain/rpm/tags.js';
import type { Signer } from './signer.js';
import { verifyDetached } from './upstream-verify.js';

/** Largest lead + signature header + main header read into memory (rpm itself caps headers far lower). */
const MAX_PREFIX = 64 * 1024 * 1024;

export async function readSections(path: string): Promise<{ sections: RpmSections; prefix: Buffer }> {
  const handle = await open(path, 'r');
  try {
    let prefix: Buffer = Buffer.alloc(0);
    for (;;) {
      const result = readRpmSections(prefix);
      if (!('needed' in result)) {
        if (prefix.length < result.headerEnd) {
          prefix = await readPrefix(handle, result.headerEnd);
          if (prefix.length < result.headerEnd) throw new PackageFormatError('truncated_header', 'the RPM main header is truncated');
        }
        return { sections: result, prefix };
      }
      if (result.needed > MAX_PREFIX) throw new PackageFormatError('header_too_large', 'the RPM headers are too large');
      const longer = await readPrefix(handle, Math.max(result.needed, 64 * 1024));
      if (longer.length < result.needed) throw new PackageFormatError('truncated_header', 'the RPM file is truncated');
      prefix = longer;
    }
  } finally {
    await handle.close();
  }
}

async function readPrefix(handle: FileHandle, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await handle.read(buffer, 0, length, 0);
  return buffer.subarray(0, bytesRead);
}

export function signingAlgorithmOf(signer: Pick<Signer, 'algorithm'>): SigningAlgorithm {
  return signer.algorithm.startsWith('rsa') ? 'rsa' : 'eddsa';
}

/** A signed copy of a package in a temp file, with where its main header now lies. */
export interface SignedRpm {
  file: HashedTempFile;
  /** Offsets of the main header in the signed file (the signature header may have grown). */
  headerStart: number;
  headerEnd: number;
}

/**
 * Writes a copy of `source` signed by `signer` to a new temp file under `tempDir`, hashing it
 * as it is written (the digests repodata lists). The caller moves the file into place or removes it.
 */
export async function signRpmToTemp(source: string, signer: Signer, tempDir: string): Promise<SignedRpm> {
  const { sections, prefix } = await readSections(source);
  const header = prefix.subarray(sections.headerStart, sections.headerEnd);
  const headerOnly = await signer.detachedSignBinary(new Uint8Array(header));
  // OpenPGP.js signs bytes in memory with Node's native RSA, but a stream with its own
  // JavaScript RSA: ~150 ms of blocked event loop per RSA-4096 signature. So the header and
  // payload are read into memory when they are of a usual size, and streamed only beyond it.
  const restSize = (await stat(source)).size - sections.headerStart;
  const rest = restSize <= IN_MEMORY_SIGNING_BYTES ? await readFromOffset(source, sections.headerStart, restSize) : null;
  const headerAndPayload = await signer.detachedSignBinary(rest ?? (Readable.toWeb(createReadStream(source, { start: sections.headerStart })) as ReadableStream<Uint8Array>));
  const entries = withOurSignatures(sections.signature, signingAlgorithmOf(signer), headerOnly, headerAndPayload);
  const signatureHeader = buildSignatureHeader(entries, sections.signatureSize);
  const file = await hashStream(
    (async function* () {
      yield sections.lead;
      yield signatureHeader;
      if (rest) yield rest;
      else yield* createReadStream(source, { start: sections.headerStart });
    })(),
    { tempDir },
  );
  const headerStart = sections.lead.length + signatureHeader.length;
  return { file, headerStart, headerEnd: headerStart + (sections.headerEnd - sections.headerStart) };
}

/** Header and payload up to this size are signed from memory (see signRpmToTemp). */
const IN_MEMORY_SIGNING_BYTES = 64 * 1024 * 1024;

async function readFromOffset(path: string, offset: number, length: number): Promise<Uint8Array> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(length);
    let read = 0;
    while (read < length) {
      const { bytesRead } = await handle.read(buffer, read, length - read, offset + read);
      if (bytesRead === 0) throw new PackageFormatError('truncated_payload', 'the RPM file changed while it was being signed');
      read += bytesRead;
    }
    return buffer;
  } finally {
    await handle.close();
  }
}

/** Whether the package carries any OpenPGP signature of its own (rpmsign's, a distribution's). */
export async function isRpmSigned(path: string): Promise<boolean> {
  return hasSignature((await readSections(path)).sections.signature);
}

/** OpenPGP hash algorithm ids rpm records for PAYLOADDIGESTALGO, as Node names them. */
const PAYLOAD_DIGESTS: Record<number, string> = { 2: 'sha1', 8: 'sha256', 9: 'sha384', 10: 'sha512', 11: 'sha224' };

const invalid = (why: string) => new DomainError('invalid', 'signature_invalid', why);

/**
 * Checks that a package is what a trusted key signed: its header-only OpenPGP signature (the one
 * `rpmsign` always writes) verifies with one of `armoredKeys`, and the payload is the one that
 * header vouches for: its PAYLOADDIGEST matches, or, in packages too old to carry one, the
 * header+payload signature verifies. DomainError `rpm_signature_missing` when the package
 * carries no signature, `signature_invalid` when any check fails.
 */
export async function verifyRpmSignature(path: string, armoredKeys: string): Promise<void> {
  const { sections, prefix } = await readSections(path);
  const signature = sections.signature.find((e) => e.tag === SignatureTag.RSA || e.tag === SignatureTag.DSA);
  if (!signature) throw new DomainError('invalid', 'rpm_signature_missing', 'the package carries no header signature');
  await verifyDetached(new Uint8Array(prefix.subarray(sections.headerStart, sections.headerEnd)), new Uint8Array(signature.data), armoredKeys);

  const { header } = await readRpmHeaders(path);
  const digest = header.stringArray(Tag.PAYLOADDIGEST)?.[0];
  if (digest) {
    const algorithm = PAYLOAD_DIGESTS[header.number(Tag.PAYLOADDIGESTALGO) ?? 8];
    if (!algorithm) throw invalid('the payload digest uses an unknown algorithm');
    const hash = createHash(algorithm);
    for await (const chunk of createReadStream(path, { start: sections.headerEnd })) hash.update(chunk as Buffer);
    if (hash.digest('hex') !== digest.toLowerCase()) throw invalid('the payload does not match the digest in the signed header');
    return;
  }
  const whole = sections.signature.find((e) => e.tag === SignatureTag.PGP || e.tag === SignatureTag.GPG);
  if (!whole) throw invalid('the signature does not cover the payload (no payload digest, no header+payload signature)');
  const signed = Readable.toWeb(createReadStream(path, { start: sections.headerStart })) as ReadableStream<Uint8Array>;
  await verifyDetached(signed, new Uint8Array(whole.data), armoredKeys);
}
