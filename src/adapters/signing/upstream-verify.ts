/**
 * Verifies upstream repositories' signatures with the source's armored public key(s): an APT
 * InRelease (cleartext signature), a Release or repomd.xml with its detached armored signature.
 * Only the text the signature covers is ever returned, so nothing outside the armor is trusted.
 */
import * as openpgp from 'openpgp';
import { DomainError } from '../../domain/errors.js';

const refused = (why: string) => new DomainError('invalid', 'signature_invalid', why);

const BLOCK = /-----BEGIN PGP PUBLIC KEY BLOCK-----[\s\S]*?-----END PGP PUBLIC KEY BLOCK-----/g;

/**
 * Reads the source's key blocks (upstreams often publish several keys, concatenated, during a
 * rotation); a key that does not parse is a 422 at source creation.
 */
export async function readUpstreamKeys(armored: string): Promise<openpgp.Key[]> {
  try {
    const blocks = armored.match(BLOCK) ?? [];
    const keys = (await Promise.all(blocks.map((block) => openpgp.readKeys({ armoredKeys: block })))).flat();
    if (keys.length === 0) throw new Error('no key');
    return keys;
  } catch {
    throw new DomainError('invalid', 'invalid_key', 'key is not an armored OpenPGP public key');
  }
}

/** Fingerprints of the keys in an armored block (upper-case hex). */
export async function keyFingerprints(armored: string): Promise<string[]> {
  return (await readUpstreamKeys(armored)).map((key) => key.getFingerprint().toUpperCase());
}

/** Verifies an InRelease file and answers the signed text. */
export async function verifyCleartext(signedText: string, armoredKeys: string): Promise<string> {
  const verificationKeys = await readUpstreamKeys(armoredKeys);
  let message: openpgp.CleartextMessage;
  try {
    message = await openpgp.readCleartextMessage({ cleartextMessage: signedText });
  } catch {
    throw refused('InRelease is not an OpenPGP cleartext-signed message');
  }
  await checkSignatures(() => openpgp.verify({ message, verificationKeys, expectSigned: true }));
  // getText() is the signed text with dash-escaping undone; the signature covers exactly this.
  const text = message.getText();
  return text.endsWith('\n') ? text : `${text}\n`;
}

/** Verifies `data` (bytes, or a stream of them) against an armored (or binary) detached signature. */
export async function verifyDetached(data: Uint8Array | ReadableStream<Uint8Array>, signature: Uint8Array, armoredKeys: string): Promise<void> {
  const verificationKeys = await readUpstreamKeys(armoredKeys);
  let parsed: openpgp.Signature;
  try {
    const text = Buffer.from(signature).toString('latin1');
    parsed = text.includes('-----BEGIN PGP SIGNATURE-----')
      ? await openpgp.readSignature({ armoredSignature: text })
      : await openpgp.readSignature({ binarySignature: signature });
  } catch {
    throw refused('the detached signature cannot be read');
  }
  const message = await openpgp.createMessage({ binary: data });
  await checkSignatures(() => openpgp.verify({ message, signature: parsed, verificationKeys, expectSigned: true, format: 'binary' }));
}

async function checkSignatures(run: () => Promise<{ data: unknown; signatures: Array<{ verified: Promise<boolean> }> }>): Promise<void> {
  try {
    const result = await run();
    // A streamed message is verified as its data is read: read it all before asking.
    if (result.data instanceof ReadableStream) for await (const _ of result.data as ReadableStream<Uint8Array>) void _;
    const checks = await Promise.allSettled(result.signatures.map((s) => s.verified));
    if (!checks.some((c) => c.status === 'fulfilled' && c.value === true)) throw new Error('no valid signature');
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw refused(`signature verification failed: ${why.slice(0, 200)}`);
  }
}
