import type { Db } from '../../adapters/db/index.js';
import { findProvidersOf } from '../../adapters/db/packages.table.js';
import type { ProvideRow, ProvidesLookup } from '../formats/types.js';

/** Dependency lookups against what a distribution publishes. */
export function providesLookup(db: Db, codename: string): ProvidesLookup {
  return async (names) => {
    const rows = await findProvidersOf(db, codename, names);
    return rows.map((r) => ({
      kind: r.kind as ProvideRow['kind'],
      name: r.name,
      version: r.version,
      flags: r.flags === null ? null : Number(r.flags),
      package: r.package,
      packageVersion: r.packageVersion,
      arch: r.arch,
      multiArch: (JSON.parse(r.relations) as { multiArch?: string | null }).multiArch ?? null,
    }));
  };
}
