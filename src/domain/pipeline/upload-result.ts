/**
 * The upload answer body as one TypeBox schema: the HTTP layer serialises answers with it and
 * the upload service types them with its static type, so the two cannot drift apart. It carries
 * the fields of both API forms (`name` and `package`, the `pipeline` summary and the `steps`).
 */
import { Type, type Static } from 'typebox';

const NullableString = Type.Union([Type.String(), Type.Null()]);

export const UploadResultSchema = Type.Object({
  status: Type.String(),
  name: NullableString,
  package: NullableString,
  version: NullableString,
  arch: NullableString,
  distribution: Type.String(),
  sha256: Type.String(),
  size: Type.Integer(),
  cve_status: NullableString,
  /** Step name → its short value (`clean`, `no_findings`, `signed`, `satisfied`, `skipped`…). */
  pipeline: Type.Record(Type.String(), Type.String()),
  steps: Type.Array(Type.Object({ name: Type.String(), status: Type.String(), message: Type.String() })),
  /** Finding count per severity. */
  findings: Type.Record(Type.String(), Type.Integer()),
  reasons: Type.Array(Type.String()),
  /**
   * RPMs admitted to a distribution: the file the repository serves, which carries the repository
   * key's signature (`signed_by` its fingerprint) or the upload's own (`signed_by` `upstream`).
   * `sha256` and `size` above are the uploaded file's.
   */
  signature: Type.Optional(Type.Object({ signed_by: Type.String(), sha256: Type.String(), size: Type.Integer() })),
  /** Rejected uploads only: the error body fields beside the result fields. */
  detail: Type.Optional(Type.String()),
  code: Type.Optional(Type.String()),
});

export type UploadResult = Static<typeof UploadResultSchema>;
