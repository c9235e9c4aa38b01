/**
 * The files of a source package besides its .dsc: stored by SHA-256 like every package file and
 * published in the .dsc's pool folder. Several rows may share one (an .orig tarball shared by
 * the revisions of an upstream version, the same package in several distributions), so each is
 * unpublished and dropped only when no row still names it.
 */
import { countReferences, countSourceFileReferences, sourceRowsIn, type PackageRow } from '../../adapters/db/packages.table.js';
import type { Db } from '../../adapters/db/index.js';
import type { PackageFiles } from '../../adapters/storage/interfaces.js';
import type { DebMetadata } from '../../domain/package.js';
import { sourceDirOf } from '../formats/deb-source.js';

export interface SourceFileRef {
  name: string;
  /** Repository-relative pool path. */
  path: string;
  sha256: string;
}

/** The named files of a source package row (none for any other row). */
export function sourceFilesOf(row: Pick<PackageRow, 'arch' | 'format' | 'metadata' | 'pool_path'>): SourceFileRef[] {
  if (row.format !== 'deb' || row.arch !== 'source') return [];
  const meta = JSON.parse(row.metadata) as DebMetadata;
  const dir = sourceDirOf(row.pool_path);
  return (meta.source?.files ?? []).map((f) => ({ name: f.name, path: `${dir}/${f.name}`, sha256: f.sha256 }));
}

/** The files named by the indexed source rows of a pool folder, by name (their SHA-256), except those of one distribution. */
async function publishedIn(db: Db, dir: string, exceptDistribution: string | null): Promise<Map<string, Set<string>>> {
  const named = new Map<string, Set<string>>();
  for (const row of await sourceRowsIn(db, dir, true)) {
    if (row.distribution === exceptDistribution) continue;
    for (const f of (JSON.parse(row.metadata) as DebMetadata).source?.files ?? []) {
      let set = named.get(f.name);
      if (!set) named.set(f.name, (set = new Set()));
      set.add(f.sha256);
    }
  }
  return named;
}

/** A file another indexed source package publishes under the same pool path with other bytes, if any. */
export async function sourceFileConflict(db: Db, files: readonly SourceFileRef[]): Promise<{ path: string; sha256: string } | null> {
  if (files.length === 0) return null;
  const named = await publishedIn(db, files[0]!.path.slice(0, files[0]!.path.lastIndexOf('/')), null);
  for (const f of files) {
    const other = [...(named.get(f.name) ?? [])].find((sha) => sha !== f.sha256);
    if (other) return { path: f.path, sha256: other };
  }
  return null;
}

/** Makes each stored file visible at its pool path. */
export async function publishSourceFiles(files: PackageFiles, refs: readonly SourceFileRef[], dir?: string): Promise<void> {
  for (const f of refs) await files.publish(f.sha256, dir ? `${dir}/${f.name}` : f.path);
}

/**
 * After rows left the index or the database: unpublishes each named file no indexed source row
 * of its folder still names, and drops from the store those no row names at all.
 */
export async function releaseSourceFiles(db: Db, files: PackageFiles, refs: readonly SourceFileRef[], opts: { unpublish: boolean; forget: boolean; exceptDistribution?: string }): Promise<void> {
  if (refs.length === 0) return;
  if (opts.unpublish) {
    const byDir = new Map<string, SourceFileRef[]>();
    for (const f of refs) {
      const dir = f.path.slice(0, f.path.lastIndexOf('/'));
      byDir.set(dir, [...(byDir.get(dir) ?? []), f]);
    }
    for (const [dir, list] of byDir) {
      const named = await publishedIn(db, dir, opts.exceptDistribution ?? null);
      for (const f of list) if (!named.get(f.name)?.has(f.sha256)) await files.unpublish(f.path);
    }
  }
  if (opts.forget) {
    for (const f of refs) {
      if ((await countSourceFileReferences(db, f.sha256)) === 0 && (await countReferences(db, 'sha256', f.sha256)) === 0) await files.forget(f.sha256);
    }
  }
}
