/**
 * A local HTTP server that records webhook deliveries (raw body + headers) for tests. It can
 * answer the first N requests with an error status, or leave them hanging to exercise timeouts.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';

export interface ReceivedWebhook {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The exact bytes received (signatures are computed over these). */
  body: Buffer;
  /** What the receiver answered: a status, or `hung` when it never answered. */
  answer: number | 'hung';
}

export interface WebhookReceiverOptions {
  /** Answer the first N requests with `failStatus` (default 500). */
  failFirst?: number;
  failStatus?: number;
  /** Never answer the first N requests (checked before failFirst). */
  hangFirst?: number;
  /** Status for the remaining requests (default 204). */
  okStatus?: number;
}

export interface WebhookReceiver {
  /** Base URL, e.g. `http://127.0.0.1:40123/hook`. */
  url: string;
  requests: ReceivedWebhook[];
  /** Parsed JSON body of request `index`. */
  json(index: number): unknown;
  close(): Promise<void>;
}

const MAX_BODY = 1024 * 1024;

/** Starts the receiver on 127.0.0.1 with a free port. */
export async function startWebhookReceiver(options: WebhookReceiverOptions = {}): Promise<WebhookReceiver> {
  const requests: ReceivedWebhook[] = [];
  let seen = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) req.destroy();
      else chunks.push(chunk);
    });
    req.on('end', () => {
      const index = seen++;
      const hang = index < (options.hangFirst ?? 0);
      const fail = !hang && index - (options.hangFirst ?? 0) < (options.failFirst ?? 0);
      const status = fail ? (options.failStatus ?? 500) : (options.okStatus ?? 204);
      requests.push({
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
        answer: hang ? 'hung' : status,
      });
      if (hang) return;
      res.writeHead(status, { 'Content-Type': 'text/plain' });
      res.end(fail ? 'failure for the test' : '');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('webhook receiver has no TCP address');
  return {
    url: `http://127.0.0.1:${address.port}/hook`,
    requests,
    json: (index: number) => JSON.parse((requests[index]?.body ?? Buffer.from('null')).toString('utf8')) as unknown,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
