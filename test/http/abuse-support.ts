/**
 * Raw HTTP against the real service for the abuse tests: requests whose path is sent byte for
 * byte (fetch would resolve `..` segments before sending), and exchanges over a bare socket.
 */
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request with `path` exactly as given (already percent-encoded where it must be). */
export function rawRequest(port: number, method: string, path: string, headers: Record<string, string> = {}, body?: string | Buffer): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: { ...headers, ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${path}: no answer in 30 s`)));
    req.end(body);
  });
}

/** What came back on a bare socket: the status line's code (0 when nothing) and the body. */
export interface SocketAnswer {
  status: number;
  /** The status line and headers, as received. */
  head: string;
  body: string;
  /** Milliseconds from the first byte sent until the server closed the connection. */
  closedAfterMs: number;
}

/**
 * Opens a socket, lets `drive` write to it (slowly, partly, or not at all), and resolves when the
 * server closes it (or after `giveUpMs`, then with status 0).
 */
export function socketExchange(port: number, drive: (socket: Socket) => void, giveUpMs = 20_000): Promise<SocketAnswer> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1', () => drive(socket));
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(), giveUpMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // The server may reset a connection it answered and closed while we were still writing.
      if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE') reject(error);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), head, body: rest.join('\r\n\r\n'), closedAfterMs: Date.now() - started });
    });
  });
}
