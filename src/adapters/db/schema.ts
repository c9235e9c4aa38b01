/**
 * Table row types. Both dialects store timestamps as ISO-8601 text, booleans as 0/1 integers
 * and structured values as JSON text, so one query code serves SQLite and PostgreSQL.
 */
export interface UsersTable {
  id: string;
  username: string;
  email: string | null;
  full_name: string | null;
  password_hash: string | null;
  role: string;
  is_active: number;
  source: string; // 'local' | 'ldap'
  /** Bumped on password change or reset: JWTs carrying an older value are refused. */
  token_version: number;
  mfa_secret: string | null;
  mfa_enabled: number;
  last_login: string | null;
  created_at: string;
  updated_at: string;
}

export interface LoginFailuresTable {
  username: string;
  at: string;
}

export interface ApiTokensTable {
  id: string;
  name: string;
  token_hash: string;
  role: string;
  user_id: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface PasswordResetTokensTable {
  token_hash: string;
  user_id: string;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}

export interface SettingsTable {
  key: string;
  value: string; // JSON; secrets are encrypted before JSON encoding
  updated_at: string;
  updated_by: string | null;
}

export interface AuditIndexTable {
  seq: number;
  timestamp: string;
  action: string;
  username: string | null;
  result: string;
  package: string | null;
  version: string | null;
  detail: string | null;
  ip: string | null;
  hash: string;
}

export interface Database {
  users: UsersTable;
  login_failures: LoginFailuresTable;
  api_tokens: ApiTokensTable;
  password_reset_tokens: PasswordResetTokensTable;
  settings: SettingsTable;
  audit_index: AuditIndexTable;
}
