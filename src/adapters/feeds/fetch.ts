/**
 * Download a vulnerability feed (OSV zip/JSON, EPSS CSV, KEV JSON) to a local file.
 * `http(s)://` uses a conditional GET (If-None-Match / If-Modified-Since → `not_modified` on 304)
 * and follows a few redirects, to the same scheme only; `file://` copies a file under the allowed
 * folder (FEEDS_DIR) only, with a weak validator built from size and mtime so the same
 * conditional logic applies. The body is size-limited while it streams, written to a temporary
 * file beside `destPath` and renamed into place, so a failed download never leaves a partial file.
 *
 * A source that cannot be read (unreachable, refused, not found, not allowed) is one error with
 * one message, whichever the cause: distinct messages would let whoever edits the feed settings
 * probe which files exist and which ports are open. The cause is on the error's `cause`, for the
 * server log only.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { DomainError } from '../../domain/errors.js';
import { openConfinedFile } from '../storage/confined-file.js';

/** Options of one download. */
export interface FetchFeedOptions {
  /** Refuse bodies larger than this (bytes). */
  maxBytes: number;
  /** Where the feed ends up (replaced atomically). */
  destPath: string;
  /** Validators from the previous download, for a conditional request. */
  etag?: string | null;
  lastModified?: string | null;
  /** Whole-request timeout; default 10 minutes (feeds can be hundreds of MiB). */
  timeoutMs?: number;
  /** The folder file:// URLs may read from (FEEDS_DIR); null or absent refuses every file:// URL. */
  fileRoot?: string | null;
  /** Redirects followed, each to the scheme of the URL asked for; default 5. */
  maxRedirects?: number;
}

/** Outcome of a download. */
export type FetchFeedResult =
  | { status: 'not_modified' }
  | { status: 'downloaded'; path: string; bytes: number; sha256: string; etag: string | null; last_modified: string | null };

const DEFAULT_TIMEOUT_MS = 10 * 60 * 1000;
const DEFAULT_MAX_REDIRECTS = 5;

/** The one answer for a source that cannot be read. */
export const FEED_UNAVAILABLE = 'the feed source could not be read (unreachable, refused, not found or not allowed); the server log has the reason';

function unavailable(reason: string): DomainError {
  const error = new DomainError('unavailable', 'feed_fetch_failed', FEED_UNAVAILABLE);
  error.cause = reason;
  return error;
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));
/** URLs may carry tokens in their query: the log gets scheme, host and path. */
const shown = (url: URL): string => `${url.origin}${url.pathname}`;

/** Fetch `url` into `options.destPath` unless it has not changed since the given validators. */
export async function fetchFeed(url: string, options: FetchFeedOptions): Promise<FetchFeedResult> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DomainError('invalid', 'feed_url_invalid', 'the feed URL is not a URL');
  }
  if (parsed.protocol === 'file:') return fetchFile(parsed, options);
  if (parsed.protocol === 'http:' || parsed.protocol === 'https:') return fetchHttp(parsed, options);
  throw new DomainError('invalid', 'feed_url_unsupported', `unsupported feed URL scheme ${parsed.protocol}`);
}

/** A pass-through that hashes and counts bytes and fails once the cap is passed. */
function meter(maxBytes: number): { transform: Transform; bytes: () => number; sha256: () => string } {
  const hash = createHash('sha256');
  let bytes = 0;
  const transform = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      if (bytes > maxBytes) {
        done(new DomainError('too_large', 'feed_too_large', `feed exceeds ${maxBytes} bytes`));
        return;
      }
      hash.update(chunk);
      done(null, chunk);
    },
  });
  return { transform, bytes: () => bytes, sha256: () => hash.digest('hex') };
}

