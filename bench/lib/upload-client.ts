/**
 * The benchmarks' upload clients: multipart POSTs over node:http with kept-alive connections.
 *
 * The load generator shares the machine's two cores with the service. `fetch` (undici's WHATWG
 * layer, FormData, Blob streams) cost the clients 3–4 ms of CPU per tiny upload here, a third of
 * what the service itself spent, so the figures measured the clients as much as the service; a
 * plain request with a prebuilt body costs a fraction of that. `--client fetch` in the benches
 * keeps the old clients, for figures taken before 2026-11-29 (sixth session).
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, openAsBlob } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { basename } from 'node:path';
import { Readable } from 'node:stream';

export interface UploadAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export type ClientKind = 'http' | 'fetch';

/** `--client fetch|http` (default http). */
export function clientKindArg(argv = process.argv): ClientKind {
  const i = argv.indexOf('--client');
  const kind = i >= 0 ? argv[i + 1] : 'http';
  if (kind !== 'http' && kind !== 'fetch') throw new Error(`--client must be http or fetch, not ${kind}`);
  return kind;
}

interface Multipart {
  /** Everything before the file's bytes, and after them. */
  head: Buffer;
  tail: Buffer;
  contentType: string;
}

function multipart(fields: Record<string, string>, filename: string): Multipart {
  const boundary = `----tollgate${randomBytes(8).toString('hex')}`;
  const head = [
    ...Object.entries(fields).map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`),
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  ].join('');
  return { head: Buffer.from(head), tail: Buffer.from(`\r\n--${boundary}--\r\n`), contentType: `multipart/form-data; boundary=${boundary}` };
}

export class UploadClient {
  private readonly agent: Agent;
  private readonly url: URL;

  /** `connections`: one per concurrent client, kept open between uploads. */
  constructor(base: string, connections: number, private readonly kind: ClientKind = 'http') {
    this.url = new URL('/upload', base);
    this.agent = new Agent({ keepAlive: true, maxSockets: connections });
  }

  /**
   * Uploads one package file with these form fields. `stream`: the file is read as it is sent (real
   * packages, up to hundreds of MB) instead of read whole first (tiny ones).
   */
  async upload(path: string, fields: Record<string, string>, headers: Record<string, string> = {}, stream = false): Promise<UploadAnswer> {
    if (this.kind === 'fetch') return this.viaFetch(path, fields, headers, stream);
    const form = multipart(fields, basename(path));
    const size = (await stat(path)).size;
    const body: Buffer | Readable = stream
      ? Readable.from((async function* () {
          yield form.head;
          yield* createReadStream(path, { highWaterMark: 1024 * 1024 });
          yield form.tail;
        })())
      : Buffer.concat([form.head, await readFile(path), form.tail]);
    return new Promise((resolve, reject) => {
      const req = request(this.url, {
        method: 'POST',
        agent: this.agent,
        headers: { ...headers, 'content-type': form.contentType, 'content-length': form.head.length + size + form.tail.length },
      }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('error', reject);
      if (Buffer.isBuffer(body)) req.end(body);
      else body.on('error', (error) => req.destroy(error)).pipe(req);
    });
  }

  /** The clients the figures before 2026-11-29 (sixth session) were taken with. */
  private async viaFetch(path: string, fields: Record<string, string>, headers: Record<string, string>, stream: boolean): Promise<UploadAnswer> {
    let res: Response;
    if (stream) {
      const form = new FormData();
      for (const [name, value] of Object.entries(fields)) form.set(name, value);
      form.set('file', await openAsBlob(path), basename(path));
      res = await fetch(this.url, { method: 'POST', headers, body: form });
    } else {
      const form = multipart(fields, basename(path));
      res = await fetch(this.url, { method: 'POST', headers: { ...headers, 'content-type': form.contentType }, body: Buffer.concat([form.head, await readFile(path), form.tail]) });
    }
    return { status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() };
  }

  close(): void {
    this.agent.destroy();
  }
}
