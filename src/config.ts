import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseLogGlob } from './domain/downloads/log-glob.js';
import { appUrlProblem, normaliseAppUrl } from './domain/settings-rules.js';

/** Every environment variable the service reads, typed, in one place. README has the table. */
export interface Config {
  env: 'development' | 'production' | 'test';
  edition: 'community' | 'enterprise';
  host: string;
  port: number;
  dataDir: string;
  /** `sqlite:<path>` is implied when unset; `postgres://…` selects PostgreSQL. */
  databaseUrl: string | null;
  /** SQLite: a file for the per-statement time table, written at shutdown (a benchmark's profile); null: none. */
  sqlProfileFile: string | null;
  redisUrl: string | null;
  jwtSecret: string;
  jwtExpireMinutes: number;
  adminUsername: string | null;
  adminPasswordHash: string | null;
  appUrl: string;
  appVersion: string;
  trustedProxies: string[];
  corsOrigins: string[];
  clamav: { socket: string } | { host: string; port: number } | null;
  clamavUpdateCommand: string | null;
  maxUploadBytes: number;
  /** Memory the import catalogs may take held for dependency resolution (services/imports/resident-catalogs.ts); 0 holds none. */
  importCatalogMemoryBytes: number;
  logLevel: string;
  rateLimitsOff: boolean;
  settingsKey: string | null;
  bcryptRounds: number;
  signingKeyAlgorithm: 'rsa4096' | 'ed25519';
  /** How long, after RPM packages are re-signed, the files the repodata no longer lists stay served. */
  rpmResignGraceMs: number;
  /**
   * When a .deb's payload (data.tar) is read whole, to check it and list its files for Contents:
   * `background` (default) after the upload is answered, quarantining a package whose payload
   * turns out malformed; `upload` before, rejecting it (DEB_PAYLOAD_CHECK).
   */
  debPayloadCheck: 'background' | 'upload';
  /** The JSON file of distribution definitions applied at start (DISTRIBUTIONS_FILE), read and parsed. */
  distributionsFile: { path: string; content: unknown } | null;
  /** How often a replica re-reads the distributions other replicas may have changed. */
  distributionsRefreshMs: number;
  /** A client must have sent its request line and headers within this time (slow clients: 408). */
  httpHeadersTimeoutMs: number;
  /** ...and its whole request, body included, within this time (a body that stalls: 408). */
  httpRequestTimeoutMs: number;
  /** Reverse-proxy access logs to count downloads from (a folder and a file-name glob); null = none. */
  accessLogPath: string | null;
  /** How often those logs are read. */
  accessLogIntervalMs: number;
  /** The only folder file:// feed URLs may read from; null = file:// feeds refused. */
  feedsDir: string | null;
  /** The built web interface (Vite's output) served under /ui/. */
  uiDir: string;
  /** The only folder `ca_bundle_path` may name a file in; null = no CA bundle accepted. */
  caBundleDir: string | null;
}

const WEAK_SECRETS = new Set(['changeme', 'change-me', 'secret', 'jwt-secret', 'default', 'password', 'tollgate']);

export class ConfigError extends Error {}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`);
  return value;
}

function list(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function oneOf<T extends string>(name: string, raw: string | undefined, allowed: readonly T[], fallback: T): T {
  if (raw === undefined || raw === '') return fallback;
  if ((allowed as readonly string[]).includes(raw)) return raw as T;
  throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
}

/**
 * Outside production a missing secret is generated once and kept in DATA_DIR so restarts keep
 * sessions valid; in production the operator must provide a strong one.
 */
function resolveJwtSecret(env: NodeJS.ProcessEnv, production: boolean, dataDir: string): string {
  const given = env.JWT_SECRET_KEY;
  if (production) {
    if (!given) throw new ConfigError('JWT_SECRET_KEY is required when ENV=production');
    if (given.length < 32) throw new ConfigError('JWT_SECRET_KEY must be at least 32 characters in production');
    if (WEAK_SECRETS.has(given.toLowerCase())) throw new ConfigError('JWT_SECRET_KEY is a known default; choose a random one');
    return given;
  }
  if (given) return given;
  const file = join(dataDir, 'jwt-secret');
  const kept = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
  // Shorter than any secret this writes: a damaged file (it was written in place before) is
  // replaced rather than signing tokens with what is left of it, or with nothing.
  if (kept.length >= MIN_GENERATED_SECRET) return kept;
  mkdirSync(dataDir, { recursive: true });
  return keepNewSecret(file, randomBytes(48).toString('base64url'));
}

const MIN_GENERATED_SECRET = 32;

/**
 * Puts a generated secret in `file` (0600) atomically: written and fsynced under a temporary
 * name, then linked to the real one. Two processes starting on the same DATA_DIR at once both
 * use whichever secret was linked first.
 */
function keepNewSecret(file: string, secret: string): string {
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fd = openSync(temp, 'wx', 0o600);
  try {
    writeSync(fd, secret);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    if (existsSync(file)) renameSync(temp, file);
    else linkSync(temp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return readFileSync(file, 'utf8').trim();
  } finally {
    rmSync(temp, { force: true });
  }
  // The name on disk too, or a power cut could bring back the old file (or none) at the next start.
  const folder = openSync(dirname(file), 'r');
  try {
    fsyncSync(folder);
  } finally {
    closeSync(folder);
  }
  return secret;
}

function resolveClamav(env: NodeJS.ProcessEnv): Config['clamav'] {
  if (env.CLAMAV_SOCKET) return { socket: env.CLAMAV_SOCKET };
  if (env.CLAMAV_HOST) return { host: env.CLAMAV_HOST, port: int(env, 'CLAMAV_PORT', 3310, 1) };
  return null;
}

function resolveAccessLogPath(env: NodeJS.ProcessEnv): string | null {
  const raw = env.ACCESS_LOG_PATH?.trim();
  if (!raw) return null;
  try {
    parseLogGlob(raw);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  return raw;
}

function resolveAppUrl(env: NodeJS.ProcessEnv): string {
  const raw = env.APP_URL || `http://localhost:${env.PORT || 8000}`;
  const wrong = appUrlProblem(raw);
  if (wrong) throw new ConfigError(`APP_URL ${wrong}, got "${raw}"`);
  return normaliseAppUrl(raw);
}

