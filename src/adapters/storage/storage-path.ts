import { DomainError } from '../../domain/errors.js';

const MAX_PATH_CHARS = 1024;
const MAX_SEGMENT_BYTES = 255;

/** Validate a storage path and return its segments; throws DomainError `bad_storage_path`. */
export function checkStoragePath(relPath: string): string[] {
  const bad = (why: string): DomainError =>
    new DomainError('invalid', 'bad_storage_path', `invalid storage path ${JSON.stringify(relPath.slice(0, 200))}: ${why}`);
  if (typeof relPath !== 'string' || relPath === '') throw bad('empty');
  if (relPath.length > MAX_PATH_CHARS) throw bad('too long');
  if (relPath.startsWith('/')) throw bad('absolute');
  if (/[\\\0]/.test(relPath)) throw bad('backslash or NUL');
  const segments = relPath.split('/');
  for (const s of segments) {
    if (s === '' || s === '.' || s === '..') throw bad('empty, . or .. segment');
    if (Buffer.byteLength(s) > MAX_SEGMENT_BYTES) throw bad('segment too long');
  }
  return segments;
}
