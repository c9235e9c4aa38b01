import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable, isOutOfSpace } from '../adapters/db/unavailable.js';
import { DomainError, type DomainErrorKind } from '../domain/errors.js';

/** An error that already knows its HTTP answer. Body, as for every status >= 400: {detail, code, ...extra}. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'HttpError';
  }
}

export const notFound = (what: string, code = 'not_found') => new HttpError(404, code, `${what} not found`);
export const badRequest = (code: string, detail: string) => new HttpError(400, code, detail);
export const unprocessable = (code: string, detail: string, errors?: Array<{ loc: string[]; msg: string }>) =>
  new HttpError(422, code, detail, errors ? { errors } : {});
export const conflict = (code: string, detail: string, extra: Record<string, unknown> = {}) =>
  new HttpError(409, code, detail, extra);
export const forbidden = (detail = 'Your role does not allow this action') => new HttpError(403, 'forbidden', detail);
export const unauthorized = (detail = 'Not authenticated', code = 'not_authenticated') =>
  new HttpError(401, code, detail, {}, { 'WWW-Authenticate': 'Bearer' });
export const tooManyRequests = (retryAfterSeconds: number, detail = 'Too many requests', code = 'rate_limited') =>
  new HttpError(429, code, detail, { retry_after: retryAfterSeconds }, { 'Retry-After': String(retryAfterSeconds) });

const STATUS_OF_KIND: Record<DomainErrorKind, number> = {
  invalid: 422,
  not_found: 404,
  conflict: 409,
  forbidden: 403,
  unavailable: 503,
  too_large: 413,
};

interface ErrorAnswer {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string>;
}

function ajvLocation(instancePath: string, httpPart: string | undefined, missing?: string): string[] {
  const parts = instancePath.split('/').filter(Boolean);
  if (missing) parts.push(missing);
  return [httpPart ?? 'body', ...parts];
}

/** The one mapping from anything thrown to the error body; 5xx details never leave the process. */
export function toErrorAnswer(error: unknown): ErrorAnswer {
  if (error instanceof HttpError) {
    return { status: error.status, body: { detail: error.message, code: error.code, ...error.extra }, headers: error.headers };
  }
  if (error instanceof DomainError) {
    return {
      status: STATUS_OF_KIND[error.kind],
      body: { detail: error.message, code: error.code, ...error.extra },
      headers: {},
    };
  }
  const fe = error as FastifyError & { validationContext?: string };
  if (fe && Array.isArray(fe.validation)) {
    const errors = fe.validation.map((v) => {
      const params = v.params as Record<string, unknown> | undefined;
      const missing = typeof params?.missingProperty === 'string' ? params.missingProperty : undefined;
      const extra = typeof params?.additionalProperty === 'string' ? params.additionalProperty : undefined;
      const loc = ajvLocation(v.instancePath ?? '', fe.validationContext, missing ?? extra);
      const msg = extra ? 'unknown field' : (v.message ?? 'invalid value');
      return { loc, msg };
    });
    const first = errors[0];
    const detail = first ? `${first.loc.join('.')}: ${first.msg}` : 'Invalid request';
    return { status: 422, body: { detail, code: 'validation_error', errors }, headers: {} };
  }
  switch (fe?.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, body: { detail: 'Malformed JSON body', code: 'malformed_json' }, headers: {} };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
    case 'FST_FILES_LIMIT':
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return { status: 413, body: { detail: 'Request body too large', code: 'body_too_large' }, headers: {} };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, body: { detail: 'Unsupported content type', code: 'unsupported_media_type' }, headers: {} };
    case 'FST_ERR_BAD_URL':
      return { status: 400, body: { detail: 'The URL is not valid percent-encoding', code: 'invalid_path' }, headers: {} };
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return { status: 400, body: { detail: 'Expected a multipart/form-data body', code: 'multipart_required' }, headers: {} };
    default:
      break;
  }
  // A full disk or an unreachable database is a condition of the server, not a bug in it: the
  // client may retry later, and what failed was rolled back (nothing half-stored is kept).
  if (isOutOfSpace(error)) {
    return { status: 507, body: { detail: 'The server has run out of storage space; nothing was stored', code: 'insufficient_storage' }, headers: {} };
  }
  if (isDatabaseUnavailable(error)) {
    return { status: 503, body: { detail: 'The database is not available; retry later', code: 'database_unavailable' }, headers: { 'Retry-After': '5' } };
  }
  if (error instanceof SyntaxError) {
    return { status: 400, body: { detail: 'Malformed request body', code: 'malformed_body' }, headers: {} };
  }
  const status = typeof fe?.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500 ? fe.statusCode : 500;
  if (status < 500) {
    return { status, body: { detail: fe.message || 'Bad request', code: 'bad_request' }, headers: {} };
  }
  return { status: 500, body: { detail: 'Internal server error', code: 'internal_error' }, headers: {} };
}

/** Fastify's `frameworkErrors` option: errors raised before routing (a malformed URL) get the same body. */
export function frameworkErrorAnswer(error: unknown, _request: FastifyRequest, reply: FastifyReply): void {
  const answer = toErrorAnswer(error);
  void reply.status(answer.status).headers(answer.headers).send(answer.body);
}

/** Errors the HTTP parser raises before a request exists (oversized headers, garbage, timeouts). */
const CLIENT_ERRORS: Record<string, { status: number; detail: string; code: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, detail: 'Request header fields too large', code: 'headers_too_large' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, detail: 'The request was not received in time', code: 'request_timeout' },
};

/**
 * Fastify's `clientErrorHandler`: answers with the same error body as everything else, then
 * closes the connection (the parser cannot continue on it).
 */
export function clientErrorAnswer(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const answer = CLIENT_ERRORS[error.code ?? ''] ?? { status: 400, detail: 'Malformed HTTP request', code: 'malformed_request' };
  const body = JSON.stringify({ detail: answer.detail, code: answer.code });
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy(error);
}

export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const answer = toErrorAnswer(error);
    if (answer.status >= 500) request.log.error({ err: error }, 'request failed');
    else request.log.debug({ code: answer.body.code }, 'request refused');
    // Refused before its body was read to the end (too large, a full disk mid-upload): the rest
    // of the body would stall the connection, and the client's next request on it would hang
    // until the keep-alive timeout. Close it once this answer is sent.
    if (!request.raw.complete) void reply.header('connection', 'close');
    void reply.status(answer.status).headers(answer.headers).send(answer.body);
  });
  app.setNotFoundHandler((request, reply) => {
    void reply.status(404).send({ detail: `No route ${request.method} ${request.url.split('?')[0]}`, code: 'not_found' });
  });
}
