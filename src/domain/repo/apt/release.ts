/**
 * The `Release` file of an APT distribution, written as `apt-ftparchive release` writes it
 * (fields in alphabetical order, then one checksum section per algorithm, paths sorted), so
 * our output and the reference tool's agree on the same index files.
 */
import { DomainError } from '../../errors.js';

/** One index file listed in Release, path relative to `dists/<codename>/`. */
export interface ReleaseFileEntry {
  path: string;
  size: number;
  md5: string;
  sha1: string;
  sha256: string;
  sha512: string;
}

/** Everything a Release file states. */
export interface ReleaseInput {
  origin: string;
  label: string;
  suite: string;
  codename: string;
  /** Release date; `releaseDate()` gives one that honours SOURCE_DATE_EPOCH. */
  date: Date;
  /** Optional expiry: clients refuse the index after it (protects against replayed old indexes). */
  validUntil?: Date | null;
  architectures: readonly string[];
  components: readonly string[];
  description?: string | null;
  version?: string | null;
  acquireByHash: boolean;
  files: readonly ReleaseFileEntry[];
}

const SECTIONS = [
  ['MD5Sum', 'md5'],
  ['SHA1', 'sha1'],
  ['SHA256', 'sha256'],
  ['SHA512', 'sha512'],
] as const;

/** The Release text (ends with `\n`). */
export function releaseFile(input: ReleaseInput): string {
  const fields = new Map<string, string>();
  const set = (name: string, value: string | null | undefined): void => {
    if (value === undefined || value === null || value === '') return;
    if (/[\r\n]/.test(value)) throw new DomainError('invalid', 'bad_release_field', `${name}: line break in value`);
    fields.set(name, value);
  };
  set('Origin', input.origin);
  set('Label', input.label);
  set('Suite', input.suite);
  set('Codename', input.codename);
  set('Version', input.version);
  set('Date', formatReleaseDate(input.date));
  set('Valid-Until', input.validUntil ? formatReleaseDate(input.validUntil) : null);
  set('Architectures', input.architectures.join(' '));
  set('Components', input.components.join(' '));
  set('Description', input.description);
  if (input.acquireByHash) set('Acquire-By-Hash', 'yes');

  // apt-ftparchive keeps its fields in a sorted map; plain code-unit order matches it.
  const names = [...fields.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  let out = names.map((n) => `${n}: ${fields.get(n)}\n`).join('');
  const files = [...input.files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (const f of files) {
    if (/\s/.test(f.path) || f.path.startsWith('/')) throw new DomainError('invalid', 'bad_release_field', `bad index path ${f.path}`);
  }
  for (const [title, key] of SECTIONS) {
    out += `${title}:\n`;
    for (const f of files) out += ` ${f[key]} ${String(f.size).padStart(16)} ${f.path}\n`;
  }
  return out;
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad2 = (n: number): string => String(n).padStart(2, '0');

/** RFC 2822 date in UTC as apt-ftparchive writes it: `Sat, 21 Nov 2026 22:07:05 +0000`. */
export function formatReleaseDate(d: Date): string {
  if (Number.isNaN(d.getTime())) throw new DomainError('invalid', 'bad_release_field', 'invalid date');
  return `${DAYS[d.getUTCDay()]}, ${pad2(d.getUTCDate())} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()} ` +
    `${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())} +0000`;
}

/**
 * The date to stamp on a release: SOURCE_DATE_EPOCH (seconds) when given — reproducible builds
 * and deterministic tests — else `now`. The environment is passed in to keep this function pure.
 */
export function releaseDate(env: Readonly<Record<string, string | undefined>>, now: Date): Date {
  const epoch = env['SOURCE_DATE_EPOCH'];
  if (epoch !== undefined && /^\d+$/.test(epoch)) return new Date(Number(epoch) * 1000);
  return now;
}
