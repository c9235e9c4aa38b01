/**
 * RPM version comparison, behaving exactly like rpm's rpmvercmp() and EVR handling.
 *
 * A version is split into segments of ASCII digits or ASCII letters; every other character is a
 * separator. Numeric segments compare as numbers (leading zeros ignored, more digits wins) and
 * are newer than alphabetic ones. `~` sorts before anything, even the end of the string
 * (1.0~rc1 < 1.0); `^` sorts after the end of the string but before any other segment
 * (1.0 < 1.0^git1 < 1.0.1).
 */

/** An epoch-version-release triple. A null/undefined epoch or release means "not given". */
export interface Evr {
  epoch?: number | string | null;
  version: string;
  release?: string | null;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function isAlpha(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

const TILDE = 126;
const CARET = 94;

/** Compares two version (or release) strings as rpm does: -1, 0 or 1. */
export function rpmvercmp(a: string, b: string): -1 | 0 | 1 {
  if (a === b) return 0;
  let i = 0;
  let j = 0;
  const la = a.length;
  const lb = b.length;
  // NaN for "past the end", so comparisons with specific characters are simply false.
  const at = (s: string, k: number, len: number): number => (k < len ? s.charCodeAt(k) : NaN);

  while (i < la || j < lb) {
    while (i < la && !isDigit(a.charCodeAt(i)) && !isAlpha(a.charCodeAt(i)) && a.charCodeAt(i) !== TILDE && a.charCodeAt(i) !== CARET) i++;
    while (j < lb && !isDigit(b.charCodeAt(j)) && !isAlpha(b.charCodeAt(j)) && b.charCodeAt(j) !== TILDE && b.charCodeAt(j) !== CARET) j++;
    const ca = at(a, i, la);
    const cb = at(b, j, lb);

    if (ca === TILDE || cb === TILDE) {
      if (ca !== TILDE) return 1;
      if (cb !== TILDE) return -1;
      i++;
      j++;
      continue;
    }

    if (ca === CARET || cb === CARET) {
      if (i >= la) return -1;
      if (j >= lb) return 1;
      if (ca !== CARET) return 1;
      if (cb !== CARET) return -1;
      i++;
      j++;
      continue;
    }

    if (i >= la || j >= lb) break;

    // Take the longest run of the same class (digits or letters) as the first string's segment.
    const numeric = isDigit(ca);
    const inClass = numeric ? isDigit : isAlpha;
    let ei = i;
    while (ei < la && inClass(a.charCodeAt(ei))) ei++;
    let ej = j;
    while (ej < lb && inClass(b.charCodeAt(ej))) ej++;

    // Different kinds of segment: a number is newer than letters.
    if (ej === j) return numeric ? 1 : -1;

    let sa = a.slice(i, ei);
    let sb = b.slice(j, ej);
    if (numeric) {
      sa = sa.replace(/^0+/, '');
      sb = sb.replace(/^0+/, '');
      if (sa.length !== sb.length) return sa.length > sb.length ? 1 : -1;
    }
    if (sa !== sb) return sa < sb ? -1 : 1;
    i = ei;
    j = ej;
  }

  if (i >= la && j >= lb) return 0;
  return i >= la ? -1 : 1;
}

/** Splits `[epoch:]version[-release]` the way rpm does (the release starts at the last '-'). */
export function parseEvr(evr: string): { epoch: string | null; version: string; release: string | null } {
  let k = 0;
  while (k < evr.length && isDigit(evr.charCodeAt(k))) k++;
  let epoch: string | null = null;
  let rest = evr;
  let restStart = 0;
  if (evr.charCodeAt(k) === 58 /* ':' */) {
    epoch = k === 0 ? '0' : evr.slice(0, k);
    rest = evr.slice(k + 1);
    restStart = k + 1;
  }
  // rpm searches for the last '-' after the epoch digits, even without an epoch separator.
  const dash = evr.lastIndexOf('-');
  if (dash >= Math.max(k, restStart)) {
    return { epoch, version: evr.slice(restStart, dash), release: evr.slice(dash + 1) };
  }
  return { epoch, version: rest, release: null };
}

function epochString(e: number | string | null | undefined): string | null {
  if (e === null || e === undefined) return null;
  return String(e);
}

/**
 * Orders two packages' EVRs (rpmverCmp): a missing epoch counts as 0, a missing release is
 * older than any release. Use this to sort packages; use `evrSatisfies` for dependency ranges.
 */
export function compareEvr(a: Evr, b: Evr): -1 | 0 | 1 {
  const byEpoch = rpmvercmp(epochString(a.epoch) ?? '0', epochString(b.epoch) ?? '0');
  if (byEpoch !== 0) return byEpoch;
  const byVersion = rpmvercmp(a.version, b.version);
  if (byVersion !== 0) return byVersion;
  const ra = a.release ?? null;
  const rb = b.release ?? null;
  if (ra === null && rb === null) return 0;
  if (rb === null) return 1;
  if (ra === null) return -1;
  return rpmvercmp(ra, rb);
}

/** Formats an EVR as rpm prints it: the epoch only when given, the release only when given. */
export function formatEvr(evr: Evr): string {
  const e = epochString(evr.epoch);
  const r = evr.release ?? null;
  return `${e !== null ? `${e}:` : ''}${evr.version}${r !== null && r !== '' ? `-${r}` : ''}`;
}
