/**
 * Hostile requests against the real service, over bare sockets where a client library would
 * refuse to send them: oversized and countless headers, oversized bodies (declared and sent),
 * a multipart with thousands of parts, a body that stalls mid-stream, a client that disconnects
 * mid-upload, slow headers (slowloris), broken chunked encoding. Each gets a clear 4xx with the
 * error body (or, for a client that left, nothing), never a 5xx; the service keeps serving, no
 * connection is held past the configured timeouts, and no temp file is left.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildDeb } from '../../harness/debs.js';
import { multipartBody } from '../../harness/multipart.js';
import { waitFor } from '../../harness/service.js';
import { assertErrorBody } from '../helpers/errors.js';
import { makeTempDir } from '../helpers/tmp.js';
import { adminToken, leftoverTempFiles, startService, waitUpToDate, type RunningService } from '../faults/support.js';
import { rawRequest, socketExchange, type SocketAnswer } from './abuse-support.js';

const HEADERS_TIMEOUT_S = 2;
const REQUEST_TIMEOUT_S = 3;

describe('hostile bodies, headers and connections (real service)', () => {
  let work: { dir: string; cleanup: () => Promise<void> };
  let service: RunningService;
  let token: string;
  let dataDir: string;
  const tried: string[] = [];

  before(async () => {
    work = await makeTempDir('tollgate-abuse-bodies-');
    dataDir = join(work.dir, 'data');
    service = await startService(dataDir, {
      MAX_UPLOAD_MB: '1',
      HTTP_HEADERS_TIMEOUT_SECONDS: String(HEADERS_TIMEOUT_S),
      HTTP_REQUEST_TIMEOUT_SECONDS: String(REQUEST_TIMEOUT_S),
    });
    token = await adminToken(service.base, dataDir);
    // The first start publishes every distribution: let those writes finish before temp files are counted.
    await waitUpToDate(service.base, token);
  });
  after(async () => {
    await service?.kill();
    await work?.cleanup();
    console.log(`abuse bodies: ${tried.length} hostile requests: ${tried.join(', ')}`);
  });

  const expectError = (answer: { status: number; body: string }, status: number, code: string, what: string) => {
    tried.push(what);
    assert.equal(answer.status, status, `${what}: ${answer.status} ${answer.body.slice(0, 300)}`);
    assert.equal(assertErrorBody(status, answer.body, what).code, code, what);
  };
  const stillServing = async () => {
    assert.equal(service.exited(), false, service.output());
    assert.equal((await fetch(`${service.base}/health/live`)).status, 200);
  };
  const noTempFiles = async () => {
    await waitFor(async () => (await readdir(join(dataDir, 'tmp'))).length === 0, 'the upload temp files to go', 5000);
    assert.deepEqual(await leftoverTempFiles(dataDir), []);
  };
  const send = (bytes: string | Buffer) => (s: import('node:net').Socket) => s.write(bytes);
  const uploadHead = (boundary: string, length: number) =>
    `POST /upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${length}\r\n\r\n`;

  it('answers oversized and countless headers with 431', async () => {
    expectError(await socketExchange(service.port, send(`GET /health/live HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`)), 431, 'headers_too_large', 'one 64 KiB header');
    const many = Array.from({ length: 3000 }, (_, i) => `X-H${i}: v`).join('\r\n');
    expectError(await socketExchange(service.port, send(`GET /health/live HTTP/1.1\r\nHost: x\r\n${many}\r\n\r\n`)), 431, 'headers_too_large', '3,000 headers');
    expectError(await socketExchange(service.port, send(`GET /${'a'.repeat(80 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`)), 431, 'headers_too_large', 'an 80 KiB URL');
    await stillServing();
  });

  it('answers oversized bodies with 413, whether declared or sent, and closes the connection', async () => {
    // Written whole over a bare socket: the server answers and closes before the client is done.
    const jsonBody = JSON.stringify({ username: 'admin', password: 'x'.repeat(2 * 1024 * 1024) });
    const json = await socketExchange(service.port, send(`POST /auth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${jsonBody.length}\r\n\r\n${jsonBody}`));
    expectError(json, 413, 'body_too_large', 'a 2 MiB JSON body');
    const declared = await socketExchange(service.port, send(`POST /auth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10737418240\r\n\r\n{"a":1}`));
    expectError(declared, 413, 'body_too_large', 'a declared 10 GiB JSON body');
    const deb = await buildDeb(work.dir, { name: 'too-big', version: '1.0', compression: 'none', files: { 'usr/share/too-big/blob': randomBytes(2 * 1024 * 1024) } });
    const form = await multipartBody({ distribution: 'jammy' }, { path: deb });
    const upload = await socketExchange(service.port, (s) => {
      s.write(`POST /upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: ${form.headers['content-type']}\r\nContent-Length: ${form.payload.length}\r\nConnection: close\r\n\r\n`);
      s.write(form.payload);
    });
    expectError(upload, 413, 'body_too_large', 'an upload over MAX_UPLOAD_MB');
    // Refused before the client sent the rest (1.5 of 3 MiB so far): the connection is closed at
    // once rather than left stalled with the unread rest until a timeout.
    const partial = await socketExchange(service.port, (s) => {
      s.write(`POST /upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: ${form.headers['content-type']}\r\nContent-Length: ${3 * 1024 * 1024}\r\n\r\n`);
      s.write(form.payload.subarray(0, 1536 * 1024));
    });
    expectError(partial, 413, 'body_too_large', 'an upload over MAX_UPLOAD_MB, refused while it is being sent');
    assert.match(partial.head, /^connection: close$/im, 'the connection with the unread rest is closed');
    assert.ok(partial.closedAfterMs < REQUEST_TIMEOUT_S * 1000, `closed after ${partial.closedAfterMs} ms`);
    await stillServing();
    await noTempFiles();
  });

  it('refuses a multipart body with thousands of parts or an oversized field', async () => {
    const boundary = 'abuse-boundary';
    const parts = Array.from({ length: 5000 }, (_, i) => `--${boundary}\r\nContent-Disposition: form-data; name="f${i}"\r\n\r\nv\r\n`).join('');
    const body = `${parts}--${boundary}--\r\n`;
    const many = await rawRequest(service.port, 'POST', '/upload', { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}` }, body);
    expectError(many, 413, 'body_too_large', 'a multipart of 5,000 fields');
    const files = Array.from({ length: 2000 }, (_, i) => `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="p${i}.deb"\r\nContent-Type: application/octet-stream\r\n\r\nxx\r\n`).join('');
    const manyFiles = await rawRequest(service.port, 'POST', '/upload', { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}` }, `${files}--${boundary}--\r\n`);
    assert.ok(manyFiles.status >= 400 && manyFiles.status < 500, `2,000 file parts: ${manyFiles.status} ${manyFiles.body}`);
    assertErrorBody(manyFiles.status, manyFiles.body, '2,000 file parts');
    tried.push('a multipart of 2,000 files');
    const bigField = `--${boundary}\r\nContent-Disposition: form-data; name="distribution"\r\n\r\n${'j'.repeat(512 * 1024)}\r\n--${boundary}--\r\n`;
    const field = await rawRequest(service.port, 'POST', '/upload', { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}` }, bigField);
    assert.ok(field.status >= 400 && field.status < 500, `512 KiB field: ${field.status} ${field.body}`);
    assertErrorBody(field.status, field.body, 'a 512 KiB field');
    tried.push('a 512 KiB form field');
    const unterminated = await rawRequest(service.port, 'POST', '/upload', { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}` }, `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="x"\r\n\r\nabc`);
    assert.ok(unterminated.status >= 400 && unterminated.status < 500, `unterminated multipart: ${unterminated.status} ${unterminated.body}`);
    assertErrorBody(unterminated.status, unterminated.body, 'unterminated multipart');
    tried.push('a multipart without its closing boundary');
    await stillServing();
    await noTempFiles();
  });

  it('answers a body that stalls mid-stream with 408 within the request timeout and keeps nothing of it', async () => {
    const boundary = 'stall-boundary';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="distribution"\r\n\r\njammy\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="x.deb"\r\nContent-Type: application/octet-stream\r\n\r\n`;
    const answer: SocketAnswer = await socketExchange(service.port, (s) => {
      s.write(uploadHead(boundary, 900 * 1024));
      s.write(head);
      s.write(randomBytes(100 * 1024));
      // ...and nothing more: the client hangs with 800 KiB still announced.
    });
    expectError(answer, 408, 'request_timeout', 'a body that stalls after 100 of 900 KiB');
    assert.ok(answer.closedAfterMs < (REQUEST_TIMEOUT_S + 3) * 1000, `the stalled connection was held ${answer.closedAfterMs} ms`);
    await stillServing();
    await noTempFiles();
  });

  it('forgets an upload whose client disconnects mid-stream', async () => {
    const boundary = 'gone-boundary';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="distribution"\r\n\r\njammy\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="x.deb"\r\n\r\n`;
    const answer = await socketExchange(service.port, (s) => {
      s.write(uploadHead(boundary, 900 * 1024));
      s.write(head);
      s.write(randomBytes(300 * 1024), () => setTimeout(() => s.destroy(), 200));
    });
    tried.push('a client that disconnects after 300 of 900 KiB');
    assert.equal(answer.status, 0, 'nobody is left to answer');
    await stillServing();
    await noTempFiles();
  });

  it('closes a slowloris connection (headers one byte at a time) with 408 after the headers timeout', async () => {
    const answer = await socketExchange(service.port, (s) => {
      s.write('GET /health/live HTTP/1.1\r\nHost: x\r\n');
      const drip = setInterval(() => {
        if (s.destroyed) clearInterval(drip);
        else s.write('X');
      }, 300);
      s.on('close', () => clearInterval(drip));
    });
    expectError(answer, 408, 'request_timeout', 'slowloris headers');
    assert.ok(answer.closedAfterMs < (HEADERS_TIMEOUT_S + 3) * 1000, `the slow client was held ${answer.closedAfterMs} ms`);
    await stillServing();
  });

  it('answers broken chunked encoding and conflicting lengths with 400', async () => {
    const chunked = await socketExchange(service.port, send('POST /auth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n'));
    expectError(chunked, 400, 'malformed_request', 'a chunk size that is not hex');
    const both = await socketExchange(service.port, send('POST /auth/token HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n'));
    expectError(both, 400, 'malformed_request', 'Content-Length with Transfer-Encoding (request smuggling)');
    const twoLengths = await socketExchange(service.port, send('POST /auth/token HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 20\r\n\r\n{}'));
    expectError(twoLengths, 400, 'malformed_request', 'two Content-Length headers');
    await stillServing();
  });
});
