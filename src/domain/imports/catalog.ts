/**
 * One upstream package as the import catalog keeps it: enough to search, resolve dependencies
 * and download it with its signed size and SHA-256, nothing read from the package itself.
 */

/** An RPM relation as primary.xml gives it: RPMSENSE flags and `[E:]V[-R]` ('' when unversioned). */
export interface RpmRelation {
  name: string;
  flags: number;
  evr: string;
}

export interface CatalogEntry {
  format: 'deb' | 'rpm';
  name: string;
  /** Debian version, or the RPM `[epoch:]version-release`. */
  version: string;
  arch: string;
  /** Path relative to the source's base URL (APT `Filename`, RPM `location/@href`). */
  location: string;
  size: number;
  sha256: string;
  summary: string;
  /** Raw fields (deb) or entries (rpm), as the package rows keep them. */
  relations: DebCatalogRelations | RpmCatalogRelations;
}

export interface DebCatalogRelations {
  depends: string | null;
  preDepends: string | null;
  provides: string | null;
  multiArch: string | null;
}

export interface RpmCatalogRelations {
  requires: RpmRelation[];
  provides: RpmRelation[];
  /** The files primary.xml lists (binaries and /etc), which file requires may name. */
  files: string[];
}
