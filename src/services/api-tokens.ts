import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Db } from '../adapters/db/index.js';
import type { ApiTokenKind } from '../adapters/db/schema.js';
import {
  findApiTokenByDigest, findApiTokenById, findApiTokenIdsOf, insertApiToken, listUnrevokedApiTokens, revokeApiToken, touchApiToken, type ApiTokenRow,
} from '../adapters/db/api-tokens.table.js';
import { DomainError } from '../domain/errors.js';
import { roleWithin, type Role } from '../domain/roles.js';
import type { UserRow } from './users.js';
import { isoUtc, toApiTime } from '../domain/time.js';

export const TOKEN_PREFIX = 'tg_';
/** Read tokens (`kind: "read"`): /repo/ files of their distributions only, never the API. */
export const READ_TOKEN_PREFIX = 'tg_r_';
// 43 url-safe characters after the prefix: `tg_` + 43 and `tg_r_` + 43 never have the same length.
const TOKEN_SHAPE = /^tg_(r_)?[A-Za-z0-9_-]{43}$/;

export type { ApiTokenKind };

export const prefixOf = (kind: ApiTokenKind): string => (kind === 'read' ? READ_TOKEN_PREFIX : TOKEN_PREFIX);

/** The codenames a read token is scoped to (none for an API token). */
export function tokenDistributions(t: Pick<ApiTokenRow, 'kind' | 'distributions'>): string[] {
  if (t.kind !== 'read' || !t.distributions) return [];
  const parsed: unknown = JSON.parse(t.distributions);
  return Array.isArray(parsed) ? parsed.filter((c): c is string => typeof c === 'string') : [];
}

export const sha256Hex = (value: string): string => createHash('sha256').update(value).digest('hex');

export interface PublicToken {
  token_id: string;
  name: string;
  role: Role;
  roles: Role[];
  username: string;
  kind: ApiTokenKind;
  /** Read tokens: the distributions they read; null for API tokens. */
  distributions: string[] | null;
  prefix: string;
  created_at: string | null;
  expires_at: string | null;
  last_used_at: string | null;
  revoked: boolean;
}

export function publicToken(t: ApiTokenRow, username: string): PublicToken {
  const role = t.role as Role;
  return {
    token_id: t.id,
    name: t.name,
    role,
    roles: [role],
    username,
    kind: t.kind,
    distributions: t.kind === 'read' ? tokenDistributions(t) : null,
    prefix: prefixOf(t.kind),
    created_at: toApiTime(t.created_at),
    expires_at: toApiTime(t.expires_at),
    last_used_at: toApiTime(t.last_used_at),
    revoked: t.revoked_at !== null,
  };
}

/**
 * Permanent API tokens: `tg_` + 43 url-safe characters, only the SHA-256 stored,
 * the raw value shown once. A token's role is at most its creator's role at creation and is
 * re-limited by the creator's current role on every request. A read token (`tg_r_` + 43
 * characters, role `reader`) reads the /repo/ files of the distributions it names and nothing
 * else: the API refuses it (AuthService.authenticate).
 */
export class ApiTokenService {
  constructor(private readonly db: Db) {}

  async create(owner: UserRow, name: string, role: Role, expiresDays: number | null, read: { distributions: string[] } | null = null) {
    if (!roleWithin(role, owner.role as Role)) {
      throw new DomainError('forbidden', 'token_role_too_high', `A token cannot carry more rights than your role (${owner.role})`);
    }
    const kind: ApiTokenKind = read ? 'read' : 'api';
    const raw = prefixOf(kind) + randomBytes(32).toString('base64url');
    const now = new Date();
    const row: ApiTokenRow = {
      id: randomUUID(),
      name,
      token_hash: sha256Hex(raw),
      role,
      user_id: owner.id,
      created_at: isoUtc(now),
      expires_at: expiresDays ? isoUtc(new Date(now.getTime() + expiresDays * 86_400_000)) : null,
      last_used_at: null,
      revoked_at: null,
      kind,
      distributions: read ? JSON.stringify(read.distributions) : null,
    };
    await insertApiToken(this.db, row);
    return { row, raw };
  }

  /** Tokens visible to a caller: all for admins, their own otherwise. */
  async list(viewer: UserRow, all: boolean): Promise<PublicToken[]> {
    const rows = await listUnrevokedApiTokens(this.db, all ? undefined : viewer.id);
    return rows.map(({ username, ...t }) => publicToken(t, username));
  }

  async revoke(viewer: UserRow, tokenId: string, all: boolean): Promise<ApiTokenRow> {
    const row = await findApiTokenById(this.db, tokenId);
    // Someone else's token is reported as missing, not forbidden: its existence is not disclosed.
    if (!row || row.revoked_at || (!all && row.user_id !== viewer.id)) {
      throw new DomainError('not_found', 'token_not_found', 'API token not found');
    }
    await revokeApiToken(this.db, tokenId, isoUtc());
    return row;
  }

  /** Ids of the tokens whose download figures `viewer` may see: null = every token (admins); else their own, revoked ones included. */
  async visibleIds(viewer: UserRow, all: boolean): Promise<string[] | null> {
    return all ? null : findApiTokenIdsOf(this.db, viewer.id);
  }

  /** Whether a token with this id was ever made (revoked ones included). */
  async exists(tokenId: string): Promise<boolean> {
    return (await findApiTokenById(this.db, tokenId)) !== undefined;
  }

  /** Finds the live token row for a raw bearer value, comparing digests in constant time. */
  async resolve(raw: string): Promise<ApiTokenRow | null> {
    if (!TOKEN_SHAPE.test(raw)) return null;
    const digest = sha256Hex(raw);
    const row = await findApiTokenByDigest(this.db, digest);
    if (!row) return null;
    if (!timingSafeEqual(Buffer.from(row.token_hash, 'hex'), Buffer.from(digest, 'hex'))) return null;
    if (row.revoked_at) return null;
    if (row.expires_at && new Date(row.expires_at).getTime() <= Date.now()) return null;
    // last_used_at is informative; write it at most once a minute per token.
    if (!row.last_used_at || Date.now() - new Date(row.last_used_at).getTime() > 60_000) {
      await touchApiToken(this.db, row.id, isoUtc());
    }
    return row;
  }
}
