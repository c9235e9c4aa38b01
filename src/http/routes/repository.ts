/**
 * The published tree, read-only, at /repo/, so that one process is a working repository. ETag,
 * Last-Modified and Range come from the static file server; which file a request names is
 * decided here, from the path decoded once.
 */
import fastifyStatic from '@fastify/static';
import type { AppContext } from '../../services/context.js';
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
function cacheControl(path: string): string {
  return /\.(deb|rpm)$|by-hash|[0-9a-f]{64}-/.test(path) ? 'public, max-age=31536000, immutable' : 'no-cache';
}

export async function repositoryRoutes(app: App, ctx: AppContext): Promise<void> {
  await app.register(fastifyStatic, {
    root: ctx.repo.files.repoDir,
    serve: false,
    dotfiles: 'deny',
    index: false,
    list: false,
    etag: true,
    lastModified: true,
    acceptRanges: true,
    cacheControl: false,
    setHeaders: (res, path) => {
      const type = CONTENT_TYPES.find(([pattern]) => pattern.test(path));
      if (type) res.header('content-type', type[1]);
      res.header('cache-control', cacheControl(path));
    },
  });

  app.get(`${REPO_PREFIX}*`, { schema: { hide: true } }, async (request, reply) => {
    const target = repositoryPath(request.url);
    if ('error' in target) throw target.error;
    // sendFile takes a decoded path (it re-encodes it for the file server), so the file opened is
    // exactly the path checked above: a literal `%2e` stays literal.
    return reply.sendFile(target.path);
  });
}
