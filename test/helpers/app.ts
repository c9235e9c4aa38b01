import { randomBytes } from 'node:crypto';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { pino } from 'pino';
import { loadConfig, type Config } from '../../src/config.js';
import { buildApp, type BuiltApp } from '../../src/http/app.js';
import type { Role } from '../../src/domain/roles.js';
import { closeContext, createContext, type AppContext } from '../../src/services/context.js';
import { checkErrorAnswer } from './errors.js';
import { makeTempDir } from './tmp.js';

export type Backend = 'sqlite' | 'postgres';

/**
 * The database backends the suite runs against: SQLite always, PostgreSQL when
 * TEST_DATABASE_URL is set (.ci/run sets it; a test run without it says so in its output).
 */
export function backends(): Backend[] {
  return process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];
}

/** A fresh PostgreSQL database on the TEST_DATABASE_URL server, dropped by the cleanup. */
export async function freshPostgres(): Promise<{ url: string; drop: () => Promise<void> }> {
  const adminUrl = process.env.TEST_DATABASE_URL!;
  const name = `tollgate_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    // The app's pool has ended, but a closed client's session can linger on the server for a
    // moment; forcing the drop then kills it under a client object that no longer listens for
    // errors. So wait for the sessions to go, and force only as a last resort.
    drop: async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        for (let attempt = 0; ; attempt++) {
          try {
            await c.query(`DROP DATABASE IF EXISTS ${name}`);
            return;
          } catch (error) {
            if ((error as { code?: string }).code !== '55006' || attempt >= 50) break; // 55006: in use
            await new Promise((r) => setTimeout(r, 100));
          }
        }
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

export interface TestApp extends BuiltApp {
  ctx: AppContext;
  config: Config;
  dataDir: string;
  adminPassword: string;
  /** Creates a user with that role (password `Passw0rd!`) and returns a bearer token for it. */
  tokenFor(role: Role, username?: string): Promise<string>;
  login(username: string, password: string): Promise<string>;
  close(): Promise<void>;
}

export const TEST_PASSWORD = 'Passw0rd!';

export async function startTestApp(options: { backend?: Backend; env?: Record<string, string> } = {}): Promise<TestApp> {
  const backend = options.backend ?? 'sqlite';
  const tmp = await makeTempDir('tollgate-app-');
  const pgdb = backend === 'postgres' ? await freshPostgres() : null;
  const config = loadConfig({
    ENV: 'test',
    DATA_DIR: tmp.dir,
    BCRYPT_ROUNDS: '4',
    RATE_LIMITS: 'off',
    SIGNING_KEY_ALGORITHM: 'ed25519',
    ...(pgdb ? { DATABASE_URL: pgdb.url } : {}),
    ...options.env,
  });
  // Errors are kept (and printed when a request answers 500, see checkErrorBodies), the rest only with TEST_LOG_LEVEL.
  const errors: string[] = [];
  const log = pino(
    { level: process.env.TEST_LOG_LEVEL ?? 'error' },
    pino.multistream([
      { level: 'error', stream: { write: (line: string) => void errors.push(line) } },
      ...(process.env.TEST_LOG_LEVEL ? [{ level: process.env.TEST_LOG_LEVEL as pino.Level, stream: process.stderr }] : []),
    ]),
  );
  const ctx = await createContext(config, log);
  const built = await buildApp(ctx);
  checkErrorBodies(built.app, errors);
  checkSerialisation(built.app);
  await built.app.ready();
  // As main.ts does after listening: ready needs the signing key (an ed25519 key here, made at once).
  await ctx.repo.keyring.ensureKey();
  ctx.health.markStarted();
  const { readFileSync } = await import('node:fs');
  const adminPassword = readFileSync(`${tmp.dir}/initial-admin-password`, 'utf8').trim();

  const login = async (username: string, password: string) => {
    const res = await built.app.inject({ method: 'POST', url: '/auth/token', payload: { username, password } });
    if (res.statusCode !== 200) throw new Error(`login ${username} failed: ${res.statusCode} ${res.body}`);
    return (res.json() as { access_token: string }).access_token;
  };
  let counter = 0;
  return {
    ...built,
    ctx,
    config,
    dataDir: tmp.dir,
    adminPassword,
    login,
    async tokenFor(role, username) {
      if (role === 'admin' && !username) return login('admin', adminPassword);
      const name = username ?? `${role}${++counter}`;
      if (!(await ctx.users.byUsername(name))) await ctx.users.create({ username: name, password: TEST_PASSWORD, role });
      return login(name, TEST_PASSWORD);
    },
    async close() {
      await built.app.close();
      await closeContext(ctx);
      await pgdb?.drop();
      await tmp.cleanup();
    },
  };
}

/**
 * Every answer a test receives through `app.inject` with status >= 400 is checked for the
 * `{detail, code}` error body, so no error path can regress to a bare or differently shaped body;
 * and every JSON answer is checked against what its handler returned, so a response schema that
 * drops or coerces a field (fast-json-stringify writes only what the schema declares) fails the test.
 */
function checkErrorBodies(app: BuiltApp['app'], errors: string[]): void {
  const inject = app.inject.bind(app) as (opts: InjectOptions | string) => Promise<LightMyRequestResponse>;
  const checked = async (opts: InjectOptions | string) => {
    const before = errors.length;
    const res = await inject(opts);
    const method = typeof opts === 'string' ? 'GET' : (opts.method ?? 'GET');
    const url = typeof opts === 'string' ? opts : String(opts.url ?? '');
    // A 500 is a defect whatever the test expects: say why, from the service's own log.
    if (res.statusCode >= 500 && res.statusCode !== 503 && res.statusCode !== 507) process.stderr.write(`${method} ${url} answered ${res.statusCode}; service errors:\n${errors.slice(before).join('') || '(none logged)\n'}`);
    checkErrorAnswer(method, url, res.statusCode, res.rawPayload);
    const lost = res.headers[LOST_HEADER];
    if (lost) throw new Error(`${method} ${url}: the response schema changes what the handler returned at ${String(lost)}`);
    return res;
  };
  (app as { inject: unknown }).inject = checked;
}

const LOST_HEADER = 'x-test-serialisation-lost';
const returned = new WeakMap<object, unknown>();

function checkSerialisation(app: BuiltApp['app']): void {
  app.addHook('preSerialization', async (request, _reply, payload) => {
    returned.set(request, JSON.parse(JSON.stringify(payload ?? null)) as unknown);
    return payload;
  });
  // Routes that send kept answers (src/http/kept-answers.ts) serialize through reply.serialize and
  // send the bytes: checked the same way when they make them.
  app.addHook('onRequest', async (request, reply) => {
    const serialize = reply.serialize.bind(reply);
    reply.serialize = (payload: unknown) => {
      returned.set(request, JSON.parse(JSON.stringify(payload ?? null)) as unknown);
      return serialize(payload);
    };
  });
  app.addHook('onSend', async (request, reply, payload) => {
    if (!returned.has(request) || !(typeof payload === 'string' || Buffer.isBuffer(payload))) return payload;
    let sent: unknown;
    try {
      sent = JSON.parse(String(payload));
    } catch {
      return payload;
    }
    const difference = firstDifference(returned.get(request), sent, '');
    if (difference !== null) reply.header(LOST_HEADER, difference || '(root)');
    return payload;
  });
}

/** The path of the first place where `a` and `b` differ, or null. */
function firstDifference(a: unknown, b: unknown, path: string): string | null {
  if (a === b) return null;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return path;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return `${path}.length`;
    for (let i = 0; i < a.length; i++) {
      const d = firstDifference(a[i], b[i], `${path}[${i}]`);
      if (d !== null) return d;
    }
    return null;
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  for (const key of new Set([...Object.keys(ra), ...Object.keys(rb)])) {
    const d = firstDifference(ra[key], rb[key], `${path}.${key}`);
    if (d !== null) return d;
  }
  return null;
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
