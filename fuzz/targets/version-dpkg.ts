/**
 * Debian version order on triples taken from the input: compareDebianVersions must be
 * antisymmetric and transitive, and agree with dpkg's own algorithm (verrevcmp and parseversion
 * of lib/dpkg, restated below byte for byte with C semantics: UTF-8 bytes, signed char).
 */
import { compareDebianVersions } from '../../src/domain/deb/version.js';
import { PackageFormatError } from '../../src/domain/errors.js';
import { expectOnly, invariant, splitParts, syncTarget } from '../lib/harness.js';

const sign = (n: number): number => (n < 0 ? -1 : n > 0 ? 1 : 0);

/** Our comparison, or null when it refuses one of the versions. */
function ours(a: string, b: string): number | null {
  try {
    return sign(compareDebianVersions(a, b));
  } catch (error) {
    expectOnly(error, PackageFormatError);
    return null;
  }
}

// ---- dpkg, restated: lib/dpkg/version.c and parsehelp.c ----

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isAlpha = (c: number) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const isBlank = (c: number) => c === 0x20 || c === 0x09;
/** A byte as C's (signed) char on x86. */
const signedChar = (b: number) => (b >= 0x80 ? b - 256 : b);

function order(c: number): number {
  if (c === 0) return 0;
  if (isDigit(c)) return 0;
  if (isAlpha(c)) return c;
  if (c === 0x7e) return -1;
  return signedChar(c) + 256;
}

/** `s` NUL-terminated: past the end reads 0. */
const at = (s: Uint8Array, i: number) => (i < s.length ? s[i]! : 0);

function verrevcmp(a: Uint8Array, b: Uint8Array): number {
  let i = 0;
  let j = 0;
  while (at(a, i) || at(b, j)) {
    let firstDiff = 0;
    while ((at(a, i) && !isDigit(at(a, i))) || (at(b, j) && !isDigit(at(b, j)))) {
      const ac = order(at(a, i));
      const bc = order(at(b, j));
      if (ac !== bc) return ac - bc;
      i++;
      j++;
    }
    while (at(a, i) === 0x30) i++;
    while (at(b, j) === 0x30) j++;
    while (isDigit(at(a, i)) && isDigit(at(b, j))) {
      if (!firstDiff) firstDiff = at(a, i) - at(b, j);
      i++;
      j++;
    }
    if (isDigit(at(a, i))) return 1;
    if (isDigit(at(b, j))) return -1;
    if (firstDiff) return firstDiff;
  }
  return 0;
}

interface DpkgVersion {
  epoch: number;
  version: Uint8Array;
  revision: Uint8Array;
}

function parseversion(input: Uint8Array): DpkgVersion | null {
  let s = 0;
  while (s < input.length && isBlank(input[s]!)) s++;
  if (s === input.length) return null;
  let end = s;
  while (end < input.length && !isBlank(input[end]!)) end++;
  let p = end;
  while (p < input.length && isBlank(input[p]!)) p++;
  if (p < input.length) return null;
  const colon = input.indexOf(0x3a, s);
  let epoch = 0;
  if (colon >= 0 && colon < end) {
    // strtol: optional sign, digits; the epoch must end exactly at the colon.
    let k = s;
    let negative = false;
    if (input[k] === 0x2b || input[k] === 0x2d) negative = input[k++] === 0x2d;
    const digitsStart = k;
    let value = 0;
    while (k < input.length && isDigit(input[k]!)) value = value * 10 + (input[k++]! - 0x30);
    if (k === digitsStart) return null;
    if (k !== colon) return null;
    if (negative && value !== 0) return null;
    if (value > 2147483647) return null;
    epoch = value;
    s = colon + 1;
    if (s === end) return null;
  }
  const body = input.subarray(s, end);
  const hyphen = body.lastIndexOf(0x2d);
  if (hyphen >= 0 && hyphen === body.length - 1) return null;
  return {
    epoch,
    version: hyphen >= 0 ? body.subarray(0, hyphen) : body,
    revision: hyphen >= 0 ? body.subarray(hyphen + 1) : new Uint8Array(0),
  };
}

function dpkg(a: string, b: string): number | null {
  const left = parseversion(Buffer.from(a, 'utf8'));
  const right = parseversion(Buffer.from(b, 'utf8'));
  if (left === null || right === null) return null;
  if (left.version.length === 0 || right.version.length === 0) return null;
  if (left.epoch !== right.epoch) return left.epoch > right.epoch ? 1 : -1;
  const byVersion = verrevcmp(left.version, right.version);
  if (byVersion) return sign(byVersion);
  return sign(verrevcmp(left.revision, right.revision));
}

export const fuzz = syncTarget((data) => {
  // C strings end at NUL: versions with one cannot reach dpkg, so they are left out.
  const [a = '', b = '', c = ''] = splitParts(data, 0x0a, 3).map((part) => part.toString('utf8').replace(/\0/g, ''));
  const ab = ours(a, b);
  const ba = ours(b, a);
  invariant((ab === null) === (ba === null), () => `refused ${JSON.stringify(ab === null ? [a, b] : [b, a])} but not the other order`);
  const reference = dpkg(a, b);
  invariant(ab === reference, () => `compare(${JSON.stringify(a)}, ${JSON.stringify(b)}) = ${ab}, dpkg says ${reference}`);
  if (ab === null || ba === null) return;
  invariant(ab === -ba, () => `not antisymmetric: ${JSON.stringify(a)} vs ${JSON.stringify(b)}: ${ab} and ${ba}`);
  const bc = ours(b, c);
  const ac = ours(a, c);
  if (bc === null || ac === null) return;
  if (ab <= 0 && bc <= 0) invariant(ac <= 0, () => `not transitive: ${JSON.stringify([a, b, c])}`);
  if (ab >= 0 && bc >= 0) invariant(ac >= 0, () => `not transitive: ${JSON.stringify([a, b, c])}`);
  if (ab === 0 && bc === 0) invariant(ac === 0, () => `equality not transitive: ${JSON.stringify([a, b, c])}`);
});
