/**
 * The published tree, read-only, at /repo/, so that one process is a working repository: ETag,
 * Last-Modified, conditional requests and single byte ranges; which file a request names is
 * decided here, from the path decoded once.
 */
import type { FastifyRequest } from 'fastify';
import { packageFilePath } from '../../domain/downloads/package-path.js';
import type { Principal } from '../../services/auth.js';
import type { AppContext } from '../../services/context.js';
import { RepositoryAccess } from '../../services/repository-access.js';
import { badRequest, HttpError } from '../errors.js';
import type { App } from '../types.js';

const CONTENT_TYPES: Array<[RegExp, string]> = [
  [/\.deb$/, 'application/vnd.debian.binary-package'],
  [/\.rpm$/, 'application/x-rpm'],
  [/\.gz$/, 'application/gzip'],
  [/\.xz$/, 'application/x-xz'],
  [/\.(asc|gpg)$/, 'application/pgp-keys'],
  [/\.xml$/, 'application/xml'],
  [/(^|\/)(InRelease|Release|Packages)$/, 'text/plain; charset=utf-8'],
];

export const REPO_PREFIX = '/repo/';

const notPublished = () => new HttpError(404, 'not_found', 'No such file in the published repository');

/**
 * The repository-relative path a request names, or an error. Clients percent-encode freely (apt
 * sends `+` as `%2b`, `~` as `%7e`, `:` as `%3a`), so the path is decoded exactly once and every
 * check applies to the decoded form: no `.`/`..`/empty segment, no dotfile, no backslash or NUL.
 * A `%2f` decodes to a separator and is checked as one.
 */
