/**
 * RPM package signatures. Signing puts the repository key's signatures into an RPM file: a header-only signature and a
 * header+payload one, in a new signature header; lead, main header and payload are copied
 * byte for byte. The payload is streamed (read once for its signature, once for the copy), so a
 * package of any size signs in constant memory. Verifying checks a package's own header-only
 * signature against a set of trusted keys, for teams that sign in their build system.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { PackageFormatError } from '../../domain/errors.js';
import { DomainError } from '../../domain/errors.js';
import { buildSignatureHeader, readRpmSections, SignatureTag, withOurSignatures, type RpmSections, type SigningAlgorithm } from '../../domain/rpm/signature-header.js';
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

/** Writes `target` as `source` signed by `signer` (atomically: a temp file renamed into place). */
export async function signRpmFile(source: string, target: string, signer: Signer): Promise<void> {
  const { sections, prefix } = await readSections(source);
  const header = prefix.subarray(sections.headerStart, sections.headerEnd);
  const headerOnly = await signer.detachedSignBinary(new Uint8Array(header));
  const rest = Readable.toWeb(createReadStream(source, { start: sections.headerStart })) as ReadableStream<Uint8Array>;
  const headerAndPayload = await signer.detachedSignBinary(rest);
  const entries = withOurSignatures(sections.signature, signingAlgorithmOf(signer), headerOnly, headerAndPayload);
  const signatureHeader = buildSignatureHeader(entries, sections.signatureSize);
  const temp = `${target}.signing-${process.pid}`;
  try {
    await pipeline(
      async function* () {
        yield sections.lead;
        yield signatureHeader;
        yield* createReadStream(source, { start: sections.headerStart });
      },
      createWriteStream(temp),
    );
    await rename(temp, target);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/**
 * Checks the package's header-only OpenPGP signature (the one `rpmsign` always writes) against
 * `armoredKeys`. DomainError `rpm_signature_missing` when there is none, `signature_invalid`
 * when it does not verify with any of the keys.
 */
export async function verifyRpmSignature(path: string, armoredKeys: string): Promise<void> {
  const { sections, prefix } = await readSections(path);
  const signature = sections.signature.find((e) => e.tag === SignatureTag.RSA || e.tag === SignatureTag.DSA);
  if (!signature) throw new DomainError('invalid', 'rpm_signature_missing', 'the package carries no header signature');
  await verifyDetached(new Uint8Array(prefix.subarray(sections.headerStart, sections.headerEnd)), new Uint8Array(signature.data), armoredKeys);
}
