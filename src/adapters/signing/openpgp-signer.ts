/**
 * `Signer` on OpenPGP.js v6. Keys are v4 (RFC 4880) and signatures use SHA-512, which is what
 * gpgv 2.2 (Debian 12, Ubuntu 22.04) verifies; RFC 9580 v6 keys and the new Ed25519 algorithm
 * id would be rejected by those clients ("Invalid public key algorithm").
 */
import * as openpgp from 'openpgp';
import { DomainError } from '../../domain/errors.js';
import { armoredSignature, BINARY_SIGNATURE, clearSignedMessage, NativeSigningKey, TEXT_SIGNATURE } from './native-signing.js';
import type { KeyInfo, Signer } from './signer.js';

/** OpenPGP.js settings for every operation: v4 keys, strong hashes only. */
export const OPENPGP_CONFIG: openpgp.PartialConfig = {
  v6Keys: false,
  preferredHashAlgorithm: openpgp.enums.hash.sha512,
};

export class OpenPgpSigner implements Signer {
  readonly fingerprint: string;
  readonly keyId: string;
  readonly userIds: string[];
  readonly algorithm: string;
  readonly created: Date;
  readonly expires: Date | null;
  readonly publicKeyArmored: string;
  readonly publicKeyBinary: Uint8Array;

  private constructor(
    private readonly key: openpgp.PrivateKey,
    info: KeyInfo,
    /** RSA and Ed25519 keys sign through node:crypto (native-signing.ts); other keys, and streams, through OpenPGP.js. */
    private readonly native: { key: NativeSigningKey; until: number } | null,
  ) {
    this.fingerprint = info.fingerprint;
    this.keyId = info.keyId;
    this.userIds = info.userIds;
    this.algorithm = info.algorithm;
    this.created = info.created;
    this.expires = info.expires;
    const pub = key.toPublic();
    this.publicKeyArmored = pub.armor();
    this.publicKeyBinary = pub.write();
  }

  /** Unlock an armored, passphrase-protected private key (DomainError `signing_key_locked` on a wrong passphrase). */
  static async fromArmored(armoredPrivateKey: string, passphrase: string): Promise<OpenPgpSigner> {
    const locked = await openpgp.readPrivateKey({ armoredKey: armoredPrivateKey, config: OPENPGP_CONFIG });
    let key: openpgp.PrivateKey;
    try {
      key = locked.isDecrypted() ? locked : await openpgp.decryptKey({ privateKey: locked, passphrase, config: OPENPGP_CONFIG });
    } catch {
      throw new DomainError('unavailable', 'signing_key_locked', `cannot unlock signing key ${locked.getFingerprint().toUpperCase()}`);
    }
    return new OpenPgpSigner(key, await describeKey(key), await nativeSigningKey(key));
  }

  /**
   * The native signer while the signing key is valid. Past its expiry (or its primary key's)
   * signing goes through OpenPGP.js, which refuses it with its usual error.
   */
  private nativeKey(): NativeSigningKey | null {
    return this.native && Date.now() < this.native.until ? this.native.key : null;
  }

  async clearSign(text: string): Promise<string> {
    // gpg --clearsign treats the newline before the armor as a separator, not as signed text;
    // do the same so InRelease has no stray blank line and its content equals Release.
    const body = text.endsWith('\n') ? text.slice(0, -1) : text;
    const message = await openpgp.createCleartextMessage({ text: body });
    const signed = await openpgp.sign({ message, signingKeys: this.key, config: OPENPGP_CONFIG });
    // OpenPGP.js emits the signed text with CRLF line ends; the text-mode signature covers the
    // canonical form, so LF (as gpg writes, and as apt's parser expects) verifies the same.
    const lf = signed.replace(/\r\n/g, '\n');
    return lf.endsWith('\n') ? lf : `${lf}\n`;
  }