/** An existing folder, as an absolute path; the readers resolve symbolic links again at each use. */
function allowedDir(env: NodeJS.ProcessEnv, name: string): string | null {
  const raw = env[name]?.trim();
  if (!raw) return null;
  const dir = resolve(process.cwd(), raw);
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    // reported below
  }
  if (!isDir || dir === '/') throw new ConfigError(`${name} must name an existing folder other than /, got "${raw}"`);
  return dir;
}

function httpTimeouts(env: NodeJS.ProcessEnv): Pick<Config, 'httpHeadersTimeoutMs' | 'httpRequestTimeoutMs'> {
  const headers = int(env, 'HTTP_HEADERS_TIMEOUT_SECONDS', 30, 1);
  const request = int(env, 'HTTP_REQUEST_TIMEOUT_SECONDS', 600, 1);
  if (headers > request) throw new ConfigError(`HTTP_HEADERS_TIMEOUT_SECONDS (${headers}) must not exceed HTTP_REQUEST_TIMEOUT_SECONDS (${request})`);
  return { httpHeadersTimeoutMs: headers * 1000, httpRequestTimeoutMs: request * 1000 };
}

/** A JSON file a setting names, parsed; a missing or malformed one stops the start, naming it. */
function readJsonFile(name: string, path: string): { path: string; content: unknown } {
  try {
    return { path, content: JSON.parse(readFileSync(path, 'utf8')) as unknown };
  } catch (error) {
    throw new ConfigError(`${name} ${path}: ${(error as Error).message}`);
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const envName = oneOf('ENV', env.ENV ?? env.NODE_ENV, ['development', 'production', 'test'] as const, 'development');
  const production = envName === 'production';
  const dataDirRaw = env.DATA_DIR || './data';
  const dataDir = isAbsolute(dataDirRaw) ? dataDirRaw : resolve(process.cwd(), dataDirRaw);
  mkdirSync(dataDir, { recursive: true });
  return {
    env: envName,
    edition: oneOf('EDITION', env.EDITION, ['community', 'enterprise'] as const, 'enterprise'),
    host: env.HOST || '0.0.0.0',
    port: int(env, 'PORT', 8000),
    dataDir,
    databaseUrl: env.DATABASE_URL || null,
    sqlProfileFile: env.SQL_PROFILE_FILE ? resolve(process.cwd(), env.SQL_PROFILE_FILE) : null,
    redisUrl: env.REDIS_URL || null,
    jwtSecret: resolveJwtSecret(env, production, dataDir),
    jwtExpireMinutes: int(env, 'JWT_EXPIRE_MINUTES', 60, 1),
    adminUsername: env.ADMIN_USERNAME || null,
    adminPasswordHash: env.ADMIN_PASSWORD_HASH || null,
    appUrl: resolveAppUrl(env),
    appVersion: env.APP_VERSION || 'v0.1.0',
    trustedProxies: list(env.TRUSTED_PROXIES),
    corsOrigins: list(env.CORS_ORIGINS),
    clamav: resolveClamav(env),
    clamavUpdateCommand: env.CLAMAV_UPDATE_COMMAND || null,
    maxUploadBytes: int(env, 'MAX_UPLOAD_MB', 512, 1) * 1024 * 1024,
    importCatalogMemoryBytes: int(env, 'IMPORT_CATALOG_MEMORY_MB', 256, 0) * 1024 * 1024,
    logLevel: env.LOG_LEVEL || (envName === 'test' ? 'silent' : 'info'),
    rateLimitsOff: (env.RATE_LIMITS ?? '').toLowerCase() === 'off',
    settingsKey: env.SETTINGS_KEY || null,
    bcryptRounds: int(env, 'BCRYPT_ROUNDS', 10, 4),
    signingKeyAlgorithm: oneOf('SIGNING_KEY_ALGORITHM', env.SIGNING_KEY_ALGORITHM, ['rsa4096', 'ed25519'] as const, 'rsa4096'),
    rpmResignGraceMs: int(env, 'RPM_RESIGN_GRACE_SECONDS', 300, 0) * 1000,
    debPayloadCheck: oneOf('DEB_PAYLOAD_CHECK', env.DEB_PAYLOAD_CHECK, ['background', 'upload'] as const, 'background'),
    distributionsFile: env.DISTRIBUTIONS_FILE ? readJsonFile('DISTRIBUTIONS_FILE', resolve(process.cwd(), env.DISTRIBUTIONS_FILE)) : null,
    distributionsRefreshMs: int(env, 'DISTRIBUTIONS_REFRESH_SECONDS', 5, 1) * 1000,
    ...httpTimeouts(env),
    accessLogPath: resolveAccessLogPath(env),
    accessLogIntervalMs: int(env, 'ACCESS_LOG_INTERVAL_SECONDS', 60, 1) * 1000,
    feedsDir: allowedDir(env, 'FEEDS_DIR'),
    uiDir: env.UI_DIR ? resolve(process.cwd(), env.UI_DIR) : fileURLToPath(new URL('../ui/dist', import.meta.url)),
    caBundleDir: allowedDir(env, 'CA_BUNDLE_DIR'),
  };
}
