/**
 * The signing seam used by the publishers: sign a Release (clear-signed InRelease and detached
 * Release.gpg) or an RPM repomd.xml (detached .asc). Implemented with OpenPGP.js in
 * `openpgp-signer.ts`; signatures must verify with `gpgv` as shipped by Debian and Ubuntu.
 */

/** Key algorithms we generate: RSA (4096 bits by default) or Ed25519 (v4 EdDSA, which gpg 2.2 reads). */
export type KeyType = 'rsa' | 'ed25519';

/** Public facts about a signing key (safe to show in the API). */
export interface KeyInfo {
  /** 40 upper-case hex digits (v4 fingerprint). */
  fingerprint: string;
  /** Long key id: the last 16 hex digits of the fingerprint, upper case. */
  keyId: string;
  /** User ids as `Name <email>`. */
  userIds: string[];
  /** `rsa4096`, `rsa3072`, `ed25519`. */
  algorithm: string;
  created: Date;
  /** null when the key never expires. */
  expires: Date | null;
}

export interface Signer extends KeyInfo {
  /** Clear-sign `text` (an InRelease file): the text, then an armored signature. */
  clearSign(text: string): Promise<string>;
  /** InRelease (clear-signed) and Release.gpg (armored, detached) for a Release file's text. */
  signRelease(text: string): Promise<{ inRelease: string; releaseGpg: string }>;
  /** An armored detached signature of `data` (Release.gpg, repomd.xml.asc). */
  detachedSign(data: Uint8Array | string): Promise<string>;
  /** The binary signature packet over `data` (bytes or a stream of them), as RPM signature headers hold it. */
  detachedSignBinary(data: Uint8Array | ReadableStream<Uint8Array>): Promise<Uint8Array>;
  /** The public key, ASCII-armored (`tollgate.asc`). */
  readonly publicKeyArmored: string;
  /** The public key, binary OpenPGP packets (`tollgate.gpg`, usable as an APT `signed-by` keyring). */
  readonly publicKeyBinary: Uint8Array;
}
