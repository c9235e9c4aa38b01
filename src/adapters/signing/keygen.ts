/**
 * Key generation off the main thread. RSA-4096 generation can take seconds; running it in a
 * worker_thread keeps the event loop free (the service must answer health checks meanwhile).
 */
import { Worker } from 'node:worker_threads';
import { DomainError } from '../../domain/errors.js';
import type { KeyType } from './signer.js';

/** What to generate. */
export interface KeyGenOptions {
  name: string;
  email: string;
  /** Default `rsa`. */
  type?: KeyType;
  /** RSA modulus size; default 4096, at least 3072. */
  rsaBits?: number;
  /** Days until the key expires; 0 or absent: never. */
  expiresDays?: number;
  /** The private key is encrypted with this passphrase before it leaves the worker. */
  passphrase: string;
}

/** A generated key pair, armored; the private key encrypted with the passphrase. */
export interface GeneratedKey {
  fingerprint: string;
  privateKeyArmored: string;
  publicKeyArmored: string;
}

/** Message the worker posts back. */
type KeyGenReply = { ok: true; key: GeneratedKey } | { ok: false; message: string };

/**
 * The worker's program, plain JavaScript run with `eval: true`: a separate .ts entry file would
 * not load in a worker under tsx, and this way the same code runs from src/ and from dist/.
 * OpenPGP.js is imported by the URL the main thread resolved. Keys are v4 (`v6Keys: false`),
 * signatures SHA-512; Ed25519 uses the legacy EdDSA algorithm id 22 that gpg 2.2 reads (the
 * RFC 9580 id 27 is refused). A repository key only signs: no encryption subkey.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
(async () => {
  const openpgp = await import(workerData.openpgpUrl);
  const o = workerData.options;
  const config = { v6Keys: false, preferredHashAlgorithm: openpgp.enums.hash.sha512 };
  const common = {
    userIDs: [{ name: o.name, email: o.email }],
    passphrase: o.passphrase,
    keyExpirationTime: (o.expiresDays || 0) * 86400,
    subkeys: [],
    format: 'object',
    config,
  };
  const pair = o.type === 'ed25519'
    ? await openpgp.generateKey({ ...common, type: 'ecc', curve: 'ed25519Legacy' })
    : await openpgp.generateKey({ ...common, type: 'rsa', rsaBits: o.rsaBits || 4096 });
  if (pair.privateKey.isDecrypted()) throw new Error('generated private key is not encrypted');
  return {
    ok: true,
    key: {
      fingerprint: pair.privateKey.getFingerprint().toUpperCase(),
      privateKeyArmored: pair.privateKey.armor(),
      publicKeyArmored: pair.publicKey.armor(),
    },
  };
})()
  .catch((err) => ({ ok: false, message: err && err.message ? err.message : String(err) }))
  .then((reply) => parentPort.postMessage(reply));
`;

/** Checks the options; throws DomainError `invalid_key_options`. */
export function validateKeyGenOptions(o: KeyGenOptions): void {
  const bad = (why: string): DomainError => new DomainError('invalid', 'invalid_key_options', why);
  if (o.name.trim() === '' || o.name.length > 200 || /[<>\r\n]/.test(o.name)) throw bad('name must be 1-200 characters without < > or line breaks');
  if (!/^[^\s<>@]+@[^\s<>@]+$/.test(o.email) || o.email.length > 254) throw bad('invalid email');
  if (o.type !== undefined && o.type !== 'rsa' && o.type !== 'ed25519') throw bad('type must be rsa or ed25519');
  if (o.rsaBits !== undefined && ![3072, 4096].includes(o.rsaBits)) throw bad('rsa_bits must be 3072 or 4096');
  if (o.expiresDays !== undefined && (!Number.isInteger(o.expiresDays) || o.expiresDays < 0 || o.expiresDays > 36500)) {
    throw bad('expires_days must be an integer from 0 to 36500');
  }
  if (o.passphrase === '') throw bad('a passphrase is required to protect the private key');
}

/** Generate a key pair in a worker thread. */
export async function generateKeyInWorker(options: KeyGenOptions): Promise<GeneratedKey> {
  validateKeyGenOptions(options);
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { openpgpUrl: import.meta.resolve('openpgp'), options },
  });
  return new Promise<GeneratedKey>((resolve, reject) => {
    let settled = false;
    worker.once('message', (reply: KeyGenReply) => {
      settled = true;
      if (reply.ok) resolve(reply.key);
      else reject(new DomainError('unavailable', 'key_generation_failed', reply.message));
      void worker.terminate();
    });
    worker.once('error', (err) => {
      settled = true;
      void worker.terminate();
      reject(new DomainError('unavailable', 'key_generation_failed', err.message));
    });
    worker.once('exit', (code) => {
      if (!settled) reject(new DomainError('unavailable', 'key_generation_failed', `key generation worker exited with ${code}`));
    });
  });
}
