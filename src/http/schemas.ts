import { Type, type Static, type TSchema } from 'typebox';
import type { PublicUser } from '../services/users.js';

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
  507: ErrorBody,
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

/** The envelope of every large collection, so clients page through all of them the same way. */
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

export const UserOut = answering<PublicUser>()(Type.Object({
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
}));

export const StatusOut = Type.Object({ status: Type.String(), detail: Type.Optional(Type.String()) });

/**
 * `item` or null. A primitive type becomes `type: [t, 'null']` rather than an `anyOf`:
 * fast-json-stringify writes a type list after a `typeof` check, but an `anyOf` by running an Ajv
 * validator on every value (compiled at a route's first answer: 12 ms of GET /import/resolve's
 * first kde-full answer, then a call per field and row). Same JSON Schema meaning, same OpenAPI
 * document (@fastify/swagger writes both as `nullable: true`).
 */
export const Nullable = <T extends TSchema>(item: T) => {
  const type = (item as { type?: unknown }).type;
  const primitive = typeof type === 'string' && type !== 'object' && type !== 'array' && type !== 'null';
  return Type.Unsafe<Static<T> | null>(primitive ? { ...item, type: [type, 'null'] } : Type.Union([item, Type.Null()]));
};

/**
 * A string from a fixed set: documented as an enum, typed as the union, serialised as a plain
 * string (a union of literals would cost fast-json-stringify a validation per value).
 */
export const StringEnum = <const T extends readonly string[]>(values: T) => Type.Unsafe<T[number]>({ type: 'string', enum: [...values] });

export const SeverityCounts = Type.Object({
  critical: Type.Integer(), high: Type.Integer(), medium: Type.Integer(), low: Type.Integer(), negligible: Type.Integer(),
});

type ObjectsOf<T> = T extends readonly unknown[] ? never : T extends object ? T : never;
type ItemsOf<T> = T extends readonly (infer I)[] ? I : never;
type KeysOf<T> = T extends object ? keyof T : never;
type FieldOf<T, K> = T extends object ? (K extends keyof T ? T[K] : never) : never;

/**
 * The fields of `Answer` that `Declared` lacks, as paths (`.packages[].status`), through arrays,
 * objects, unions and nullable values; never when it lacks none. Each member of a union answer is
 * checked against the fields of every member of the declared union.
 */
export type UndeclaredFields<Answer, Declared, Path extends string = ''> = Answer extends readonly (infer A)[]
  ? UndeclaredFields<A, ItemsOf<Declared>, `${Path}[]`>
  : Answer extends object
    ? {
        [K in keyof Answer & string]-?: K extends KeysOf<ObjectsOf<Declared>>
          ? UndeclaredFields<Answer[K], FieldOf<ObjectsOf<Declared>, K>, `${Path}.${K}`>
          : `${Path}.${K}`;
      }[keyof Answer & string]
    : never;

/**
 * The response schema of a service's answer, checked at compile time to declare every field the
 * answer has: fast-json-stringify serialises from the schema and silently drops any field it does
 * not declare, so a missing one would change the API without a failing type check.
 * Use: `const DecideOut = answering<DecideAnswer>()(Type.Object({ ... }))`.
 */
export function answering<Answer>() {
  return <S extends TSchema>(schema: S & ([UndeclaredFields<Answer, Static<S>>] extends [never] ? unknown : { undeclared: UndeclaredFields<Answer, Static<S>> })): S => schema;
}
