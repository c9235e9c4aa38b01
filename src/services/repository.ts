import { join } from 'node:path';
import type { Logger } from 'pino';
import type { AuditLog } from '../adapters/audit/audit-log.js';
import { createClamdScanner, type AntivirusScanner } from '../adapters/clamav/index.js';
import type { SecretBox } from '../adapters/crypto/secret-box.js';
import type { Db, DbDialect } from '../adapters/db/index.js';
import { countPackages, countUnlistedPackages } from '../adapters/db/packages.table.js';
import type { Metrics } from '../adapters/metrics/metrics.js';
import { KeyringStore } from '../adapters/signing/keyring-store.js';
import type { Config } from '../config.js';
import { DistributionService } from './distributions.js';
import type { HealthService } from './health.js';
import { FsPackageFiles } from '../adapters/storage/fs-package-files.js';
import type { PackageFiles } from '../adapters/storage/interfaces.js';
import { PackageLifecycle } from './packages/lifecycle.js';
import { SigningKeys } from './publishing/signing-keys.js';
import { RpmResigner } from './publishing/rpm-resigner.js';
import { RpmPackageSigning } from './packages/rpm-signing.js';
import type { SettingsService } from './settings.js';
import { noCveScanner } from './pipeline/cve.js';
import type { CatalogProvides, CveScanner } from './pipeline/deps.js';
import { AptIndexWriter } from '../adapters/storage/apt-index-writer.js';
import { Publisher } from './publishing/publisher.js';
import { RpmIndexWriter } from '../adapters/storage/rpm-index-writer.js';
import { rpmNoarchCopies } from '../domain/repo/rpm/tree.js';
import { UploadService } from './upload.js';
import { DeferredFileLists } from './packages/deferred-file-lists.js';

/** The package repository: files, signing keys, index publishing, the upload pipeline. */
export interface Repository {
  files: PackageFiles;
  keyring: KeyringStore;
  publisher: Publisher;
  uploads: UploadService;
  lifecycle: PackageLifecycle;
  /** The signing key's description and rotation. */
  keys: SigningKeys;
  /** The repository's signature on admitted RPMs: the upload's own checked, the package signed. */
  rpmSigning: RpmPackageSigning;
  /** Signs what the RPM distributions hold with the active key, in the background. */
  resigner: RpmResigner;
  antivirus: AntivirusScanner | null;
  /** Swapped in by the vulnerability scanner once it is built. */
  cve: { scanner: CveScanner };
  /** Swapped in by the import service: what the synced catalogs offer to the dependency check. */
  catalogs: CatalogProvides;
  /** Adds, changes and retires distributions; keeps this process's view of them current. */
  distributions: DistributionService;
  /** Reads the payloads of .deb packages admitted without it, behind the uploads. */
  fileLists: DeferredFileLists;
}

interface RepositoryDeps {
  config: Config;
  db: Db;
  dialect: DbDialect;
  box: SecretBox;
  audit: AuditLog;
  metrics: Metrics;
  health: HealthService;
  settings: Pick<SettingsService, 'all'>;
  log: Logger;
}

