/**
 * Pure parsing of clamd replies (the `z` command family: NUL-terminated requests and replies).
 * Kept apart from the socket code so the text handling is testable on its own.
 */
import { DomainError } from '../../domain/errors.js';
import type { AntivirusVersion, ScanResult } from './scanner.js';

/** Parses a `zVERSION` reply: `ClamAV 1.4.6/27000/Mon Nov 17 09:35:00 2025` or just `ClamAV 1.4.6`. */
export function parseVersionReply(reply: string): AntivirusVersion {
  const raw = reply.trim();
  const match = /^ClamAV\s+([^/\s]+)(?:\/(\d+))?(?:\/(.+))?$/.exec(raw);
  if (!match || match[1] === undefined) {
    throw new DomainError('unavailable', 'antivirus_error', `unexpected clamd VERSION reply: ${truncate(raw)}`);
  }
  const dateText = match[3]?.trim() || null;
  return {
    engine: match[1],
    signatures: match[2] ?? null,
    signatureDate: dateText === null ? null : toIsoDate(dateText),
    raw,
  };
}

/**
 * Parses an INSTREAM reply. Detections end in ` FOUND`, errors in ` ERROR`; the size-limit error
 * gets its own code because the caller can act on it (the file is larger than clamd accepts).
 */
export function parseScanReply(reply: string, name = 'stream'): ScanResult {
  const text = reply.trim();
  // The reply is prefixed with the stream's name as clamd saw it (`stream: ...`).
  const body = text.startsWith('stream:') ? text.slice('stream:'.length).trim() : text;
  if (body === 'OK') return { clean: true };
  if (body.endsWith(' FOUND')) {
    const signature = body.slice(0, -' FOUND'.length).trim();
    return { clean: false, signature: signature || 'unknown' };
  }
  if (/size limit exceeded/i.test(body)) {
    throw new DomainError(
      'too_large',
      'antivirus_size_limit',
      `${name} is larger than the antivirus daemon accepts (clamd StreamMaxLength)`,
    );
  }
  if (body.endsWith('ERROR')) {
    throw new DomainError('unavailable', 'antivirus_error', `clamd could not scan ${name}: ${truncate(body)}`);
  }
  throw new DomainError('unavailable', 'antivirus_error', `unexpected clamd reply for ${name}: ${truncate(body)}`);
}

/** clamd prints the database time with ctime() in its local zone; ISO is what callers can compare. */
function toIsoDate(text: string): string {
  const millis = Date.parse(text);
  return Number.isNaN(millis) ? text : new Date(millis).toISOString();
}

function truncate(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
