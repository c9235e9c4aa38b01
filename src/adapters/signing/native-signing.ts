/**
 * RSA and Ed25519 signatures made by OpenSSL (node:crypto) with a private key imported once,
 * written as OpenPGP v4 signature packets (RFC 4880 §5.2.3). OpenPGP.js rebuilds the key from its
 * JWK for every signature and reaches it through several layers of promises and streams: ~6 ms a
 * signature with RSA-4096 against ~4.2 ms for the RSA operation itself, and ~1.1 ms with Ed25519
 * against well under 0.1 ms, on a path every publish waits for. OpenPGP.js still reads, unlocks
 * and describes the key; this module only signs.
 */
import { createHash, createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';

/** RFC 4880 §9.1 public-key algorithm ids this module signs with, by OpenPGP.js's names. */
const RSA_ALGORITHMS: Record<string, number> = { rsaEncryptSign: 1, rsaSign: 3 };
/** EdDSA as GnuPG and OpenPGP.js write v4 Ed25519 keys (draft-koch-eddsa-for-openpgp; RFC 9580's EdDSALegacy). */
const EDDSA_LEGACY = 22;
/** RFC 4880 §9.4: SHA-512, as every other signature Tollgate makes (OPENPGP_CONFIG). */
const SHA512 = 10;

/** Signature classes used here (RFC 4880 §5.2.1). */
export const BINARY_SIGNATURE = 0x00;
export const TEXT_SIGNATURE = 0x01;

/** The parts of an unlocked OpenPGP.js secret key packet read here (not in its typings). */
interface KeyPacketParams {
  publicParams?: { n?: unknown; e?: unknown; Q?: unknown };
  privateParams?: { d?: unknown; p?: unknown; q?: unknown; u?: unknown; seed?: unknown };
}

/** What identifies the signing key inside a signature. */
export interface SigningKeyFacts {
  /** OpenPGP.js's algorithm name (`rsaEncryptSign`, `rsaSign`, `eddsaLegacy`, …). */
  algorithm: string;
  /** v4 fingerprint, 40 hex digits. */
  fingerprint: string;
  /** The key's secret packet, unlocked. */
  packet: unknown;
}

const bigOf = (bytes: Uint8Array): bigint => (bytes.length === 0 ? 0n : BigInt(`0x${Buffer.from(bytes).toString('hex')}`));
const b64url = (n: bigint): string => {
  const hex = n.toString(16);
  return Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex').toString('base64url');
};
const isBytes = (v: unknown): v is Uint8Array => v instanceof Uint8Array && v.length > 0;

/** A subpacket (RFC 4880 §5.2.3.1); every one used here is shorter than 192 bytes. */
const subpacket = (type: number, data: Buffer): Buffer => Buffer.concat([Buffer.from([data.length + 1, type]), data]);

/** A multiprecision integer (RFC 4880 §3.2): bit count, then the bytes without leading zeros. */
function mpi(bytes: Buffer): Buffer {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const body = bytes.subarray(start);
  const bits = (body.length - 1) * 8 + (body[0] === 0 ? 0 : 32 - Math.clz32(body[0]!));
  return Buffer.concat([Buffer.from([bits >> 8, bits & 0xff]), body]);
}

/** A new-format packet header (RFC 4880 §4.2.2) and body. */
function packet(tag: number, body: Buffer): Buffer {
  const n = body.length;
  const length = n < 192
    ? Buffer.from([n])
    : n < 8384
      ? Buffer.from([((n - 192) >> 8) + 192, (n - 192) & 0xff])
      : Buffer.from([0xff, n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]);
  return Buffer.concat([Buffer.from([0xc0 | tag]), length, body]);
}

/** An RSA signature (PKCS#1 v1.5 over SHA-512 of the signed data) on the thread pool: RSA-4096 takes milliseconds. */
const rsaValue = (key: KeyObject) => (signed: Buffer): Promise<Buffer> =>
  new Promise((resolve, reject) => sign('sha512', signed, key, (error, signature) => (error ? reject(error) : resolve(mpi(signature)))));

/** An EdDSA signature of the digest (as OpenPGP signs with EdDSA), its r and s as two MPIs; inline: it takes microseconds. */
const eddsaValue = (key: KeyObject) => async (_signed: Buffer, digest: Buffer): Promise<Buffer> => {
  const signature = sign(null, digest, key);
  return Buffer.concat([mpi(signature.subarray(0, 32)), mpi(signature.subarray(32))]);
};

type SignatureValue = (signed: Buffer, digest: Buffer) => Promise<Buffer>;

export class NativeSigningKey {
  private constructor(
    private readonly value: SignatureValue,
    private readonly algorithmId: number,
    private readonly fingerprint: Buffer,
  ) {}

  /**
   * The key as node:crypto holds it, or null when it is not an unlocked v4 RSA or Ed25519 key
   * whose parameters can be read (the caller then signs with OpenPGP.js, as before).
   */
  static from(facts: SigningKeyFacts): NativeSigningKey | null {
    const { publicParams, privateParams } = (facts.packet ?? {}) as KeyPacketParams;
    if (!/^[0-9a-f]{40}$/i.test(facts.fingerprint) || !publicParams || !privateParams) return null;
    const fingerprint = Buffer.from(facts.fingerprint, 'hex');
    if (facts.algorithm === 'eddsaLegacy') {
      const { Q } = publicParams;
      const { seed } = privateParams;
      // Q is the public point with its 0x40 prefix (native encoding); the seed is the private key.
      if (!isBytes(Q) || Q.length !== 33 || Q[0] !== 0x40 || !isBytes(seed) || seed.length !== 32) return null;
      try {
        const x = Buffer.from(Q.subarray(1)).toString('base64url');
        const key = createPrivateKey({ format: 'jwk', key: { kty: 'OKP', crv: 'Ed25519', d: Buffer.from(seed).toString('base64url'), x } });
        // node:crypto derives the public key from the seed: it must be the one the key names.
        if (createPublicKey(key).export({ format: 'jwk' }).x !== x) return null;
        return new NativeSigningKey(eddsaValue(key), EDDSA_LEGACY, fingerprint);
      } catch {
        return null;
      }
    }
    const algorithmId = RSA_ALGORITHMS[facts.algorithm];
    if (!algorithmId) return null;
    const { n, e } = publicParams;
    const { d, p, q, u } = privateParams;
    if (!isBytes(n) || !isBytes(e) || !isBytes(d) || !isBytes(p) || !isBytes(q) || !isBytes(u)) return null;
    // OpenPGP stores p < q and u = p⁻¹ mod q; PKCS#1 wants qInv = q⁻¹ mod p. With the two primes
    // swapped, OpenPGP's u is exactly that (as OpenPGP.js's own JWK conversion does).
    const [P, Q, D] = [bigOf(q), bigOf(p), bigOf(d)];
    try {
      const key = createPrivateKey({
        format: 'jwk',
        key: { kty: 'RSA', n: b64url(bigOf(n)), e: b64url(bigOf(e)), d: b64url(D), p: b64url(P), q: b64url(Q), dp: b64url(D % (P - 1n)), dq: b64url(D % (Q - 1n)), qi: b64url(bigOf(u)) },
      });
      return new NativeSigningKey(rsaValue(key), algorithmId, fingerprint);
    } catch {
      return null;
    }
  }

  /**
   * A v4 signature packet over `data`, already in the form the signature class hashes (for a
   * text signature: CRLF line ends, no trailing blanks). Subpackets as gpg writes them: issuer
   * fingerprint and creation time hashed, issuer key id not.
   */
  async signaturePacket(data: Uint8Array, signatureClass: number, created = new Date()): Promise<Buffer> {
    const seconds = Math.floor(created.getTime() / 1000);
    const time = Buffer.alloc(4);
    time.writeUInt32BE(seconds >>> 0);
    const hashedSubpackets = Buffer.concat([
      subpacket(33, Buffer.concat([Buffer.from([4]), this.fingerprint])),
      subpacket(0x80 | 2, time),
    ]);
    const hashed = Buffer.concat([
      Buffer.from([4, signatureClass, this.algorithmId, SHA512, hashedSubpackets.length >> 8, hashedSubpackets.length & 0xff]),
      hashedSubpackets,
    ]);
    const trailer = Buffer.from([4, 0xff, 0, 0, 0, 0]);
    trailer.writeUInt32BE(hashed.length, 2);
    const signed = Buffer.concat([data, hashed, trailer]);
    const digest = createHash('sha512').update(signed).digest();
    const value = await this.value(signed, digest);
    const unhashed = subpacket(16, this.fingerprint.subarray(12));
    return packet(2, Buffer.concat([
      hashed,
      Buffer.from([unhashed.length >> 8, unhashed.length & 0xff]),
      unhashed,
      digest.subarray(0, 2),
      value,
    ]));
  }
}

/** The armor checksum (RFC 4880 §6.1). */
function crc24(data: Uint8Array): Buffer {
  let crc = 0xb704ce;
  for (const byte of data) {
    crc ^= byte << 16;
    for (let i = 0; i < 8; i++) {
      crc <<= 1;
      if (crc & 0x1000000) crc ^= 0x1864cfb;
    }
  }
  return Buffer.from([(crc >> 16) & 0xff, (crc >> 8) & 0xff, crc & 0xff]);
}

/**
 * ASCII armor of a signature (RFC 4880 §6.2), as OpenPGP.js writes a v4 one: with the checksum,
 * without which GnuPG misreads base64 that ends without padding (dev.gnupg.org/T7071).
 */
export function armoredSignature(signaturePacket: Uint8Array): string {
  const lines = Buffer.from(signaturePacket).toString('base64').match(/.{1,60}/g) ?? [];
  return `-----BEGIN PGP SIGNATURE-----\n\n${lines.join('\n')}\n=${crc24(signaturePacket).toString('base64')}\n-----END PGP SIGNATURE-----\n`;
}

/**
 * A clear-signed message (RFC 4880 §7) of `text` with a text signature over `text` itself: the
 * line break before the armor is the separator, not part of what is signed. Lines starting with a
 * dash are dash-escaped.
 */
export function clearSignedMessage(text: string, signatureArmor: string): string {
  const escaped = text.replace(/^-/gm, '- -');
  return `-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA512\n\n${escaped}\n${signatureArmor}`;
}
