/**
 * Debian version numbers: `[epoch:]upstream_version[-debian_revision]`, parsed and ordered
 * exactly as `dpkg --compare-versions` does (checked against dpkg itself in the tests).
 *
 * Debian Policy §5.6.12 (also deb-version(7)):
 *
 *   "epoch — This is a single (generally small) unsigned integer. It may be omitted, in which
 *   case zero is assumed."
 *
 *   "The upstream_version may contain only alphanumerics and the characters . + - ~ (full stop,
 *   plus, hyphen, tilde) and should start with a digit. If there is no debian_revision then
 *   hyphens are not allowed." (deb-version(7) adds ':' when an epoch is present.)
 *
 *   "debian_revision … may contain only alphanumerics and the characters + . ~ (plus, full
 *   stop, tilde) and is compared in the same way as the upstream_version is."
 *
 *   "When comparing two version numbers, first the epoch of each are compared, then the
 *   upstream_version if epoch is equal, and then debian_revision if upstream_version is also
 *   equal. epoch is compared numerically. The upstream_version and debian_revision parts are
 *   compared by the package management system using the following algorithm:
 *
 *   The strings are compared from left to right.
 *
 *   First the initial part of each string consisting entirely of non-digit characters is
 *   determined. These two parts (one of which may be empty) are compared lexically. If a
 *   difference is found it is returned. The lexical comparison is a comparison of ASCII values
 *   modified so that all the letters sort earlier than all the non-letters and so that a tilde
 *   sorts before anything, even the end of a part. For example, the following parts are in
 *   sorted order from earliest to latest: ~~, ~~a, ~, the empty part, a.
 *
 *   Then the initial part of the remainder of each string which consists entirely of digit
 *   characters is determined. The numerical values of these two parts are compared, and any
 *   difference found is returned as the result of the comparison. For these purposes an empty
 *   string (which can only occur at the end of one or both version strings being compared)
 *   counts as zero.
 *
 *   These two steps (comparing and removing initial non-digit strings and initial digit strings)
 *   are repeated until a difference is found or both strings are exhausted."
 *
 * dpkg splits at the LAST hyphen, and an absent revision compares like an empty one, so
 * `1.0` = `1.0-0` (the revision "0" and "" are both the number zero).
 */
import { PackageFormatError } from '../errors.js';

/** A parsed Debian version. `revision` is '' when absent. */
export interface DebianVersion {
  epoch: number;
  upstream: string;
  revision: string;
}

/** Relation operators of Depends & co.; '<' and '>' are the obsolete spellings of '<=' and '>='. */
export type VersionRelation = '<<' | '<=' | '=' | '>=' | '>>' | '<' | '>';

const MAX_EPOCH = 2147483647; // dpkg stores the epoch in an int

interface ParseOutcome {
  version?: DebianVersion;
  /** Fatal: dpkg refuses to compare. */
  error?: string;
  /** dpkg only warns (e.g. "version number does not start with digit") but still compares. */
  warning?: string;
}

/** dpkg's parsing: hard errors stop it, policy violations are only warnings. */
function parseLoosely(text: string): ParseOutcome {
  const trimmed = text.replace(/^[ \t]+|[ \t]+$/g, '');
  if (trimmed === '') return { error: 'version string is empty' };
  if (/[ \t]/.test(trimmed)) return { error: 'version string has embedded spaces' };

  let epoch = 0;
  let rest = trimmed;
  const colon = trimmed.indexOf(':');
  if (colon >= 0) {
    const epochText = trimmed.slice(0, colon);
    if (epochText === '') return { error: 'epoch in version is empty' };
    // strtol accepts a sign; dpkg then rejects negatives.
    if (!/^[+-]?\d+$/.test(epochText)) return { error: 'epoch in version is not number' };
    const value = Number(epochText);
    if (value < 0) return { error: 'epoch in version is negative' };
    if (value > MAX_EPOCH) return { error: 'epoch in version is too big' };
    epoch = value === 0 ? 0 : value; // -0 is 0
    rest = trimmed.slice(colon + 1);
    if (rest === '') return { error: 'nothing after colon in version number' };
  }

  let upstream = rest;
  let revision = '';
  const hyphen = rest.lastIndexOf('-');
  if (hyphen >= 0) {
    upstream = rest.slice(0, hyphen);
    revision = rest.slice(hyphen + 1);
    if (revision === '') return { error: 'revision number is empty' };
  }
  if (upstream === '') return { error: 'upstream version is empty' };

  const version = { epoch, upstream, revision };
  if (!/^[0-9]/.test(upstream)) return { version, warning: 'version number does not start with digit' };
  if (!/^[A-Za-z0-9.+~:-]*$/.test(upstream)) return { version, warning: 'invalid character in version number' };
  if (!/^[A-Za-z0-9.+~]*$/.test(revision)) return { version, warning: 'invalid character in revision number' };
  return { version };
}

/** Parses a version that follows Debian policy; anything else throws PackageFormatError('invalid_version'). */
export function parseDebianVersion(text: string): DebianVersion {
  const outcome = parseLoosely(text);
  const problem = outcome.error ?? outcome.warning;
  if (problem !== undefined || outcome.version === undefined || text !== text.trim()) {
    throw new PackageFormatError('invalid_version', `invalid version ${JSON.stringify(text)}: ${problem ?? 'surrounding spaces'}`);
  }
  return outcome.version;
}

