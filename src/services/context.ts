import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { DomainError } from '../domain/errors.js';
import { AuditLog } from '../adapters/audit/audit-log.js';
import { databaseAuditIndex } from '../adapters/audit/db-index.js';
import { SecretBox } from '../adapters/crypto/secret-box.js';
import { withAuditAppendLock } from '../adapters/db/audit.table.js';
import { pingDatabase } from '../adapters/db/health.table.js';
import { migrateToLatest, openDatabase, type Db, type DbDialect } from '../adapters/db/index.js';
import type { Durable } from '../adapters/db/durability.js';
import { openWindowCounters, type WindowCounters } from '../adapters/counters/window-counters.js';
import { Metrics } from '../adapters/metrics/metrics.js';
import { writeFileAtomic } from '../adapters/storage/atomic.js';
import { readUpstreamKeys } from '../adapters/signing/upstream-verify.js';
import type { SettingKey, SettingProblem } from '../domain/settings.js';
import { AccountSecurity } from './account-security.js';
import { ApiTokenService } from './api-tokens.js';
import { AuthService } from './auth.js';
import { createDirectoryLogin } from './directory.js';
import { HealthService } from './health.js';
import { IntegrationChecks } from './integration-checks.js';
import { Lockout } from './lockout.js';
import { createSettingsMail, Notifier, type OutboundMail } from './notifications.js';
import { PasswordResets } from './password-reset.js';
import { SettingsService } from './settings.js';
import { UserService } from './users.js';
import { createRepository, type Repository } from './repository.js';
import { JobScheduler } from './jobs.js';
import { registerRetentionJob } from './retention.js';
import { createSecurity, registerSecurityJobs, type SecurityService } from './security/index.js';
import { DashboardService } from './dashboard.js';
import { DownloadsService } from './downloads/index.js';
import { ImportService, registerImportJobs } from './imports/index.js';

/** Everything a request handler or job may use, built once at start-up. */
export interface AppContext {
  config: Config;
  log: Logger;
  db: Db;
  dialect: DbDialect;
  /** Resolves once the commits made so far would survive a power loss: answers that report a change wait for it. */
  durable: Durable;
  box: SecretBox;
  audit: AuditLog;
  settings: SettingsService;
  users: UserService;
  tokens: ApiTokenService;
  auth: AuthService;
  /** Password and MFA changes of the signed-in user. */
  accounts: AccountSecurity;
  passwordResets: PasswordResets;
  metrics: Metrics;
  health: HealthService;
  repo: Repository;
  mail: OutboundMail;
  /** Webhook and e-mail notifications, sent in the background: a failed delivery never blocks the request that caused it. */
  notifier: Notifier;
  /** The settings test actions (webhook, LDAP, e-mail), each audited as SETTINGS_TEST. */
  checks: IntegrationChecks;
  /** CVE scanner, vulnerability database, decisions, rescans, security views. */
  security: SecurityService;
  /** Daily jobs; started by main.ts once the service listens. */
  jobs: JobScheduler;
  /** Repository statistics, activity history and summary. */
  dashboard: DashboardService;
  /** Download counting (built-in server and proxy logs) and statistics. */
  downloads: DownloadsService;
  /** Import from upstream repositories: sources, catalog sync. */
  imports: ImportService;
  /** Rate-limit counters: in this process, or in Redis (REDIS_URL) shared by the replicas. */
  rateCounters: WindowCounters;
  /** Run in reverse order at shutdown. */
  closers: Array<() => Promise<void>>;
}

/** Every trusted RPM key block in a settings patch must parse as OpenPGP public keys. */
async function trustedKeyProblems(patch: Partial<Record<SettingKey, unknown>>): Promise<SettingProblem[]> {
  const keys = (patch.rpm_trusted_keys ?? {}) as Record<string, string>;
  const problems: SettingProblem[] = [];
  for (const [codename, armored] of Object.entries(keys)) {
    await readUpstreamKeys(armored).catch(() => problems.push({ loc: ['rpm_trusted_keys', codename], msg: 'the key block does not parse as OpenPGP public keys' }));
  }
  return problems;
}

