/**
 * Table row types. Both dialects store timestamps as ISO-8601 text, booleans as 0/1 integers
 * and structured values as JSON text, so one query code serves SQLite and PostgreSQL.
 */
import type { Generated } from 'kysely';
import type { PackageFormat, PackageStatus } from '../../domain/distributions.js';
import type { Role } from '../../domain/roles.js';
import type { StoredCveStatus } from '../../domain/security/policy.js';
import type { DecisionAction } from '../../domain/security/state-machine.js';
import type { FixState, Severity } from '../../domain/security/types.js';
import type { ImportTables } from './import-schema.js';

/** Where an account's password is checked. */
export type UserSource = 'local' | 'ldap';

export interface UsersTable {
  id: string;
  username: string;
  email: string | null;
  full_name: string | null;
  password_hash: string | null;
  role: Role;
  is_active: number;
  source: UserSource;
  /** Bumped on password change or reset: JWTs carrying an older value are refused. */
  token_version: number;
  mfa_secret: string | null;
  mfa_enabled: number;
  last_login: string | null;
  created_at: string;
  updated_at: string;
}

export interface LoginFailuresTable {
  username: string;
  at: string;
}

export interface ApiTokensTable {
  id: string;
  name: string;
  token_hash: string;
  role: Role;
  user_id: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
  /** `api` (every route the role allows) or `read` (`tg_r_…`: /repo/ files of `distributions` only); migration 0011. */
  kind: ApiTokenKind;
  /** Read tokens: JSON array of codenames; null for API tokens. */
  distributions: string | null;
}

export type ApiTokenKind = 'api' | 'read';

export interface PasswordResetTokensTable {
  token_hash: string;
  user_id: string;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}

export interface SettingsTable {
  key: string;
  value: string; // JSON; secrets are encrypted before JSON encoding
  updated_at: string;
  updated_by: string | null;
}

export interface AuditIndexTable {
  seq: number;
  timestamp: string;
  action: string;
  username: string | null;
  result: string;
  package: string | null;
  version: string | null;
  detail: string | null;
  ip: string | null;
  hash: string;
}

export interface DistributionsTable {
  codename: string;
  format: PackageFormat;
  description: string;
  generation: number;
  published_generation: number;
  published_at: string | null;
  initialized_at: string | null;
  /** The operator's definition (JSON of `specOf`); null: the built-in table's. */
  definition: string | null;
  /** Set when the distribution was retired: no longer served, published or uploaded to. */
  retired_at: string | null;
  /** The index totals (migration 0018, kept by triggers): packages listed, the sum of their `seq`, and of `seq % 65521`. */
  indexed_count: Generated<number>;
  indexed_sum: Generated<number>;
  indexed_mod: Generated<number>;
}

/** One row (id 1): grows with every committed change to what the listings count, order or show (migrations 0015, 0016). */
export interface CatalogGenerationTable {
  id: number;
  generation: string | number;
  bumped_by: string | number | null;
}

/** One package file in one distribution; JSON columns hold the parsed metadata and results. */
export interface PackagesTable {
  id: string;
  distribution: string;
  format: PackageFormat;
  name: string;
  version: string;
  arch: string;
  /** APT component the package is published in (`main` for RPM packages). */
  component: string;
  status: PackageStatus;
  cve_status: StoredCveStatus;
  /** Digests and size of the file served (for a signed RPM, the signed file). */
  sha256: string;
  sha512: string;
  sha1: string;
  md5: string;
  size: number;
  /** SHA-256 of the bytes as uploaded: the provenance, and what a repeated upload is compared with. */
  upload_sha256: string;
  upload_size: number;
  /** Fingerprint of the repository key that signed the served RPM, `upstream` for a kept foreign signature, else null. */
  signed_by: string | null;
  /** The package's file name in the repository (never the client's). */
  filename: string;
  /** Path of the file in the published tree, relative to DATA_DIR/repo. */
  pool_path: string;
  source_name: string;
  source_version: string;
  metadata: string;
  /** The index text computed once at upload: the APT stanza, or the RPM repodata chunks (JSON). */
  index_entry: string;
  relations: string;
  files: string;
  /**
   * When `files` was filled in: 0 at admission, the distribution's generation when read later,
   * null while pending (migration 0013). Optional in rows built in memory: absent is 0.
   */
  listed_generation?: number | null;
  pipeline: string;
  findings: string;
  reasons: string;
  uploaded_by: string | null;
  sla_deadline: string | null;
  /** Insertion order: the index lists packages in this order so a new one is appended. */
  seq: number;
  created_at: string;
  updated_at: string;
}

export interface PackageProvidesTable {
  package_id: string;
  distribution: string;
  kind: string;
  name: string;
  version: string | null;
  flags: number | null;
}

