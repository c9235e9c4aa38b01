/**
 * The repository's signing keys on disk. Layout of `dir` (mode 0700):
 *   `<FINGERPRINT>.key`  armored private key, encrypted with the caller's passphrase (mode 0600)
 *   `active`             fingerprint of the key that signs now
 * Rotation generates a new key and makes it active; older keys are kept (`keyCount()`).
 * The active public key is exported, atomically, to `<publicDir>/<baseName>.asc` and `.gpg`,
 * followed by the keys whose signatures are still being replaced after a rotation, so a client
 * importing the key file meanwhile can verify both what is already re-signed and what is not yet.
 */
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as openpgp from 'openpgp';
import { DomainError } from '../../domain/errors.js';
import { isErrno, writeFileAtomic } from '../storage/atomic.js';
import { generateKeyInWorker, validateKeyGenOptions, type KeyGenOptions } from './keygen.js';
import { describeKey, OPENPGP_CONFIG, OpenPgpSigner } from './openpgp-signer.js';
import type { KeyInfo, Signer } from './signer.js';

/** Options for a new key; anything omitted comes from the store's defaults. */
export type NewKeyOptions = Partial<Omit<KeyGenOptions, 'passphrase'>>;

export interface KeyringStoreOptions {
  /** Private folder for the keys, e.g. `<DATA_DIR>/keys` — never under the served repository. */
  dir: string;
  /** Where the public key is exported, e.g. `<DATA_DIR>/repo/keys`. */
  publicDir: string;
  /** Encrypts the private keys at rest (derive it from the service secret). */
  passphrase: string;
  /** Used by `ensureKey()` when no key exists yet, and as defaults for `generate()`. */
  defaults: Omit<KeyGenOptions, 'passphrase'>;
  /** Export file base name (default `tollgate`). */
  publicBaseName?: string;
}

/** KeyInfo plus whether the key is the one signing now. */
export interface StoredKeyInfo extends KeyInfo {
  active: boolean;
}

const KEY_FILE = /^([0-9A-F]{40})\.key$/;
/** How often the key in use is compared with the shared `active` file. */
const ACTIVE_CHECK_MS = 2000;
/** Longest wait for another process generating the first key (RSA-4096 takes seconds). */
const FIRST_KEY_WAIT_MS = 5 * 60_000;

export class KeyringStore {
  private signer: Signer | null = null;
  private ensuring: Promise<Signer> | null = null;
  /** Serialises generation and activation so concurrent rotations cannot interleave. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Earlier keys exported after the active one (fingerprints). */
  private alsoExported: string[] = [];
  /** When `active` was last compared with the key in use (another replica may rotate it). */
  private checkedActiveAt = Date.now();

  constructor(private readonly options: KeyringStoreOptions) {
    validateKeyGenOptions({ ...options.defaults, passphrase: options.passphrase });
  }

  /** The active signer, or null while the first key is still being loaded or generated. */
  current(): Signer | null {
    return this.signer;
  }

  /**
   * Resolves with the active signer, loading it or generating the first key if there is none.
   * Replicas share the key folder: when another one has rotated the key (`active` names another
   * fingerprint, looked at every few seconds at most), this one loads the new key too.
   */
  async ensureKey(): Promise<Signer> {
    if (this.signer && Date.now() - this.checkedActiveAt > ACTIVE_CHECK_MS) {
      this.checkedActiveAt = Date.now();
      const active = await this.readActive();
      if (active && active !== this.signer.fingerprint) {
        await this.serialised(async () => {
          if (this.signer?.fingerprint !== active) this.signer = await OpenPgpSigner.fromArmored(await this.readKeyFile(active), this.options.passphrase);
        });
      }
    }
    if (this.signer) return this.signer;
    if (!this.ensuring) {
      this.ensuring = this.serialised(() => this.loadOrCreate());
      this.ensuring.catch(() => { this.ensuring = null; }); // allow a retry after a failure
    }
    return this.ensuring;
  }

  /**
   * Generate a new key, make it the active one (older keys are kept) and export its public key.
   * The key it replaces stays in the exported files until `exportPublicKeys` says otherwise.
   */
  generate(options: NewKeyOptions = {}): Promise<Signer> {
    return this.serialised(async () => {
      const previous = this.signer?.fingerprint;
      if (previous && !this.alsoExported.includes(previous)) this.alsoExported = [previous, ...this.alsoExported];
      const generated = await generateKeyInWorker({ ...this.options.defaults, ...options, passphrase: this.options.passphrase });
      await this.ensureDir();
      await writeFileAtomic(join(this.options.dir, `${generated.fingerprint}.key`), generated.privateKeyArmored, { mode: 0o600 });
      return this.activate(generated.fingerprint);
    });
  }

  /** Exports the active key followed by `also` (earlier keys some published files are still signed with). */
  exportPublicKeys(also: readonly string[]): Promise<void> {
    return this.serialised(async () => {
      const signer = this.signer;
      if (!signer) return;
      this.alsoExported = also.filter((fp) => fp !== signer.fingerprint);
      await this.export(signer);
    });
  }

