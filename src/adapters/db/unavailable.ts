/**
 * Tells a database that cannot answer right now (stopped, restarting, unreachable, out of
 * connections, locked) from a query that is wrong: the first is a 503 the client may retry, the
 * second a bug. Both drivers' errors are recognised here so that no other layer knows them.
 */

/** PostgreSQL SQLSTATEs of a server that is going away, starting up or refusing connections. */
const POSTGRES_UNAVAILABLE = new Set(['57P01', '57P02', '57P03', '53300', '53400']);

/** Socket errors while reaching the server. */
const NETWORK_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOENT']);

/** node-postgres raises these without a code when the connection drops or cannot be had. */
const PG_CONNECTION_MESSAGES = [/^Connection terminated/, /not queryable/, /timeout exceeded when trying to connect/, /^Client was closed/, /^Cannot use a pool after calling end/];

export function isDatabaseUnavailable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as { code?: unknown; message?: unknown; syscall?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : '';
  if (POSTGRES_UNAVAILABLE.has(code) || code.startsWith('08')) return true;
  // A socket error from connecting (the pg driver's own connect, to a TCP port or a unix socket).
  if (NETWORK_ERRNOS.has(code) && (e.syscall === 'connect' || e.syscall === 'read' || e.syscall === 'write' || code !== 'ENOENT')) return true;
  if (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_') || code === 'SQLITE_LOCKED') return true;
  return PG_CONNECTION_MESSAGES.some((pattern) => pattern.test(message));
}

/** Storage exhausted: the filesystem (ENOSPC), a quota (EDQUOT), or SQLite unable to grow its file. */
export function isOutOfSpace(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  return code === 'ENOSPC' || code === 'EDQUOT' || code === 'SQLITE_FULL';
}