export function repositoryPath(rawUrl: string): { path: string } | { error: HttpError } {
  const end = rawUrl.search(/[?#]/);
  const rawPath = end === -1 ? rawUrl : rawUrl.slice(0, end);
  const at = rawPath.indexOf(REPO_PREFIX);
  if (at === -1) return { error: notPublished() };
  let decoded: string;
  try {
    decoded = decodeURIComponent(rawPath.slice(at + REPO_PREFIX.length));
  } catch {
    return { error: badRequest('invalid_path', 'The path is not valid percent-encoding') };
  }
  if (/[\\\0]/.test(decoded)) return { error: badRequest('invalid_path', 'Backslashes and NUL characters are not allowed in repository paths') };
  const segments = decoded.split('/');
  if (segments.some((s) => s === '' || s.startsWith('.'))) return { error: notPublished() };
  return { path: segments.join('/') };
}

/** Indexes change in place; package files and content-addressed objects never do. */
function cacheControl(path: string, isPrivate: boolean): string {
  const immutable = /\.(deb|rpm)$|by-hash|[0-9a-f]{64}-/.test(path);
  // A private file must not be kept by shared caches (a proxy would serve it to anyone).
  if (isPrivate) return immutable ? 'private, max-age=31536000, immutable' : 'private, no-cache';
  return immutable ? 'public, max-age=31536000, immutable' : 'no-cache';
}

/** A single `bytes=` range of a file of `size` bytes: the one to send, null to send it all, or 'unsatisfiable'. */
export function byteRange(header: string | undefined, size: number): { start: number; end: number } | null | 'unsatisfiable' {
  const m = /^bytes=(\d*)-(\d*)$/.exec(header?.trim() ?? '');
  // Absent, malformed or several ranges: the whole file, as RFC 9110 allows.
  if (!m || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}

/** The token a repository client sends: HTTP Basic's password (apt auth.conf, dnf username/password) or a Bearer token. */
export function repositoryCredential(header: string | undefined): string | null {
  if (!header) return null;
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (bearer) return bearer[1]!;
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!basic) return null;
  const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon === -1 ? null : decoded.slice(colon + 1) || null;
}

const needsCredentials = (detail: string, code: string) =>
  new HttpError(401, code, detail, {}, { 'WWW-Authenticate': 'Basic realm="Tollgate repository", charset="UTF-8"' });

/**
 * Lets a request for a private distribution's file through only with valid credentials: a login's
 * JWT or an API token (any distribution), or a read token naming one of the distributions that
 * publish the file. Returns whether the file is private.
 *
 * The token a package download is made with is noted for the download statistics: verified here
 * for private files; for public ones only when the request is a GET of a package file that carries
 * a credential (anonymous downloads cost nothing more), and a credential that does not verify
 * changes nothing there: public files stay readable by anyone, whatever a client sends.
 */
async function checkReadAccess(ctx: AppContext, access: RepositoryAccess, request: FastifyRequest, path: string): Promise<boolean> {
  const guards = await access.guardsOf(path);
  const credential = repositoryCredential(request.headers.authorization);
  if (!guards) {
    if (credential && request.method === 'GET' && packageFilePath(request.url)) {
      const principal = await ctx.auth.authenticate(credential, { readTokens: true }).catch(() => null);
      if (principal && !('error' in principal)) request.downloadToken = downloadTokenOf(principal);
    }
    return false;
  }
  if (!credential) throw needsCredentials(`${guards.join(', ')} is private: send an API token or a read token as the HTTP Basic password`, 'not_authenticated');
  const principal = await ctx.auth.authenticate(credential, { readTokens: true });
  if ('error' in principal) throw needsCredentials(principal.error === 'inactive' ? 'This account is deactivated' : 'Invalid or expired credentials', principal.error === 'inactive' ? 'account_disabled' : 'invalid_token');
  // 401 rather than 403: apt and dnf report it as an authentication failure, which it is for them.
  if (principal.distributions && !guards.some((g) => principal.distributions!.includes(g))) {
    throw needsCredentials(`This read token does not read ${guards.join(', ')}`, 'token_out_of_scope');
  }
  request.downloadToken = downloadTokenOf(principal);
  return true;
}

const downloadTokenOf = (p: Principal) => (p.tokenId ? { id: p.tokenId, username: p.user.username } : null);

export async function repositoryRoutes(app: App, ctx: AppContext): Promise<void> {
  const access = new RepositoryAccess(ctx.db);
  app.decorateRequest('downloadToken', null);
  app.get(`${REPO_PREFIX}*`, { schema: { hide: true } }, async (request, reply) => {
    const target = repositoryPath(request.url);
    if ('error' in target) throw target.error;
    const isPrivate = await checkReadAccess(ctx, access, request, target.path);
    // Size, date and bytes all come from one open file: an index replaced by a publish while it
    // is served goes out whole, as it was (a stat followed by an open of the path could announce
    // one length and send another file's bytes).
    const file = await ctx.repo.files.openPublished(target.path);
    if (!file) throw notPublished();
    const etag = `W/"${file.size.toString(16)}-${file.modified.getTime().toString(16)}"`;
    const lastModified = file.modified.toUTCString();
    const type = CONTENT_TYPES.find(([pattern]) => pattern.test(target.path));
    reply.header('content-type', type ? type[1] : 'application/octet-stream');
    reply.header('cache-control', cacheControl(target.path, isPrivate));
    reply.header('etag', etag);
    reply.header('last-modified', lastModified);
    reply.header('accept-ranges', 'bytes');
    const ifNoneMatch = request.headers['if-none-match'];
    const ifModifiedSince = request.headers['if-modified-since'];
    const notModified = ifNoneMatch !== undefined
      ? ifNoneMatch.split(',').some((tag) => tag.trim() === etag || tag.trim() === '*')
      : ifModifiedSince !== undefined && Math.floor(file.modified.getTime() / 1000) <= Math.floor(Date.parse(ifModifiedSince) / 1000);
    const ifRange = request.headers['if-range'];
    const range = ifRange === undefined || ifRange === etag || ifRange === lastModified ? byteRange(request.headers.range, file.size) : null;
    // HEAD goes through the stream path too: Fastify keeps its headers and drops (closes) the stream.
    if (notModified || range === 'unsatisfiable') {
      await file.close();
      if (notModified) return reply.code(304).send();
      reply.header('content-range', `bytes */${file.size}`);
      throw new HttpError(416, 'range_not_satisfiable', `The requested range is outside the file (${file.size} bytes)`);
    }
    if (range) {
      reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${file.size}`).header('content-length', range.end - range.start + 1);
      return reply.send(file.stream(range));
    }
    reply.header('content-length', file.size);
    // Read exactly the announced length: the stream then ends with its last chunk instead of after
    // one more read finding the end of the file, so the response is ended before a client that has
    // every byte can hang up (such a download would otherwise look broken off and go uncounted).
    return reply.send(file.stream(file.size > 0 ? { start: 0, end: file.size - 1 } : undefined));
  });
}