  /**
   * InRelease and Release.gpg from one signature (one RSA operation a publish instead of two). A
   * clear signature is a text-mode signature (class 0x01) over the canonical text (CRLF line ends)
   * and leaves out the line break before its armor. Signing the text *with* its final line break,
   * that separator then being a blank line before the armor, makes it cover exactly the canonical
   * form of the whole Release file, which is what gpgv hashes for a text-mode detached signature:
   * the same packet serves as Release.gpg. apt reads the blank line as the end of the Release
   * paragraph. A clear signature also leaves trailing blanks out of what it covers, so a text with
   * any (or with a carriage return, or without a final line break) gets the two signatures.
   */
  async signRelease(text: string): Promise<{ inRelease: string; releaseGpg: string }> {
    if (!text.endsWith('\n') || /[ \t]\n|\r/.test(text)) {
      const [inRelease, releaseGpg] = await Promise.all([this.clearSign(text), this.detachedSign(text)]);
      return { inRelease, releaseGpg };
    }
    const native = this.nativeKey();
    if (native) {
      const releaseGpg = armoredSignature(await native.signaturePacket(Buffer.from(text.replace(/\n/g, '\r\n')), TEXT_SIGNATURE));
      return { inRelease: clearSignedMessage(text, releaseGpg), releaseGpg };
    }
    const message = await openpgp.createCleartextMessage({ text });
    const signed = await openpgp.sign({ message, signingKeys: this.key, config: OPENPGP_CONFIG });
    const lf = signed.replace(/\r\n/g, '\n');
    const inRelease = lf.endsWith('\n') ? lf : `${lf}\n`;
    // The signature block of a clear-signed message is an armored signature like any detached one.
    return { inRelease, releaseGpg: inRelease.slice(inRelease.lastIndexOf('-----BEGIN PGP SIGNATURE-----')) };
  }

  async detachedSign(data: Uint8Array | string): Promise<string> {
    // Binary mode (sig class 0x00) so the exact bytes are signed, as `gpg --detach-sign` does.
    const binary = typeof data === 'string' ? new TextEncoder().encode(data) : data;
    const native = this.nativeKey();
    if (native) return armoredSignature(await native.signaturePacket(binary, BINARY_SIGNATURE));
    const message = await openpgp.createMessage({ binary });
    const sig = await openpgp.sign({ message, signingKeys: this.key, detached: true, format: 'armored', config: OPENPGP_CONFIG });
    return sig.endsWith('\n') ? sig : `${sig}\n`;
  }

  async detachedSignBinary(data: Uint8Array | ReadableStream<Uint8Array>): Promise<Uint8Array> {
    const native = this.nativeKey();
    if (native && data instanceof Uint8Array) return native.signaturePacket(data, BINARY_SIGNATURE);
    const message = await openpgp.createMessage({ binary: data });
    const sig: Uint8Array | ReadableStream<Uint8Array> = await openpgp.sign({ message, signingKeys: this.key, detached: true, format: 'binary', config: OPENPGP_CONFIG });
    return sig instanceof Uint8Array ? sig : readAll(sig);
  }
}

/** The key OpenPGP.js would sign with (the primary key or a signing subkey), for node:crypto, with when it expires. */
async function nativeSigningKey(key: openpgp.PrivateKey): Promise<{ key: NativeSigningKey; until: number } | null> {
  const signing = await key.getSigningKey().catch(() => null);
  if (!signing) return null;
  const native = NativeSigningKey.from({ algorithm: signing.getAlgorithmInfo().algorithm, fingerprint: signing.getFingerprint(), packet: signing.keyPacket });
  if (!native) return null;
  const expiries = await Promise.all([key.getExpirationTime(), signing.getExpirationTime()]);
  // Date, Infinity (never), or null (no valid self-signature, which getSigningKey would have refused).
  const until = Math.min(...expiries.map((e) => (e instanceof Date ? e.getTime() : e === Infinity ? Infinity : 0)));
  return { key: native, until };
}

/** A streamed input gives a streamed signature: the packet comes once the input is consumed. */
async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** Public facts of any OpenPGP key (private or public). */
export async function describeKey(key: openpgp.Key): Promise<KeyInfo> {
  const fingerprint = key.getFingerprint().toUpperCase();
  const algo = key.getAlgorithmInfo();
  const algorithm = algo.algorithm.startsWith('rsa')
    ? `rsa${algo.bits ?? ''}`
    : algo.algorithm === 'eddsaLegacy' || algo.algorithm === 'ed25519'
      ? 'ed25519'
      : algo.algorithm;
  const expiry = await key.getExpirationTime();
  return {
    fingerprint,
    keyId: fingerprint.slice(-16),
    userIds: key.getUserIDs(),
    algorithm,
    created: key.getCreationTime(),
    expires: expiry instanceof Date ? expiry : null,
  };
}
