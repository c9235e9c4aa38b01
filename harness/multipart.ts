import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';

/** A multipart/form-data body for app.inject or fetch: text fields and one file. */
export async function multipartBody(fields: Record<string, string>, file?: { field?: string; path: string; filename?: string }) {
  const boundary = `----tollgate${randomBytes(8).toString('hex')}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  if (file) {
    const data = await readFile(file.path);
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${file.field ?? 'file'}"; filename="${file.filename ?? 'package'}"\r\nContent-Type: application/octet-stream\r\n\r\n`));
    parts.push(data, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}
