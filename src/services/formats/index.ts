import type { PackageFormat } from '../../domain/distributions.js';
import type { InspectedPackage } from '../../domain/package.js';
import { debHandler } from './deb.js';
import { AR_PREFIX_BYTES } from '../../domain/deb/ar.js';
import { rpmHandler } from './rpm.js';
import type { FormatHandler } from './types.js';

/** Typed per format, so a handler can only be filed under the format whose packages it reads. */
const HANDLERS: { [F in PackageFormat]: FormatHandler<Extract<InspectedPackage, { format: F }>> } = { deb: debHandler, rpm: rpmHandler };

/**
 * The handler of a format. Its methods accept any package but read their own format's fields:
 * callers pick it by the package's own `format`, or by the distribution's for that distribution's rows.
 */
export const handlerFor = (format: PackageFormat): FormatHandler => HANDLERS[format];

/** How much of an upload the receiving keeps in memory for the format step (a tiny .deb whole, a real one's control part). */
export const INSPECTED_HEAD_BYTES = AR_PREFIX_BYTES;

/** The format a file's first bytes announce, or null. */
export function sniffFormat(head: Buffer): PackageFormat | null {
  if (head.subarray(0, 8).toString('latin1') === '!<arch>\n') return 'deb';
  if (head.length >= 4 && head[0] === 0xed && head[1] === 0xab && head[2] === 0xee && head[3] === 0xdb) return 'rpm';
  return null;
}
