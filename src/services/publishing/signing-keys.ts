import type { AuditLog } from '../../adapters/audit/audit-log.js';
import { bumpGeneration } from '../../adapters/db/distributions.table.js';
import type { Db } from '../../adapters/db/index.js';
import type { KeyringStore } from '../../adapters/signing/keyring-store.js';
import { allDistributions } from '../../domain/distributions.js';
import { isoUtc } from '../../domain/time.js';
import type { Actor } from '../actor.js';
import type { Publisher } from './publisher.js';
import type { ResignProgress, RpmResigner } from './rpm-resigner.js';

export interface SigningKeyView {
  fingerprint: string;
  key_id: string;
  uids: string[];
  algorithm: string;
  created: string;
  expires: string | null;
  armored_public_key: string;
  key_count: number;
  keys: Array<{ fingerprint: string; algorithm: string; created: string; active: boolean }>;
  /** The RPM packages' signatures: how many carry the active key's, and whether a re-signing runs. */
  rpm_signing: ResignProgress;
}

export interface NewKeyRequest {
  name: string;
  email: string;
  algorithm: 'rsa4096' | 'rsa3072' | 'ed25519';
  expiresDays?: number;
}

/** The repository signing key: what it is, and rotation (a new active key, every index and RPM re-signed). */
export class SigningKeys {
  constructor(
    private readonly db: Db,
    private readonly keyring: KeyringStore,
    private readonly publisher: Publisher,
    private readonly resigner: RpmResigner,
    private readonly audit: AuditLog,
  ) {}

  async describe(): Promise<SigningKeyView> {
    const signer = await this.keyring.ensureKey();
    const keys = await this.keyring.list();
    return {
      fingerprint: signer.fingerprint,
      key_id: signer.keyId,
      uids: signer.userIds,
      algorithm: signer.algorithm,
      created: isoUtc(signer.created),
      expires: signer.expires ? isoUtc(signer.expires) : null,
      armored_public_key: signer.publicKeyArmored,
      key_count: keys.length,
      keys: keys.map((k) => ({ fingerprint: k.fingerprint, algorithm: k.algorithm, created: isoUtc(k.created), active: k.active })),
      rpm_signing: await this.resigner.progress(),
    };
  }

  /**
   * Generates and activates a new key; every index is re-signed with it before this returns, and
   * the RPM packages are re-signed in the background (`rpm_signing` tells how far it is).
   */
  async rotate(request: NewKeyRequest, actor: Actor): Promise<SigningKeyView> {
    await this.keyring.generate({
      name: request.name,
      email: request.email,
      expiresDays: request.expiresDays,
      type: request.algorithm === 'ed25519' ? 'ed25519' : 'rsa',
      ...(request.algorithm === 'rsa3072' ? { rsaBits: 3072 } : {}),
    });
    const distributions = allDistributions();
    for (const d of distributions) await bumpGeneration(this.db, d.codename);
    await Promise.all(distributions.map((d) => this.publisher.request(d.codename)));
    void this.resigner.start();
    const view = await this.describe();
    await this.audit.record({ action: 'GPG_GENERATE', user: actor.username, result: 'SUCCESS', detail: `fingerprint=${view.fingerprint}; algorithm=${view.algorithm}`, ip: actor.ip });
    return view;
  }
}
