/**
 * The service's public HTTP API, and nothing else: every command goes through here, so TLS,
 * authentication and error bodies are handled in one place.
 */
import { openAsBlob, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { Agent, FormData, fetch, type Response } from 'undici';
import type { Connection } from './config.js';
import { ApiError, CliError } from './errors.js';
import { readServerEvents, type ServerEvent } from './sse.js';

export type Query = Record<string, string | number | boolean | undefined>;

export class ApiClient {
  private readonly dispatcher: Agent;

  constructor(private readonly connection: Connection) {
    const ca = connection.caBundle ? readCaBundle(connection.caBundle) : undefined;
    this.dispatcher = new Agent({ connect: { ca, rejectUnauthorized: !connection.insecure } });
  }

  get serviceUrl(): string {
    return this.connection.serviceUrl;
  }

  get hasToken(): boolean {
    return this.connection.token !== null;
  }

  async get<T>(path: string, query?: Query): Promise<T> {
    return this.json<T>('GET', path, undefined, query);
  }

  async post<T>(path: string, body?: unknown, query?: Query): Promise<T> {
    return this.json<T>('POST', path, body ?? {}, query);
  }

  async delete<T>(path: string): Promise<T> {
    return this.json<T>('DELETE', path);
  }

  /** Every item of a paged collection (`{items, total, page, pages}`), 1000 per request. */
  async all<T>(path: string, query: Query = {}): Promise<T[]> {
    const items: T[] = [];
    for (let page = 1; ; page++) {
      const answer = await this.get<{ items: T[]; pages: number }>(path, { ...query, page, per_page: 1000 });
      items.push(...answer.items);
      if (page >= answer.pages || answer.items.length === 0) return items;
    }
  }

  /** A body streamed as it arrives (an SBOM may be large). */
  async stream(path: string, query?: Query): Promise<Readable> {
    const response = await this.send('GET', path, undefined, query);
    if (!response.body) throw new CliError(`empty answer from ${path}`);
    return Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>);
  }

  /**
   * POST /upload/stream: the file is streamed from disk, and each Server-Sent Event reaches
   * `onEvent` as the pipeline runs. Resolves with the final `result` (or `error`) event's data.
   */
  /** `companions`: a source package's other files, sent as `files` parts under their names. */
  async uploadStream(file: string, fields: Record<string, string>, onEvent: (event: ServerEvent) => void, companions: readonly string[] = []): Promise<{ event: 'result' | 'error'; data: Record<string, unknown> }> {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    form.append('file', await openAsBlob(file), basename(file));
    for (const companion of companions) form.append('files', await openAsBlob(companion), basename(companion));
    const response = await this.send('POST', '/upload/stream', form);
    if (!response.body) throw new CliError('the service answered the upload without a body');
    try {
      for await (const event of readServerEvents(response.body)) {
        if (event.event === 'result' || event.event === 'error') {
          return { event: event.event, data: JSON.parse(event.data) as Record<string, unknown> };
        }
        onEvent(event);
      }
    } catch (error) {
      throw transportError(this.connection.serviceUrl, error);
    }
    throw new CliError(`the service at ${this.connection.serviceUrl} closed the connection before the upload's verdict`);
  }

  private async json<T>(method: string, path: string, body?: unknown, query?: Query): Promise<T> {
    const response = await this.send(method, path, body === undefined ? undefined : JSON.stringify(body), query);
    if (response.status === 204) return undefined as T;
    const text = await response.text().catch((error: unknown) => { throw transportError(this.connection.serviceUrl, error); });
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new CliError(`unexpected answer from ${method} ${path} (HTTP ${response.status}): not JSON`);
    }
  }

  private async send(method: string, path: string, body?: string | FormData, query?: Query): Promise<Response> {
    const url = new URL(this.connection.apiBase + path);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.connection.token) headers.authorization = `Bearer ${this.connection.token}`;
    if (typeof body === 'string') headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(url, { method, headers, body, dispatcher: this.dispatcher });
    } catch (error) {
      throw transportError(this.connection.serviceUrl, error);
    }
    if (response.status >= 400) throw await apiError(response);
    return response;
  }
}

async function apiError(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => '');
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // A proxy's HTML page, say: the status alone then tells the story.
  }
  const fields = (typeof body === 'object' && body !== null ? body : {}) as { detail?: unknown; code?: unknown };
  const detail = typeof fields.detail === 'string' ? fields.detail : response.statusText || 'request failed';
  const code = typeof fields.code === 'string' ? fields.code : `http_${response.status}`;
  return new ApiError(response.status, code, detail, body);
}

/** "fetch failed" says nothing: name the service and the underlying cause (refused, reset, TLS). */
function transportError(serviceUrl: string, error: unknown): CliError {
  if (error instanceof CliError) return error;
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const reason = cause?.code ?? cause?.message ?? (error as Error).message;
  return new CliError(`cannot reach the service at ${serviceUrl}: ${reason}`);
}

function readCaBundle(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read the CA bundle ${path}: ${(error as Error).message}`);
  }
}