/** Vulnerability database (migration 0003): one OSV record × affected package; `data` = AdvisoryRow JSON. */
export interface VulnAdvisoriesTable {
  feed: string;
  advisory_id: string;
  ecosystem: string;
  package_name: string;
  data: string;
}

export interface VulnEpssTable {
  cve_id: string;
  epss: number;
  percentile: number;
}

export interface VulnKevTable {
  cve_id: string;
  vendor_project: string | null;
  product: string | null;
  vulnerability_name: string | null;
  date_added: string | null;
  due_date: string | null;
  known_ransomware_campaign_use: string | null;
}

export interface VulnFeedStateTable {
  name: string;
  kind: string;
  url: string;
  etag: string | null;
  last_modified: string | null;
  sha256: string | null;
  fetched_at: string | null;
  loaded_at: string | null;
  records: number;
  rows: number;
  skipped: number;
  last_error: string | null;
  last_attempt_at: string | null;
}

/** One CVE finding of one stored package; `data` = the Finding JSON. */
export interface PackageFindingsTable {
  package_id: string;
  cve_id: string;
  severity: Severity;
  severity_rank: number;
  cvss_score: number | null;
  epss: number | null;
  in_kev: number | null;
  fix_state: FixState;
  data: string;
}

/** One decision record per name, version and arch, upserted by each decision. */
export interface SecurityDecisionsTable {
  name: string;
  version: string;
  arch: string;
  action: DecisionAction;
  justification: string;
  expires_at: string | null;
  target_version: string | null;
  cve_ids: string;
  covered_cve_ids: string;
  decided_by: string | null;
  decided_at: string;
}

export interface JobRunsTable {
  job: string;
  last_run_at: string | null;
  last_result: string | null;
}

/** Downloads per UTC day and package (migration 0004); distribution '' = a shared APT pool file. */
export interface DownloadCountsTable {
  day: string;
  distribution: string;
  name: string;
  version: string;
  arch: string;
  downloads: number;
}

export interface DownloadDaysTable {
  day: string;
  distribution: string;
  downloads: number;
}

/** Per-package sums over the last `days` UTC days, as of download_rollups.day. */
export interface DownloadTotalsTable {
  days: number;
  distribution: string;
  name: string;
  version: string;
  arch: string;
  downloads: number;
}

/** Downloads made with a token, per UTC day, token and distribution (migration 0011). */
export interface DownloadTokenDaysTable {
  day: string;
  token_id: string;
  /** The token owner's, at the time of the downloads. */
  username: string;
  distribution: string;
  downloads: number;
}

/** Downloads made with a token, per UTC day, token and package (migration 0011). */
export interface DownloadTokenCountsTable {
  token_id: string;
  day: string;
  username: string;
  distribution: string;
  name: string;
  version: string;
  arch: string;
  downloads: number;
}

/** Per-token sums over the last `days` UTC days, as of download_rollups.day (migration 0012). */
export interface DownloadTokenTotalsTable {
  days: number;
  token_id: string;
  username: string;
  downloads: number;
}

export interface DownloadRollupsTable {
  days: number;
  day: string;
}

/** How far one reverse-proxy log file (identified by its first line) has been counted. */
export interface AccessLogFilesTable {
  identity: string;
  path: string;
  position: number;
  complete: number;
  lines: number;
  counted: number;
  updated_at: string;
}

/** Embedded components of one stored file (migration 0006); `data` = PackageInventory JSON. */
export interface SbomInventoryTable {
  sha256: string;
  scanner: number;
  data: string;
  created_at: string;
}

export interface Database extends ImportTables {
  users: UsersTable;
  login_failures: LoginFailuresTable;
  api_tokens: ApiTokensTable;
  password_reset_tokens: PasswordResetTokensTable;
  settings: SettingsTable;
  audit_index: AuditIndexTable;
  distributions: DistributionsTable;
  packages: PackagesTable;
  catalog_generation: CatalogGenerationTable;
  package_provides: PackageProvidesTable;
  vuln_advisories: VulnAdvisoriesTable;
  vuln_epss: VulnEpssTable;
  vuln_kev: VulnKevTable;
  vuln_feed_state: VulnFeedStateTable;
  package_findings: PackageFindingsTable;
  security_decisions: SecurityDecisionsTable;
  job_runs: JobRunsTable;
  download_counts: DownloadCountsTable;
  download_days: DownloadDaysTable;
  download_totals: DownloadTotalsTable;
  download_rollups: DownloadRollupsTable;
  download_token_days: DownloadTokenDaysTable;
  download_token_counts: DownloadTokenCountsTable;
  download_token_totals: DownloadTokenTotalsTable;
  access_log_files: AccessLogFilesTable;
  sbom_inventory: SbomInventoryTable;
}
