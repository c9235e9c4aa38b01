/** Response schemas of stored package versions, shared by the artifact, package and distribution routes. */
import { Type } from 'typebox';
import type { Catalog, versionView } from '../services/packages/catalog.js';
import { answering, Nullable, StringEnum } from './schemas.js';
import { CveStatusOut, PackageStatusOut } from './security-schemas.js';

export const PackageFormatOut = StringEnum(['deb', 'rpm'] as const);

const versionFields = {
  id: Type.String(),
  name: Type.String(),
  version: Type.String(),
  arch: Type.String(),
  distribution: Type.String(),
  format: PackageFormatOut,
  status: PackageStatusOut,
  cve_status: CveStatusOut,
  sha256: Type.String(),
  size: Type.Integer(),
  /** The file's name in the repository, never the uploader's. */
  filename: Type.String(),
  /** Where the published tree serves the file, relative to /repo/. */
  pool_path: Type.String(),
  source: Type.String(),
  source_version: Type.String(),
  uploaded_by: Nullable(Type.String()),
  uploaded_at: Nullable(Type.String()),
  sla_deadline: Nullable(Type.String()),
  /** Finding count per severity. */
  findings: Type.Record(Type.String(), Type.Integer()),
  reasons: Type.Array(Type.String()),
};

/** One stored package version. */
export const PackageVersionOut = answering<ReturnType<typeof versionView>>()(Type.Object(versionFields));

/** A package version as its index lists it: for APT also the index stanza (raw pool format). */
export const PackageListItemOut = answering<Awaited<ReturnType<Catalog['packages']>>['items'][number]>()(Type.Object({
  ...versionFields,
  index_entry: Type.Optional(Type.String()),
}));

/** A validation step as the upload recorded it. */
export const StoredStepOut = Type.Object({ name: Type.String(), status: Type.String(), message: Type.String(), value: Type.String() });