  /** Every stored key, the active one first, then newest first. */
  async list(): Promise<StoredKeyInfo[]> {
    const active = await this.readActive();
    const infos: StoredKeyInfo[] = [];
    for (const fp of await this.fingerprints()) {
      const key = await openpgp.readPrivateKey({ armoredKey: await this.readKeyFile(fp), config: OPENPGP_CONFIG });
      infos.push({ ...(await describeKey(key)), active: fp === active });
    }
    return infos.sort((a, b) => Number(b.active) - Number(a.active) || b.created.getTime() - a.created.getTime());
  }

  /** Number of stored keys (health `key_count`). */
  async keyCount(): Promise<number> {
    return (await this.fingerprints()).length;
  }

  private async loadOrCreate(): Promise<Signer> {
    let active = await this.readActive();
    if (active === null) {
      // A crash between writing a key and activating it leaves keys without `active`: adopt the newest.
      const newest = (await this.list())[0]; // none is active, so this is the newest
      if (newest) active = newest.fingerprint;
    }
    if (active === null) active = await this.generateFirstKey();
    return this.activate(active);
  }

  /**
   * The first key, made by one process: replicas starting together on an empty key folder would
   * otherwise each generate one and sign with different keys. The others wait for its `active`.
   */
  private async generateFirstKey(): Promise<string> {
    await this.ensureDir();
    const lock = join(this.options.dir, '.first-key.lock');
    for (const giveUp = Date.now() + FIRST_KEY_WAIT_MS; ; ) {
      try {
        await writeFile(lock, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
        break;
      } catch (err) {
        if (!isErrno(err, 'EEXIST')) throw err;
      }
      const active = await this.readActive();
      if (active) return active;
      // A holder that died mid-generation leaves its lock; it is taken over once stale.
      const age = Date.now() - (await stat(lock).then((s) => s.mtimeMs, () => Date.now()));
      if (age > FIRST_KEY_WAIT_MS || Date.now() > giveUp) await rm(lock, { force: true });
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    try {
      const raced = await this.readActive();
      if (raced) return raced;
      const generated = await generateKeyInWorker({ ...this.options.defaults, passphrase: this.options.passphrase });
      await writeFileAtomic(join(this.options.dir, `${generated.fingerprint}.key`), generated.privateKeyArmored, { mode: 0o600 });
      await writeFileAtomic(join(this.options.dir, 'active'), `${generated.fingerprint}\n`, { mode: 0o600 });
      return generated.fingerprint;
    } finally {
      await rm(lock, { force: true });
    }
  }

  /** Unlock `fingerprint`, point `active` at it, re-export the public key, and start signing with it. */
  private async activate(fingerprint: string): Promise<Signer> {
    const signer = await OpenPgpSigner.fromArmored(await this.readKeyFile(fingerprint), this.options.passphrase);
    await this.ensureDir();
    await writeFileAtomic(join(this.options.dir, 'active'), `${fingerprint}\n`, { mode: 0o600 });
    this.alsoExported = this.alsoExported.filter((fp) => fp !== fingerprint);
    await this.export(signer);
    this.signer = signer;
    return signer;
  }

  private async export(signer: Signer): Promise<void> {
    const earlier: openpgp.Key[] = [];
    for (const fp of this.alsoExported) {
      // A key file removed by hand is simply no longer exported.
      const armored = await this.readKeyFile(fp).catch(() => null);
      if (armored) earlier.push((await openpgp.readPrivateKey({ armoredKey: armored, config: OPENPGP_CONFIG })).toPublic());
    }
    const base = join(this.options.publicDir, this.options.publicBaseName ?? 'tollgate');
    await writeFileAtomic(`${base}.asc`, [signer.publicKeyArmored, ...earlier.map((k) => k.armor())].join(''));
    await writeFileAtomic(`${base}.gpg`, Buffer.concat([signer.publicKeyBinary, ...earlier.map((k) => k.write())]));
  }

  private async readActive(): Promise<string | null> {
    try {
      const fp = (await readFile(join(this.options.dir, 'active'), 'utf8')).trim();
      return /^[0-9A-F]{40}$/.test(fp) ? fp : null;
    } catch (err) {
      if (isErrno(err, 'ENOENT')) return null;
      throw err;
    }
  }

  private async readKeyFile(fingerprint: string): Promise<string> {
    try {
      return await readFile(join(this.options.dir, `${fingerprint}.key`), 'utf8');
    } catch (err) {
      if (isErrno(err, 'ENOENT')) throw new DomainError('unavailable', 'signing_key_missing', `signing key ${fingerprint} not found`);
      throw err;
    }
  }

  private async fingerprints(): Promise<string[]> {
    try {
      const names = await readdir(this.options.dir);
      return names.flatMap((n) => KEY_FILE.exec(n)?.[1] ?? []);
    } catch (err) {
      if (isErrno(err, 'ENOENT')) return [];
      throw err;
    }
  }

  private async ensureDir(): Promise<void> {
    await mkdir(this.options.dir, { recursive: true, mode: 0o700 });
  }

  private serialised<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
