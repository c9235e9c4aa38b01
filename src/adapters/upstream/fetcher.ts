/**
 * Downloads from upstream repositories over http(s) only, with a deadline and a size cap on
 * every request: small signed files into memory (fetch), indexes and packages into a hashed temp
 * file (node:http, lighter per request).
 */
import { createReadStream } from 'node:fs';
import { get as httpGet, type IncomingMessage } from 'node:http';
import { get as httpsGet } from 'node:https';
import { rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { DomainError } from '../../domain/errors.js';
import { hashStream, type HashedTempFile } from '../storage/hash-stream.js';

export interface FetchLimits {
  maxBytes: number;
  timeoutMs: number;
}

/**
 * A download in the temp folder with its digests. Whoever ends up owning it removes it: the
 * caller, or the upload pipeline it is handed to (as a HashedTempFile, which it moves or discards).
 */
export interface DownloadedFile extends HashedTempFile {
  /** The bytes as downloaded. */
  stream(): Readable;
  /** Deletes the temp file; nothing happens when it is gone already. */
  remove(): Promise<void>;
}

export interface SmallFetch {
  status: 200 | 304 | 404;
  body: Buffer;
  etag: string | null;
  lastModified: string | null;
}

const unreachable = (url: string, why: string) =>
  new DomainError('unavailable', 'upstream_unreachable', `cannot fetch ${redact(url)}: ${why}`);

/** A URL without credentials, for messages. */
function redact(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return '(invalid URL)';
  }
}

function checkScheme(url: string): void {
  const protocol = new URL(url).protocol;
  if (protocol !== 'http:' && protocol !== 'https:') throw new DomainError('invalid', 'invalid_url', 'only http:// and https:// upstreams are fetched');
}

async function request(url: string, limits: FetchLimits, headers: Record<string, string> = {}): Promise<Response> {
  checkScheme(url);
  let response: Response;
  try {
    response = await fetch(url, { headers, redirect: 'follow', signal: AbortSignal.timeout(limits.timeoutMs) });
  } catch (error) {
    throw unreachable(url, error instanceof Error ? (error.name === 'TimeoutError' ? 'timed out' : error.message) : String(error));
  }
  // A redirect may not leave http(s) (fetch would refuse anyway, but say so plainly).
  checkScheme(response.url || url);
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > limits.maxBytes) {
    await response.body?.cancel();
    throw new DomainError('too_large', 'upstream_too_large', `${redact(url)} is ${declared} bytes, more than the ${limits.maxBytes} allowed`);
  }
  return response;
}

/** GETs a small file (InRelease, repomd.xml, a signature), conditionally when validators are given. */
export async function fetchSmall(url: string, limits: FetchLimits, validators: { etag?: string | null; lastModified?: string | null } = {}): Promise<SmallFetch> {
  const headers: Record<string, string> = {};
  if (validators.etag) headers['if-none-match'] = validators.etag;
  if (validators.lastModified) headers['if-modified-since'] = validators.lastModified;
  const response = await request(url, limits, headers);
  const meta = { etag: response.headers.get('etag'), lastModified: response.headers.get('last-modified') };
  if (response.status === 304) return { status: 304, body: Buffer.alloc(0), ...meta };
  if (response.status === 404 || response.status === 410) {
    await response.body?.cancel();
    return { status: 404, body: Buffer.alloc(0), ...meta };
  }
  if (response.status !== 200) {
    await response.body?.cancel();
    throw unreachable(url, `HTTP ${response.status}`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of bodyOf(response)) {
      size += chunk.length;
      if (size > limits.maxBytes) throw new DomainError('too_large', 'upstream_too_large', `${redact(url)} is larger than ${limits.maxBytes} bytes`);
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof DomainError) throw error;
    throw unreachable(url, error instanceof Error ? error.message : String(error));
  }
  return { status: 200, body: Buffer.concat(chunks), ...meta };
}

/** GETs a file into a temp file under `tempDir` with its digests; null on 404. */
export async function fetchToFile(url: string, limits: FetchLimits, tempDir: string): Promise<DownloadedFile | null> {
  const signal = AbortSignal.timeout(limits.timeoutMs);
  const response = await get(url, limits, signal);
  if (response === null) return null;
  try {
    return downloaded(await hashStream(response, { tempDir, maxBytes: limits.maxBytes, sync: false }));
  } catch (error) {
    if (error instanceof DomainError) {
      if (error.code === 'file_too_large') throw new DomainError('too_large', 'upstream_too_large', `${redact(url)} is larger than ${limits.maxBytes} bytes`);
      throw error;
    }
    throw unreachable(url, signal.aborted ? 'timed out' : error instanceof Error ? error.message : String(error));
  } finally {
    response.destroy();
  }
}

const MAX_REDIRECTS = 10;

/**
 * The 200 response of a GET through node:http(s), redirects followed (http(s) only), or null on
 * 404/410. Package downloads go this way rather than through fetch(): on loopback, fetch's WHATWG
 * layers cost about twice the CPU per request (~1 ms against ~0.4 ms, server included), which
 * showed in an import of hundreds of small packages. The deadline `signal` covers the body too.
 */
async function get(url: string, limits: FetchLimits, signal: AbortSignal, redirects = 0): Promise<IncomingMessage | null> {
  checkScheme(url);
  let response: IncomingMessage;
  try {
    response = await new Promise<IncomingMessage>((resolve, reject) => {
      const request = (url.startsWith('https:') ? httpsGet : httpGet)(url, { signal }, resolve);
      request.once('error', reject);
    });
  } catch (error) {
    throw unreachable(url, signal.aborted ? 'timed out' : error instanceof Error ? error.message : String(error));
  }
  const status = response.statusCode ?? 0;
  if ([301, 302, 303, 307, 308].includes(status) && response.headers.location) {
    response.resume();
    if (redirects >= MAX_REDIRECTS) throw unreachable(url, 'too many redirects');
    let next: string;
    try {
      next = new URL(response.headers.location, url).toString();
    } catch {
      throw unreachable(url, 'redirect to an invalid URL');
    }
    return get(next, limits, signal, redirects + 1);
  }
  if (status === 404 || status === 410) {
    response.resume();
    return null;
  }
  if (status !== 200) {
    response.resume();
    throw unreachable(url, `HTTP ${status}`);
  }
  const declared = Number(response.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > limits.maxBytes) {
    response.destroy();
    throw new DomainError('too_large', 'upstream_too_large', `${redact(url)} is ${declared} bytes, more than the ${limits.maxBytes} allowed`);
  }
  return response;
}

function downloaded(file: HashedTempFile): DownloadedFile {
  return { ...file, stream: () => createReadStream(file.path), remove: () => rm(file.path, { force: true }) };
}

function bodyOf(response: Response): AsyncIterable<Buffer> {
  if (!response.body) return Readable.from([]);
  return Readable.fromWeb(response.body as unknown as WebReadableStream<Uint8Array>);
}

/** Joins a base URL and a relative index path, refusing paths that climb out of the base. */
export function upstreamUrl(base: string, path: string): string {
  if (path.startsWith('/') || path.split('/').includes('..') || /^[a-z]+:/i.test(path)) {
    throw new DomainError('invalid', 'bad_upstream_path', `upstream index names an unsafe path ${JSON.stringify(path.slice(0, 200))}`);
  }
  return `${base.replace(/\/+$/, '')}/${path.split('/').map(encodeURIComponent).join('/')}`;
}
