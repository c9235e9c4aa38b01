import type { Db } from '../../adapters/db/index.js';
import { DomainError } from '../../domain/errors.js';
import { packageRows, type PackageRow } from '../../adapters/db/packages.table.js';

/** Narrowing of a name/version: arch (required when several exist) and distribution. */
export interface PackageSelector {
  arch?: string | null;
  distribution?: string | null;
}

/**
 * The rows a security action on `name`/`version` applies to (every distribution holding it,
 * unless narrowed). 404 `package_not_found` when none; 422 `arch_required` when the version
 * exists for several architectures and none was named: a decision record is per arch, so an
 * action must not guess which one it applies to.
 */
export async function locatePackages(db: Db, name: string, version: string, selector: PackageSelector = {}): Promise<PackageRow[]> {
  const rows = await packageRows(db, name, { version, distribution: selector.distribution, arch: selector.arch });
  if (rows.length === 0) {
    const where = [selector.arch, selector.distribution].filter(Boolean).join(', ');
    throw new DomainError('not_found', 'package_not_found', `Package ${name} ${version}${where ? ` (${where})` : ''} not found`);
  }
  const arches = [...new Set(rows.map((r) => r.arch))];
  if (arches.length > 1) {
    throw new DomainError('invalid', 'arch_required', `${name} ${version} exists for several architectures (${arches.join(', ')}): name one with \`arch\``, {
      errors: [{ loc: ['body', 'arch'], msg: `one of ${arches.join(', ')}` }],
      arches,
    });
  }
  return rows;
}
