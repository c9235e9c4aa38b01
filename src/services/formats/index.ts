import type { PackageFormat } from '../../domain/distributions.js';
import { debHandler } from './deb.js';
import { rpmHandler } from './rpm.js';
import type { FormatHandler } from './types.js';

const HANDLERS: Record<PackageFormat, FormatHandler> = { deb: debHandler, rpm: rpmHandler };

export const handlerFor = (format: PackageFormat): FormatHandler => HANDLERS[format];

/** The format a file's first bytes announce, or null. */
export function sniffFormat(head: Buffer): PackageFormat | null {
  if (head.subarray(0, 8).toString('latin1') === '!<arch>\n') return 'deb';
  if (head.length >= 4 && head[0] === 0xed && head[1] === 0xab && head[2] === 0xee && head[3] === 0xdb) return 'rpm';
  return null;
}