/** Whether `text` is a well-formed Debian version (no dpkg error and no dpkg warning). */
export function isValidDebianVersion(text: string): boolean {
  const outcome = parseLoosely(text);
  return outcome.error === undefined && outcome.warning === undefined && text === text.trim();
}

/** Formats a parsed version back to its canonical string (epoch 0 omitted). */
export function formatDebianVersion(version: DebianVersion): string {
  const epoch = version.epoch === 0 ? '' : `${version.epoch}:`;
  const revision = version.revision === '' ? '' : `-${version.revision}`;
  return `${epoch}${version.upstream}${revision}`;
}

/**
 * Compares like `dpkg --compare-versions`: negative, zero or positive. Strings dpkg only warns
 * about (e.g. not starting with a digit) are compared; strings dpkg rejects throw invalid_version.
 */
export function compareDebianVersions(a: string | DebianVersion, b: string | DebianVersion): number {
  const left = typeof a === 'string' ? parseForComparison(a) : a;
  const right = typeof b === 'string' ? parseForComparison(b) : b;
  // Callers that keep parsed versions (the resolver) pass the same object for the same text.
  if (left === right) return 0;
  if (left.epoch !== right.epoch) return left.epoch < right.epoch ? -1 : 1;
  const upstream = compareVersionPart(left.upstream, right.upstream);
  if (upstream !== 0) return upstream;
  return compareVersionPart(left.revision, right.revision);
}

/** Whether `version` stands in relation `op` to `reference` (as in `pkg (op reference)`). */
export function satisfiesRelation(version: string | DebianVersion, op: VersionRelation, reference: string | DebianVersion): boolean {
  const order = compareDebianVersions(version, reference);
  switch (op) {
    case '<<':
      return order < 0;
    case '<=':
    case '<':
      return order <= 0;
    case '=':
      return order === 0;
    case '>=':
    case '>':
      return order >= 0;
    case '>>':
      return order > 0;
  }
}

function parseForComparison(text: string): DebianVersion {
  const outcome = parseLoosely(text);
  if (outcome.version === undefined) {
    throw new PackageFormatError('invalid_version', `invalid version ${JSON.stringify(text)}: ${outcome.error ?? 'unparsable'}`);
  }
  return outcome.version;
}

/** Sort weight of one character in a non-digit run; `code` is END past the end of the string. */
function characterWeight(code: number): number {
  if (code === END || isDigit(code)) return 0; // end of the run (or of the string)
  if (isLetter(code)) return code;
  if (code === 0x7e /* ~ */) return -1;
  // A byte of a UTF-8 sequence (see dpkgBytes): dpkg's `c + 256` of a negative (signed) char.
  if (code >= 0x80) return code;
  return code + 256; // other characters sort after all letters
}

/**
 * dpkg compares the UTF-8 bytes of a version, each read as C's signed char: a part holding
 * anything beyond ASCII is compared as its bytes (one Latin-1 character per byte), not as UTF-16.
 */
function dpkgBytes(part: string): string {
  for (let i = 0; i < part.length; i += 1) {
    if (part.charCodeAt(i) >= 0x80) return Buffer.from(part, 'utf8').toString('latin1');
  }
  return part;
}

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

function isLetter(code: number): boolean {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
}

/** What {@link codeAt} answers past the end of a string. */
const END = -1;

/**
 * The character code at `i`, END past the end. Reading past the end with charCodeAt (NaN) is
 * correct too, but makes V8 throw away the compiled comparison the first time it happens; a
 * resolution compares thousands of versions and paid for that again and again.
 */
function codeAt(text: string, i: number): number {
  return i < text.length ? text.charCodeAt(i) : END;
}

/** The Policy algorithm above for one part (upstream or revision). */
function compareVersionPart(textA: string, textB: string): number {
  if (textA === textB) return 0;
  const a = dpkgBytes(textA);
  const b = dpkgBytes(textB);
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    // Non-digit run, character by character, with the weights of the Policy text.
    while ((i < a.length && !isDigit(a.charCodeAt(i))) || (j < b.length && !isDigit(b.charCodeAt(j)))) {
      const left = characterWeight(codeAt(a, i));
      const right = characterWeight(codeAt(b, j));
      if (left !== right) return left < right ? -1 : 1;
      i += 1;
      j += 1;
    }
    // Digit run: numeric value, compared without converting (runs may exceed 2^53).
    while (codeAt(a, i) === 0x30) i += 1;
    while (codeAt(b, j) === 0x30) j += 1;
    let firstDifference = 0;
    while (isDigit(codeAt(a, i)) && isDigit(codeAt(b, j))) {
      if (firstDifference === 0) firstDifference = a.charCodeAt(i) - b.charCodeAt(j);
      i += 1;
      j += 1;
    }
    if (isDigit(codeAt(a, i))) return 1; // a's number has more significant digits
    if (isDigit(codeAt(b, j))) return -1;
    if (firstDifference !== 0) return firstDifference < 0 ? -1 : 1;
  }
  return 0;
}
