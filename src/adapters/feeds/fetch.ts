/**
 * Download a vulnerability feed (OSV zip/JSON, EPSS CSV, KEV JSON) to a local file.
 * `http(s)://` uses a conditional GET (If-None-Match / If-Modified-Since → `not_modified` on 304);
 * `file://` copies a local file, with a weak validator built from size and mtime so the same
 * conditional logic applies. The body is size-limited while it streams, written to a temporary
 * file beside `destPath` and renamed into place, so a failed download never leaves a partial file.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, stat, unlink } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { DomainError } from '../../domain/errors.js';

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
}

/** Outcome of a download. */
export type FetchFeedResult =
  | { status: 'not_modified' }
  | { status: 'downloaded'; path: string; bytes: number; sha256: string; etag: string | null; last_modified: string | null };

const DEFAULT_TIMEOUT_MS = 10 * 60 * 1000;

/** Fetch `url` into `options.destPath` unless it has not changed since the given validators. */
export async function fetchFeed(url: string, options: FetchFeedOptions): Promise<FetchFeedResult> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DomainError('invalid', 'feed_url_invalid', `not a URL: ${url}`);
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
    const message = err instanceof Error ? err.message : String(err);
    throw new DomainError('unavailable', 'feed_fetch_failed', `feed download failed: ${message}`);
  }
  return { bytes: m.bytes(), sha256: m.sha256() };
}

async function fetchHttp(url: URL, options: FetchFeedOptions): Promise<FetchFeedResult> {
  const headers: Record<string, string> = { 'user-agent': 'tollgate-feed-sync', 'accept-encoding': 'identity' };
  if (options.etag) headers['if-none-match'] = options.etag;
  if (options.lastModified) headers['if-modified-since'] = options.lastModified;
  let response: Response;
  try {
    response = await fetch(url, { headers, redirect: 'follow', signal: AbortSignal.timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS) });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new DomainError('unavailable', 'feed_fetch_failed', `cannot fetch ${url.href}: ${message}`);
  }
  if (response.status === 304) {
    await response.body?.cancel();
    return { status: 'not_modified' };
  }
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    throw new DomainError('unavailable', 'feed_fetch_failed', `fetching ${url.href} answered HTTP ${response.status}`, { http_status: response.status });
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
  const path = fileURLToPath(url);
  let info;
  try {
    info = await stat(path);
  } catch {
    throw new DomainError('unavailable', 'feed_fetch_failed', `feed file not found: ${path}`);
  }
  if (!info.isFile()) throw new DomainError('unavailable', 'feed_fetch_failed', `feed path is not a file: ${path}`);
  if (info.size > options.maxBytes) throw new DomainError('too_large', 'feed_too_large', `feed is ${info.size} bytes, more than ${options.maxBytes}`);
  const etag = `W/"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"`;
  const lastModified = info.mtime.toUTCString();
  const since = options.lastModified ? Date.parse(options.lastModified) : Number.NaN;
  const unchangedSince = !Number.isNaN(since) && Math.floor(info.mtimeMs / 1000) * 1000 <= since;
  if (options.etag ? options.etag === etag : unchangedSince) return { status: 'not_modified' };
  const written = await writeAtomically(createReadStream(path), options);
  return { status: 'downloaded', path: options.destPath, ...written, etag, last_modified: lastModified };
}