export async function createRepository(deps: RepositoryDeps): Promise<Repository> {
  const { config, db, log } = deps;
  const files = new FsPackageFiles(config.dataDir, rpmNoarchCopies);
  await files.init();
  const keyring = new KeyringStore({
    dir: join(config.dataDir, 'keys'),
    publicDir: join(files.repoDir, 'keys'),
    passphrase: deps.box.derive('repository-signing-key'),
    defaults: {
      name: 'Tollgate Repository',
      email: 'repository@tollgate.invalid',
      type: config.signingKeyAlgorithm === 'ed25519' ? 'ed25519' : 'rsa',
    },
  });
  const antivirus = config.clamav ? createClamdScanner(config.clamav) : null;
  const publisher = new Publisher(
    db,
    deps.dialect,
    { deb: new AptIndexWriter(files.repoDir, true, (err) => log.warn({ err }, 'by-hash pruning failed')), rpm: new RpmIndexWriter(files.repoDir, { onCleanUpError: (err) => log.warn({ err }, 'removing old repodata failed') }) },
    () => keyring.ensureKey(),
    deps.metrics,
    log,
  );
  const cve = { scanner: noCveScanner as CveScanner };
  const catalogs: CatalogProvides = { lookup: async () => null };
  const rpmSigning = new RpmPackageSigning({
    rules: async (codename) => {
      const settings = await deps.settings.all();
      const trusted: Partial<Record<string, string>> = settings.rpm_trusted_keys;
      return { policy: settings.rpm_signature_policy, trustedKeys: trusted[codename] || null };
    },
    signer: () => keyring.ensureKey(),
    tempDir: files.tempDir,
  });
  const uploads = new UploadService(
    { db, files, publisher, antivirus, log, rpmSigning, deferDebPayload: config.debPayloadCheck === 'background', catalogs: { lookup: (codename) => catalogs.lookup(codename) }, cve: { assess: (pkg, dist, path) => cve.scanner.assess(pkg, dist, path) } },
    deps.audit,
    deps.metrics,
  );

  // Critical: ready means an upload made now is published in a signed index.
  deps.health.register('gpg', async () => {
    const signer = keyring.current();
    if (!signer) return { ok: false, configured: true, detail: 'repository signing key is being generated' };
    return { ok: true, configured: true, key_count: await keyring.keyCount(), fingerprint: signer.fingerprint, algorithm: signer.algorithm };
  }, true);
  if (antivirus) {
    deps.health.register('clamav', async () => {
      const up = await antivirus.ping();
      if (!up) return { ok: false, configured: true, detail: 'clamd does not answer' };
      const version = await antivirus.version();
      return { ok: true, configured: true, version: version.engine, signatures: version.signatures, signature_date: version.signatureDate };
    }, true);
  }
  const distributions = new DistributionService({ db, files, publisher, audit: deps.audit, log });
  await distributions.load(config.distributionsFile);
  distributions.startRefreshing(config.distributionsRefreshMs);
  deps.metrics.sources.packagesTotal = () => countPackages(db);
  deps.metrics.sources.payloadsPending = () => countUnlistedPackages(db);
  const lifecycle = new PackageLifecycle(db, files, publisher, deps.audit, () => distributions.refresh());
  const resigner = new RpmResigner({ db, files, publisher, keyring, log, graceMs: config.rpmResignGraceMs });
  const keys = new SigningKeys(db, keyring, publisher, resigner, deps.audit);
  const fileLists = new DeferredFileLists({ db, files, publish: (codename) => publisher.request(codename), busy: () => uploads.inFlight > 0, log });
  uploads.onStored(async () => fileLists.kick());
  return { files, keyring, publisher, uploads, lifecycle, keys, rpmSigning, resigner, antivirus, cve, catalogs, distributions, fileLists };
}

/**
 * After start-up (not before: the service is ready at once): create the signing key if there is
 * none, then publish every distribution whose index is older than its content — all of them on
 * the first start, those a crash interrupted afterwards — and re-sign the RPMs not signed by the
 * active key.
 */
export async function publishStaleIndexes(repo: Repository, log: Logger): Promise<void> {
  try {
    await repo.files.removeAbandonedTempFiles();
    await repo.keyring.ensureKey();
    // One failure does not hold back the others; the publisher tries a failed one again itself.
    for (const codename of await repo.publisher.stale()) {
      await repo.publisher.request(codename).catch((error: unknown) => log.warn({ err: error, codename }, 'initial publishing failed; it is tried again'));
    }
    // Payloads a stop left unread.
    repo.fileLists.kick();
    // Finishes a re-signing a stop interrupted, and signs RPMs stored before packages were signed.
    void repo.resigner.start();
  } catch (error) {
    log.error({ err: error }, 'initial publishing failed');
  }
}
