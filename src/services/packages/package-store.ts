// moved to adapters/db/packages.table.ts, adapters/db/distributions.table.ts and services/packages/provides.ts; re-exported until every importer is updated
export {
  countReferences,
  deletePackageRow,
  findPackage,
  findPoolConflict,
  insertPackage,
  normaliseRow,
  packageById,
  packageRows,
  type PackageRow,
} from '../../adapters/db/packages.table.js';
export { bumpGeneration } from '../../adapters/db/distributions.table.js';
export { providesLookup } from './provides.js';
