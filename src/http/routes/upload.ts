import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { isOutOfSpace } from '../../adapters/db/unavailable.js';
import { hashStream, type HashedTempFile } from '../../adapters/storage/hash-stream.js';
import { findDistribution } from '../../domain/distributions.js';
import { DomainError } from '../../domain/errors.js';
import { UploadResultSchema } from '../../domain/pipeline/upload-result.js';
import { INSPECTED_HEAD_BYTES } from '../../services/formats/index.js';
import type { StepName, StepResult } from '../../domain/pipeline/types.js';
import type { AppContext } from '../../services/context.js';
import type { UploadAnswer } from '../../services/upload.js';
import { principalOf } from '../auth-hook.js';
import { UploadTiming } from '../upload-timing.js';
import { badRequest, HttpError, toErrorAnswer, unprocessable } from '../errors.js';
import { ErrorBody, errorResponses } from '../schemas.js';
import type { App } from '../types.js';

const SHA256 = /^[0-9a-fA-F]{64}$/;
/** File parts a source upload may add to its .dsc or .changes (field `files`). */
export const MAX_SOURCE_FILES = 16;

/**
 * The multipart parser fails with plain Errors ("Unexpected end of multipart data", "Malformed
 * part header"): a broken body is the client's fault, a 400, never a 500. Errors that already
 * carry an answer (size limits, domain errors) pass through, and so does a full disk while the
 * file is written (the server's condition, not the client's fault).
 */
function asClientError(error: unknown): unknown {
  if (error instanceof HttpError || error instanceof DomainError) return error;
  if (isOutOfSpace(error)) return error;
  const e = error as { code?: unknown; statusCode?: unknown; message?: unknown };
  if (typeof e?.code === 'string' && e.code.startsWith('FST_')) return error;
  if (typeof e?.statusCode === 'number' && e.statusCode < 500) return error;
  return badRequest('malformed_multipart', `Malformed multipart body: ${typeof e?.message === 'string' ? e.message : 'unreadable'}`);
}

interface ParsedUpload {
  file: HashedTempFile;
  distribution: string;
  /** APT component (default: the distribution's first). */
  component: string | null;
  sha256: string | null;
  /** A source package's other files (parts named `files`), with the name each part was sent under. */
  sourceFiles: Array<{ name: string; file: HashedTempFile }>;
}

/**
 * Reads the multipart form: the file streams to a temp file while its digests are computed (it
 * never sits in memory); the client's file name is ignored.
 */
async function readUploadForm(request: FastifyRequest, ctx: AppContext): Promise<ParsedUpload> {
  if (!request.isMultipart()) throw unprocessable('multipart_required', 'Send a multipart/form-data body with `file` and `distribution`');
  let file: HashedTempFile | null = null;
  const sourceFiles: ParsedUpload['sourceFiles'] = [];
  const fields: Record<string, string> = {};
  const discardAll = async () => {
    if (file) await ctx.repo.files.discard(file.path);
    for (const f of sourceFiles) await ctx.repo.files.discard(f.file.path);
  };
  // MAX_UPLOAD_MB bounds the whole upload, however many files it has.
  let budget = ctx.config.maxUploadBytes;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        const isSourceFile = part.fieldname === 'files' || part.fieldname === 'files[]';
        if ((part.fieldname !== 'file' || file) && !isSourceFile) {
          part.file.resume();
          continue;
        }
        // Refused the moment the limit is passed: without this the parser drops the excess but
        // waits for the client to send all of it (up to the request timeout) before the 413.
        part.file.once('limit', () => part.file.destroy(Object.assign(new Error('file too large'), { code: 'FST_REQ_FILE_TOO_LARGE' })));
        // Its fsync runs in the background while the pipeline reads it; admission waits for it.
        const received = await hashStream(part.file, { tempDir: ctx.repo.files.tempDir, maxBytes: budget, sync: 'background', keepHead: INSPECTED_HEAD_BYTES });
        if (isSourceFile) sourceFiles.push({ name: part.filename ?? '', file: received });
        else file = received;
        budget -= received.size;
        if (part.file.truncated) throw Object.assign(new Error('file too large'), { code: 'FST_REQ_FILE_TOO_LARGE' });
      } else if (typeof part.value === 'string') {
        fields[part.fieldname] = part.value;
      }
    }
  } catch (error) {
    await discardAll();
    throw asClientError(error);
  }
  const problems: Array<{ loc: string[]; msg: string }> = [];
  if (!file) problems.push({ loc: ['body', 'file'], msg: 'a package file is required' });
  if (!fields.distribution) problems.push({ loc: ['body', 'distribution'], msg: 'a distribution codename is required' });
  if (fields.sha256 && !SHA256.test(fields.sha256)) problems.push({ loc: ['body', 'sha256'], msg: 'must be 64 hex digits' });
  if (problems.length) {
    await discardAll();
    throw unprocessable('validation_error', problems.map((p) => `${p.loc.join('.')}: ${p.msg}`).join('; '), problems);
  }
  if (!findDistribution(fields.distribution!)) {
    // Checked here too (the service checks again) so that /upload/stream answers a plain 4xx before its stream starts.
    await discardAll();
    throw new DomainError('invalid', 'unknown_distribution', `Unknown distribution ${fields.distribution}`);
  }
  return { file: file!, distribution: fields.distribution!, component: fields.component || null, sha256: fields.sha256 ?? null, sourceFiles };
}

