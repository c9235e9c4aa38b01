import { Type, type TSchema } from 'typebox';

export const ErrorBody = Type.Object(
  {
    detail: Type.String(),
    code: Type.String(),
  },
  { additionalProperties: true, $id: undefined },
);

/** Per-status error answers shared by every route, so responses are serialised from schemas. */
export const errorResponses = {
  400: ErrorBody,
  401: ErrorBody,
  403: ErrorBody,
  404: ErrorBody,
  409: ErrorBody,
  413: ErrorBody,
  422: ErrorBody,
  429: ErrorBody,
  503: ErrorBody,
};

/** Role names accepted in requests: the five roles and the alias `viewer`. */
export const RoleOut = Type.Union([
  Type.Literal('admin'), Type.Literal('maintainer'), Type.Literal('uploader'), Type.Literal('auditor'), Type.Literal('reader'),
]);
export const RoleName = Type.Union([...RoleOut.anyOf, Type.Literal('viewer')]);

export const Username = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$' });
export const Timestamp = Type.Union([Type.String(), Type.Null()]);

export const PageQuery = {
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
};

/** DECISIONS §1 pagination envelope. */
export const Page = <T extends TSchema>(item: T) =>
  Type.Object({
    items: Type.Array(item),
    total: Type.Integer(),
    page: Type.Integer(),
    per_page: Type.Integer(),
    pages: Type.Integer(),
  });

export function pageOf<T>(items: T[], total: number, page: number, perPage: number) {
  return { items, total, page, per_page: perPage, pages: Math.max(1, Math.ceil(total / perPage)) };
}

export const UserOut = Type.Object({
  username: Type.String(),
  email: Type.Union([Type.String(), Type.Null()]),
  role: RoleOut,
  roles: Type.Array(RoleOut),
  full_name: Type.Union([Type.String(), Type.Null()]),
  active: Type.Boolean(),
  last_login: Timestamp,
  source: Type.String(),
  mfa_enabled: Type.Boolean(),
  created_at: Timestamp,
});

export const StatusOut = Type.Object({ status: Type.String(), detail: Type.Optional(Type.String()) });

/** A JSON object whose fields are documented in the route summary (serialised as-is). */
export const AnyObject = Type.Object({}, { additionalProperties: true });
