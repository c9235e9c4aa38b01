import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';

type FilePart = { field?: string; path: string; filename?: string };

/**
 * A multipart/form-data body for app.inject or fetch: text fields and one file, then any more
 * file parts (a source package's files, sent as `files` under their names).
 */
export async function multipartBody(fields: Record<string, string>, file?: FilePart, more: readonly FilePart[] = []) {
  const boundary = `----tollgate${randomBytes(8).toString('hex')}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  for (const [i, part] of [...(file ? [file] : []), ...more].entries()) {
    const data = await readFile(part.path);
    const field = part.field ?? (i === 0 && file ? 'file' : 'files');
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${part.filename ?? 'package'}"\r\nContent-Type: application/octet-stream\r\n\r\n`));
    parts.push(data, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}
