import type { Logger } from 'pino';
import type { AntivirusScanner } from '../../adapters/clamav/index.js';
import type { Db } from '../../adapters/db/index.js';
import type { InspectedPackage } from '../../domain/package.js';
import type { Distribution } from '../../domain/distributions.js';
import type { FindingCounts } from '../../domain/pipeline/types.js';
import type { StoredCveStatus, StoredFinding } from '../../domain/security/policy.js';
import type { PackageFiles } from '../../adapters/storage/interfaces.js';
import type { ProvidesLookup } from '../formats/types.js';
import type { RpmPackageSigning } from '../packages/rpm-signing.js';
import type { Publisher } from '../publishing/publisher.js';

/** What the CVE step learns: findings, their counts, and what the policy makes of them. */
export interface CveAssessment {
  outcome: 'published' | 'pending_review' | 'quarantined';
  cveStatus: StoredCveStatus;
  counts: FindingCounts;
  findings: StoredFinding[];
  reasons: string[];
  slaDeadline: string | null;
  message: string;
}

/** The vulnerability scanner as the pipeline sees it; null result = no database to scan with. */
export interface CveScanner {
  /** `path` is the uploaded file, for scanners that read what the package embeds. */
  assess(pkg: InspectedPackage, dist: Distribution, path?: string): Promise<CveAssessment | null>;
}

/** What the synced import catalogs of a distribution offer, for the dependency check; null without any. */
export interface CatalogProvides {
  lookup(codename: string): Promise<ProvidesLookup | null>;
}

/** The adapters and services the upload steps use. */
export interface PipelineDeps {
  db: Db;
  files: PackageFiles;
  publisher: Publisher;
  antivirus: AntivirusScanner | null;
  cve: CveScanner;
  rpmSigning: RpmPackageSigning;
  catalogs: CatalogProvides;
  /** Leave a .deb's payload to be read after admission (DEB_PAYLOAD_CHECK=background); default: read it at upload. */
  deferDebPayload?: boolean;
  uploadedBy: string | null;
  /** Told once this upload's row is stored, before it waits for the signed index (UploadInput.onAdmitted). */
  onAdmitted?: () => void;
  log: Logger;
}