/** Stream `source` into a temp file beside `destPath`, then rename it into place. */
async function writeAtomically(
  source: Readable,
  options: FetchFeedOptions,
): Promise<{ bytes: number; sha256: string }> {
  const temp = `${options.destPath}.part-${randomBytes(6).toString('hex')}`;
  const m = meter(options.maxBytes);
  try {
    await pipeline(source, m.transform, createWriteStream(temp, { mode: 0o600 }));
    await rename(temp, options.destPath);
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    if (err instanceof DomainError) throw err;
    throw unavailable(`feed download failed: ${message(err)}`);
  }
  return { bytes: m.bytes(), sha256: m.sha256() };
}

async function fetchHttp(url: URL, options: FetchFeedOptions): Promise<FetchFeedResult> {
  const headers: Record<string, string> = { 'user-agent': 'tollgate-feed-sync', 'accept-encoding': 'identity' };
  if (options.etag) headers['if-none-match'] = options.etag;
  if (options.lastModified) headers['if-modified-since'] = options.lastModified;
  const signal = AbortSignal.timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  let current = url;
  let response: Response;
  // Redirects by hand: fetch's own following would go from https to http, and any number of times.
  for (let redirects = 0; ; redirects++) {
    try {
      response = await fetch(current, { headers, redirect: 'manual', signal });
    } catch (err) {
      throw unavailable(`cannot fetch ${shown(current)}: ${message(err)}`);
    }
    if (response.status < 300 || response.status >= 400 || response.status === 304) break;
    await response.body?.cancel();
    const location = response.headers.get('location');
    if (location === null) throw unavailable(`${shown(current)} answered HTTP ${response.status} without a Location`);
    if (redirects >= maxRedirects) throw unavailable(`more than ${maxRedirects} redirects from ${shown(url)}`);
    let next: URL;
    try {
      next = new URL(location, current);
    } catch {
      throw unavailable(`${shown(current)} redirected to an invalid URL`);
    }
    if (next.protocol !== url.protocol) throw unavailable(`${shown(current)} redirected to a ${next.protocol} URL; only ${url.protocol} is followed`);
    current = next;
  }
  if (response.status === 304) {
    await response.body?.cancel();
    return { status: 'not_modified' };
  }
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    throw unavailable(`fetching ${shown(current)} answered HTTP ${response.status}`);
  }
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > options.maxBytes) {
    await response.body.cancel();
    throw new DomainError('too_large', 'feed_too_large', `feed is ${declared} bytes, more than ${options.maxBytes}`);
  }
  const body = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>);
  const written = await writeAtomically(body, options);
  return {
    status: 'downloaded',
    path: options.destPath,
    ...written,
    etag: response.headers.get('etag'),
    last_modified: response.headers.get('last-modified'),
  };
}

async function fetchFile(url: URL, options: FetchFeedOptions): Promise<FetchFeedResult> {
  if (!options.fileRoot) throw unavailable(`file:// feed refused, FEEDS_DIR is not set: ${url.href}`);
  let path: string;
  try {
    path = fileURLToPath(url);
  } catch (err) {
    throw unavailable(`not a local file URL ${url.href}: ${message(err)}`);
  }
  let handle;
  try {
    handle = await openConfinedFile(path, options.fileRoot);
  } catch (err) {
    throw unavailable(message(err));
  }
  try {
    const info = await handle.stat();
    if (info.size > options.maxBytes) throw new DomainError('too_large', 'feed_too_large', `feed is ${info.size} bytes, more than ${options.maxBytes}`);
    const etag = `W/"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"`;
    const lastModified = info.mtime.toUTCString();
    const since = options.lastModified ? Date.parse(options.lastModified) : Number.NaN;
    const unchangedSince = !Number.isNaN(since) && Math.floor(info.mtimeMs / 1000) * 1000 <= since;
    if (options.etag ? options.etag === etag : unchangedSince) return { status: 'not_modified' };
    // The descriptor that passed the checks is the one read: the path is not opened again.
    const written = await writeAtomically(handle.createReadStream({ autoClose: false }), options);
    return { status: 'downloaded', path: options.destPath, ...written, etag, last_modified: lastModified };
  } finally {
    await handle.close();
  }
}
