import type { PackageFormat } from '../../domain/distributions.js';
import type { SourceType } from '../../domain/imports/sources.js';

/** Row types of the import tables (migration 0007), same conventions as schema.ts. */
export interface ImportSourcesTable {
  id: string;
  name: string;
  type: SourceType;
  url: string | null;
  suite: string | null;
  components: string; // JSON string[]
  architectures: string; // JSON string[]
  baseurl: string | null;
  key: string | null;
  allow_unsigned: number;
  distribution: string;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface ImportSyncStateTable {
  source_id: string;
  status: string; // 'never' | 'syncing' | 'success' | 'failed'
  generation: number;
  index_digest: string | null;
  etag: string | null;
  last_modified: string | null;
  last_sync_at: string | null;
  last_success_at: string | null;
  last_error: string | null;
  count: number;
}

export interface ImportCatalogTable {
  source_id: string;
  generation: number;
  seq: number;
  format: PackageFormat;
  name: string;
  version: string;
  arch: string;
  location: string;
  size: number;
  sha256: string;
  summary: string;
  relations: string;
}

export interface ImportCatalogProvidesTable {
  source_id: string;
  generation: number;
  seq: number;
  kind: string; // 'provides' | 'file'
  name: string;
  version: string | null;
  flags: number | null;
}

export interface ImportGroupsTable {
  name: string;
  distribution: string;
  created_by: string | null;
  created_at: string;
}

export interface ImportGroupPackagesTable {
  group_name: string;
  package_id: string;
  source_id: string | null;
  name: string;
  version: string;
  arch: string;
  status: string;
  created_at: string;
}

export interface ImportClaimsTable {
  /** `<distribution> <sha256>` of the upstream file being imported. */
  key: string;
  /** The process holding it (host, pid, random). */
  holder: string;
  expires_at: string;
}

export interface ImportTables {
  import_sources: ImportSourcesTable;
  import_sync_state: ImportSyncStateTable;
  import_catalog: ImportCatalogTable;
  import_catalog_provides: ImportCatalogProvidesTable;
  import_groups: ImportGroupsTable;
  import_group_packages: ImportGroupPackagesTable;
  import_claims: ImportClaimsTable;
}