export async function createContext(config: Config, log: Logger): Promise<AppContext> {
  const { db, dialect, close, durable } = openDatabase(config.databaseUrl, config.dataDir, { statementProfileFile: config.sqlProfileFile });
  await migrateToLatest(db);
  const box = new SecretBox(config.settingsKey ?? config.jwtSecret, 'settings');
  // On PostgreSQL, replicas may share DATA_DIR: their appends take turns on one chain.
  const sharedAudit = dialect === 'postgres' ? { run: <T>(append: () => Promise<T>) => withAuditAppendLock(db, append) } : null;
  const audit = await AuditLog.open(join(config.dataDir, 'audit'), databaseAuditIndex(db), undefined, sharedAudit);
  const users = new UserService(db, config.bcryptRounds);
  const tokens = new ApiTokenService(db);
  const settings = new SettingsService(db, box, { dirs: { feedsDir: config.feedsDir, caBundleDir: config.caBundleDir }, audit, verify: trustedKeyProblems });
  const directory = createDirectoryLogin({ settings, edition: config.edition, log, ldap: { caBundleDir: config.caBundleDir } });
  const lockout = new Lockout(db);
  const auth = new AuthService({ users, tokens, lockout, audit, box, jwtSecret: config.jwtSecret, expireMinutes: config.jwtExpireMinutes, directory });
  const accounts = new AccountSecurity({ users, auth, lockout, audit, box });
  const passwordResets = new PasswordResets({ db, users, lockout, audit });
  const metrics = new Metrics();
  const mail = createSettingsMail(settings);
  const notifier = new Notifier({ settings, mail, metrics, log, edition: config.edition });
  const checks = new IntegrationChecks({ settings, notifier, mail, audit, ldap: { caBundleDir: config.caBundleDir } });
  const health = new HealthService();
  health.register('database', async () => {
    await pingDatabase(db);
    return { ok: true, configured: true, dialect };
  }, true);
  const repo = await createRepository({ config, db, dialect, box, audit, metrics, health, settings, log });
  const security = createSecurity({ config, db, settings, metrics, log, repo, audit, notifier, health });
  const jobs = new JobScheduler(db, settings, log, config.edition);
  registerSecurityJobs(jobs, security, db);
  registerRetentionJob(jobs, { db, audit, settings });
  const imports = new ImportService({ db, audit, log, dataDir: config.dataDir, settings, jobs, edition: config.edition, repo, maxPackageBytes: config.maxUploadBytes, catalogMemoryBytes: config.importCatalogMemoryBytes });
  registerImportJobs(jobs, imports);
  const dashboard = new DashboardService(db);
  const downloads = new DownloadsService({ db, dialect, log, accessLogPath: config.accessLogPath, ingestEveryMs: config.accessLogIntervalMs });
  const rateCounters = await openWindowCounters(config.redisUrl, 'tollgate-rl:', {
    unavailable: (error) => log.warn({ err: error }, 'Redis does not answer: rate limits are counted in this replica alone until it does'),
    restored: () => log.info('Redis answers again: rate limits are shared between the replicas again'),
  });
  // Not critical: while Redis is away each replica counts alone, and the service keeps serving.
  if (config.redisUrl) {
    health.register('redis', async () => ({ ...(await rateCounters.status()), configured: true }));
  }
  const ctx: AppContext = {
    config, log, db, dialect, durable, box, audit, settings, users, tokens, auth, accounts, passwordResets,
    metrics, health, mail, notifier, checks, repo, security, jobs, dashboard, downloads, imports, rateCounters,
    // Deliveries still under way get a bounded wait before the database closes.
    closers: [close, () => notifier.idle(10_000), () => rateCounters.close()],
  };
  // A package whose payload the background check finds malformed is quarantined like any other.
  repo.fileLists.onMalformed(async (pkg, reason) => {
    await security.decisions.quarantine(pkg.name, pkg.version, { arch: pkg.arch, distribution: pkg.distribution }, reason, { username: 'system', ip: null });
  });
  ctx.closers.push(async () => {
    repo.fileLists.stop();
    await repo.fileLists.idle();
  });
  ctx.closers.push(() => {
    repo.publisher.stop();
    return repo.publisher.idle();
  });
  ctx.closers.push(async () => repo.distributions.stop());
  ctx.closers.push(async () => {
    repo.resigner.stop();
    await repo.resigner.idle();
  });
  ctx.closers.push(() => jobs.stop());
  // Buffered download counts are written before the database closes.
  downloads.start();
  ctx.closers.push(() => downloads.close());
  await ensureInitialAdmin(ctx);
  return ctx;
}

/**
 * The service is never left without an administrator: the configured admin (ADMIN_USERNAME +
 * bcrypt ADMIN_PASSWORD_HASH) is created when missing; with neither set and no admin at all,
 * `admin` gets a random password printed once and written to DATA_DIR/initial-admin-password
 * (0600), so the operator can log in without a default password anyone could guess.
 */
async function ensureInitialAdmin(ctx: AppContext): Promise<void> {
  const { config, users, log } = ctx;
  if (config.adminUsername && config.adminPasswordHash) {
    if (!(await users.byUsername(config.adminUsername))) {
      const created = await users.create({ username: config.adminUsername, password: null, role: 'admin' }, config.adminPasswordHash).then(() => true, createdElsewhere);
      if (created) log.info({ username: config.adminUsername }, 'initial admin created from configuration');
    }
    return;
  }
  if ((await users.countAdmins()) > 0) return;
  const username = config.adminUsername ?? 'admin';
  const password = `Tg-${randomBytes(18).toString('base64url')}`;
  // Replicas starting together on an empty database: one creates the admin (and its password file).
  if (!(await users.create({ username, password, role: 'admin' }).then(() => true, createdElsewhere))) return;
  const file = join(config.dataDir, 'initial-admin-password');
  // Owner-only, whole and on disk (its admin row is committed): written then renamed, folder fsynced.
  await writeFileAtomic(file, `${password}\n`, { mode: 0o600 });
  // Printed once so the operator can log in; it is also in the 0600 file above.
  log.warn(`initial admin created: username=${username} password=${password} (also in ${file}); change it after the first login`);
}

/** A create that lost the race to another replica: the account exists, which is what was wanted. */
function createdElsewhere(error: unknown): false {
  if (error instanceof DomainError && error.code === 'user_exists') return false;
  throw error;
}

export async function closeContext(ctx: AppContext): Promise<void> {
  for (const close of [...ctx.closers].reverse()) {
    try {
      await close();
    } catch (error) {
      ctx.log.error({ err: error }, 'error while shutting down');
    }
  }
}
