import { parseProvides } from '../deb/relations.js';

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

/**
 * Every name a catalog package answers to besides its own, as the catalog's provides rows keep
 * them: a deb's Provides (none when the field cannot be read, as apt would skip it); an RPM's
 * provides other than its own name at its own EVR, and the files primary lists (kind `file`).
 * A callback rather than a list: a sync calls it for every package of a 60,000-package index.
 */
export function forEachProvidedName(
  entry: CatalogEntry,
  emit: (kind: 'provides' | 'file', name: string, version: string | null, flags: number | null) => void,
): void {
  if (entry.format === 'deb') {
    let provided: Array<{ name: string; version: string | null }>;
    try {
      provided = parseProvides((entry.relations as DebCatalogRelations).provides);
    } catch {
      return;
    }
    for (const p of provided) emit('provides', p.name, p.version, null);
    return;
  }
  const rel = entry.relations as RpmCatalogRelations;
  for (const p of rel.provides) {
    if (p.name !== entry.name || p.evr === '') emit('provides', p.name, p.evr || null, p.flags);
  }
  for (const f of rel.files) emit('file', f, null, null);
}
