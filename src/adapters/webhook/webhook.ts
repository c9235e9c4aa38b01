/**
 * Outgoing webhook: POST JSON `{event, timestamp, data}` signed with HMAC-SHA256 over the exact
 * body bytes. Delivery never throws: the caller logs and counts the result and
 * must not block the request that caused it.
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';

/** The events Tollgate sends. */
export const WEBHOOK_EVENTS = ['package.pending_review', 'package.decision', 'sla.warning', 'risk.expired', 'test'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export interface WebhookRequest {
  url: string;
  /** HMAC key; when null or empty the signature header is left out. */
  secret: string | null;
  event: WebhookEvent;
  data: Record<string, unknown>;
  /** Limit per attempt, headers and body included (default 5000 ms). */
  timeoutMs?: number;
  /** Attempts in total (default 3). */
  tries?: number;
  /** Wait before the 2nd attempt; doubled for each later one (default 1000 ms). */
  backoffMs?: number;
  /** Clock for the payload timestamp (tests). */
  now?: () => Date;
}

export interface WebhookResult {
  ok: boolean;
  /** HTTP status of the last attempt, when one answered. */
  status?: number;
  attempts: number;
  /** Why the delivery failed (last attempt). */
  error?: string;
  /** Same value on every attempt of one delivery, sent as `X-Tollgate-Delivery`. */
  deliveryId: string;
}

export const SIGNATURE_HEADER = 'X-Tollgate-Signature';
export const EVENT_HEADER = 'X-Tollgate-Event';
export const DELIVERY_HEADER = 'X-Tollgate-Delivery';

/** `sha256=<hex HMAC-SHA256 of body>`, the value of X-Tollgate-Signature. */
export function signWebhookBody(body: string | Uint8Array, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Checks an X-Tollgate-Signature header against the raw body, in constant time. */
export function verifyWebhookSignature(body: string | Uint8Array, header: string | null | undefined, secret: string): boolean {
  if (typeof header !== 'string' || !header.startsWith('sha256=')) return false;
  const expected = Buffer.from(signWebhookBody(body, secret));
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Sends one event with retries on network errors, timeouts, 429 and 5xx; never throws. */
export async function sendWebhook(request: WebhookRequest): Promise<WebhookResult> {
  const deliveryId = randomUUID();
  const tries = Math.max(1, Math.floor(request.tries ?? 3));
  const timeoutMs = request.timeoutMs ?? 5000;
  const backoffMs = request.backoffMs ?? 1000;

  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return { ok: false, attempts: 0, error: 'invalid webhook URL', deliveryId };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { ok: false, attempts: 0, error: `unsupported webhook URL scheme ${url.protocol}`, deliveryId };
  }

  const body = JSON.stringify({
    event: request.event,
    timestamp: (request.now?.() ?? new Date()).toISOString(),
    data: request.data,
  });
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'User-Agent': 'Tollgate',
    [EVENT_HEADER]: request.event,
    [DELIVERY_HEADER]: deliveryId,
  };
  if (request.secret) headers[SIGNATURE_HEADER] = signWebhookBody(body, request.secret);

  let last: Omit<WebhookResult, 'attempts' | 'deliveryId'> = { ok: false, error: 'not sent' };
  for (let attempt = 1; attempt <= tries; attempt++) {
    const outcome = await attemptOnce(url, headers, body, timeoutMs);
    last = outcome.result;
    if (last.ok || !outcome.retryable || attempt === tries) return { ...last, attempts: attempt, deliveryId };
    await delay(backoffMs * 2 ** (attempt - 1));
  }
  return { ...last, attempts: tries, deliveryId };
}

interface Attempt {
  result: Omit<WebhookResult, 'attempts' | 'deliveryId'>;
  retryable: boolean;
}

async function attemptOnce(url: URL, headers: Record<string, string>, body: string, timeoutMs: number): Promise<Attempt> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    // Redirects are not followed: the receiver is configured by an admin and must answer itself.
    const response = await fetch(url, { method: 'POST', headers, body, redirect: 'manual', signal });
    // The answer's body is of no use; release the connection without reading an unbounded amount.
    await response.body?.cancel().catch(() => undefined);
    const status = response.status;
    if (status >= 200 && status < 300) return { result: { ok: true, status }, retryable: false };
    return {
      result: { ok: false, status, error: `receiver answered HTTP ${status}` },
      retryable: status >= 500 || status === 429,
    };
  } catch (err) {
    const error = signal.aborted ? `no answer within ${timeoutMs} ms` : describeNetworkError(err);
    return { result: { ok: false, error }, retryable: true };
  }
}

/** fetch() hides the useful part (ECONNREFUSED, ENOTFOUND…) in `cause`. */
function describeNetworkError(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as Error & { cause?: unknown }).cause;
    if (cause instanceof Error) return `${err.message}: ${cause.message}`;
    return err.message;
  }
  return String(err);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