function sse(reply: FastifyReply, event: string, data: unknown): void {
  reply.raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

export async function uploadRoutes(app: App, ctx: AppContext): Promise<void> {
  const run = async (request: FastifyRequest, timing: UploadTiming): Promise<UploadAnswer> => {
    const principal = principalOf(request);
    const form = await readUploadForm(request, ctx);
    timing.received();
    return ctx.repo.uploads.upload(
      { distribution: form.distribution, component: form.component, file: form.file, sourceFiles: form.sourceFiles, claimedSha256: form.sha256, user: principal.user.username, ip: request.ip },
      timing,
    );
  };

  app.post('/upload', {
    schema: {
      tags: ['upload'],
      summary: 'Upload a .deb or .rpm, or a source package (.dsc or .changes as `file`, the files it names as `files` parts) (multipart: file, distribution, optional component and sha256) through the validation pipeline',
      consumes: ['multipart/form-data'],
      response: { ...errorResponses, 200: UploadResultSchema, 201: UploadResultSchema, 422: Type.Union([UploadResultSchema, ErrorBody]) },
    },
  }, async (request, reply) => {
    const timing = new UploadTiming();
    const answer = await run(request, timing);
    return reply.status(answer.httpStatus).header('server-timing', timing.header()).send(answer.body);
  });

  app.post('/upload/stream', {
    schema: {
      tags: ['upload'],
      summary: 'Same as /upload, answered as Server-Sent Events: `step` events as each step starts and ends, then `result` (or `error`)',
      consumes: ['multipart/form-data'],
    },
  }, async (request, reply) => {
    // The form is read (and validated) before the stream starts, so bad input still gets a plain 4xx.
    const principal = principalOf(request);
    const form = await readUploadForm(request, ctx);
    reply.hijack();
    reply.raw.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-request-id': request.id });
    const observer = {
      stepStarted: (name: StepName) => sse(reply, 'step', { step: name, state: 'started' }),
      stepFinished: (r: StepResult) => sse(reply, 'step', { step: r.name, state: 'finished', status: r.status, message: r.message, value: r.value }),
    };
    try {
      const answer = await ctx.repo.uploads.upload(
        { distribution: form.distribution, component: form.component, file: form.file, sourceFiles: form.sourceFiles, claimedSha256: form.sha256, user: principal.user.username, ip: request.ip },
        observer,
      );
      await ctx.durable();
      sse(reply, 'result', { http_status: answer.httpStatus, ...answer.body });
    } catch (error) {
      const answer = toErrorAnswer(error);
      if (answer.status >= 500) request.log.error({ err: error }, 'streamed upload failed');
      sse(reply, 'error', { http_status: answer.status, ...answer.body });
    }
    reply.raw.end();
  });
}
