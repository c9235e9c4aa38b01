/**
 * Reads a .deb file (deb(5)): an ar archive whose members are, in this order,
 * `debian-binary` ("2.x\n"), `control.tar[.gz|.xz|.zst]` and `data.tar[.gz|.xz|.zst]`;
 * members whose name starts with '_' may sit in between and are ignored, as are trailing ones.
 *
 * Everything is bounded (member sizes, decompression, entry counts, control size) and every
 * malformation is a PackageFormatError with a specific code. The file is never read whole.
 */
import type { Duplex } from 'node:stream';
import type { KnownBytes } from '../known-bytes.js';
import { ArFile, readArMembers, openArMember, type ArMember } from './ar.js';
import { parseControlStanza, type ControlStanza } from './control.js';
import { parseRelations } from './relations.js';
import { walkTar, type TarEntryHeader, type TarEntryType } from './tar.js';
import { assertValidArchitectureName, assertValidPackageName, assertValidPackageVersion } from './names.js';
import { detectCompression, type Compression, type DecompressionLimits } from '../compression.js';
import { PackageFormatError } from '../errors.js';

export { openArMember, type ArMember } from './ar.js';

/** Caps applied while reading a package. */
export interface DebLimits {
  maxMembers: number;
  /** Compressed size of the control.tar member. */
  maxControlMemberBytes: number;
  /** Decompressed size of control.tar. */
  maxControlTarBytes: number;
  /** Size of the `control` file itself. */
  maxControlFileBytes: number;
  maxControlEntries: number;
  /** Decompressed size of data.tar. */
  maxDataTarBytes: number;
  maxDataEntries: number;
  /** Decompressed size divided by compressed size, for both tars. */
  maxRatio: number;
  maxPathLength: number;
}

export const DEFAULT_DEB_LIMITS: DebLimits = {
  maxMembers: 16,
  maxControlMemberBytes: 16 * 1024 * 1024,
  maxControlTarBytes: 64 * 1024 * 1024,
  maxControlFileBytes: 1024 * 1024,
  maxControlEntries: 1000,
  maxDataTarBytes: 16 * 1024 * 1024 * 1024,
  maxDataEntries: 200_000,
  maxRatio: 1000,
  maxPathLength: 4096,
};

/** One file of data.tar. */
export interface DebFileEntry {
  /** As stored in the archive, e.g. `./usr/bin/hello` (what `dpkg-deb -c` prints). */
  path: string;
  /** Absolute install path, e.g. `/usr/bin/hello`; `/` for the root directory. */
  installPath: string;
  size: number;
  mode: number;
  type: TarEntryType;
  linkTarget: string | null;
  user: string;
  group: string;
}

/** The relationship fields as written (null when absent). */
export interface DebRelationFields {
  depends: string | null;
  preDepends: string | null;
  recommends: string | null;
  suggests: string | null;
  enhances: string | null;
  breaks: string | null;
  conflicts: string | null;
  provides: string | null;
  replaces: string | null;
}

/** What a .deb declares and contains. */
export interface DebPackage {
  name: string;
  version: string;
  arch: string;
  /** From `Source: name (version)`; defaults to the binary name and version. */
  sourceName: string;
  sourceVersion: string;
  /** Installed-Size in KiB, or null when absent. */
  installedSize: number | null;
  multiArch: string | null;
  relations: DebRelationFields;
  /** The control paragraph: ordered fields, case-insensitive `get`. */
  control: ControlStanza;
  /** The control file exactly as stored. */
  controlText: string;
  /** Format version from debian-binary, e.g. "2.0". */
  formatVersion: string;
  /** File names in control.tar (e.g. control, md5sums, postinst). */
  controlFiles: string[];
  hasMd5sums: boolean;
  conffiles: string[];
  compression: { control: Compression; data: Compression };
  files: DebFileEntry[];
  /** Every ar member with its data offset and size, to stream each one (e.g. to clamd). */
  members: ArMember[];
}

const RELATION_FIELDS: ReadonlyArray<[keyof DebRelationFields, string]> = [
  ['depends', 'Depends'],
  ['preDepends', 'Pre-Depends'],
  ['recommends', 'Recommends'],
  ['suggests', 'Suggests'],
  ['enhances', 'Enhances'],
  ['breaks', 'Breaks'],
  ['conflicts', 'Conflicts'],
  ['provides', 'Provides'],
  ['replaces', 'Replaces'],
];

/**
 * How much of data.tar (the payload) is read: `list` decompresses it whole, checking every entry
 * and listing the files; `defer` checks only that it starts as its compression says, leaving
 * `files` empty for {@link listDebPayload} to fill in later (decompressing xz costs ~50 ms per
 * MB, far more than everything else an upload does).
 */
export type DebPayloadReading = 'list' | 'defer';

/** Reads and validates the .deb at `path`; throws PackageFormatError on any malformation. */
export async function readDebPackage(
  path: string, overrides: Partial<DebLimits> = {}, payload: DebPayloadReading = 'list',
  /** The file's size and first bytes when they are in memory already (see ArFile.open). */
  known?: KnownBytes,
): Promise<DebPackage> {
  const limits: DebLimits = { ...DEFAULT_DEB_LIMITS, ...overrides };
  const file = await ArFile.open(path, undefined, known);
  const { members, layout, formatVersion, control, identity } = await readDebHead(file, limits, payload).finally(() => file.close());
  let files: DebFileEntry[] = [];
  if (payload === 'list') files = await listDataFiles(path, layout.data, limits);

  return {
    ...identity,
    control: control.stanza,
    controlText: control.text,
    formatVersion,
    controlFiles: control.files,
    hasMd5sums: control.files.includes('md5sums'),
    conffiles: control.conffiles,
    compression: { control: layout.control.compression, data: layout.data.compression },
    files,
    members,
  };
}

/** Everything but the payload's file list, read through one open of the file. */
async function readDebHead(file: ArFile, limits: DebLimits, payload: DebPayloadReading) {
  const members = await file.members({ maxMembers: limits.maxMembers });
  const layout = locateMembers(members);
  const formatVersion = await readFormatVersion(file, layout.debianBinary);
  const control = await readControlArchive(file, layout.control, limits);
  const identity = validateControl(control.stanza);
  if (payload === 'defer') await checkDataMagic(file, layout.data);
  return { members, layout, formatVersion, control, identity };
}

interface TarMember {
  member: ArMember;
  compression: Compression;
}

function locateMembers(members: ArMember[]): { debianBinary: ArMember; control: TarMember; data: TarMember } {
  const [first, ...rest] = members;
  if (first === undefined) throw new PackageFormatError('missing_debian_binary', 'empty ar archive');
  if (first.name !== 'debian-binary') {
    throw new PackageFormatError('missing_debian_binary', `first member is ${JSON.stringify(first.name)}, not debian-binary`);
  }
  const remaining = rest.filter((member) => !member.name.startsWith('_'));
  const [controlMember, dataMember] = remaining;
  if (controlMember === undefined || !controlMember.name.startsWith('control.tar')) {
    throw new PackageFormatError(
      'missing_control_member',
      controlMember === undefined ? 'no control.tar member' : `expected control.tar, found ${JSON.stringify(controlMember.name)}`,
    );
  }
  if (dataMember === undefined || !dataMember.name.startsWith('data.tar')) {
    throw new PackageFormatError(
      'missing_data_member',
      dataMember === undefined ? 'no data.tar member' : `expected data.tar, found ${JSON.stringify(dataMember.name)}`,
    );
  }
  return {
    debianBinary: first,
    control: { member: controlMember, compression: compressionOf(controlMember.name, 'control.tar') },
    data: { member: dataMember, compression: compressionOf(dataMember.name, 'data.tar') },
  };
}

/** Member name suffixes; bzip2 and lzma are valid for dpkg but refused here (no bounded decoder). */
const SUFFIXES = new Map<string, Compression | 'unsupported'>([
  ['', 'none'],
  ['.gz', 'gzip'],
  ['.xz', 'xz'],
  ['.zst', 'zstd'],
  ['.bz2', 'unsupported'],
  ['.lzma', 'unsupported'],
]);

function compressionOf(name: string, base: string): Compression {
  const suffix = name.slice(base.length);
  const kind = SUFFIXES.get(suffix);
  if (kind === undefined || kind === 'unsupported') {
    throw new PackageFormatError(
      'unsupported_compression',
      `member ${name}: compression ${JSON.stringify(suffix || 'none')} is not supported (use gzip, xz or zstd)`,
    );
  }
  return kind;
}

async function readFormatVersion(file: ArFile, member: ArMember): Promise<string> {
  const bytes = await file.memberBytes(member, 64).catch((error: unknown) => {
    if (error instanceof PackageFormatError && error.code === 'member_too_large') {
      throw new PackageFormatError('unsupported_deb_version', 'debian-binary is too large');
    }
    throw error;
  });
  const match = /^(2\.\d+)\n/.exec(bytes.toString('latin1'));
  if (!match?.[1]) {
    throw new PackageFormatError('unsupported_deb_version', `unsupported deb format ${JSON.stringify(bytes.toString('latin1').trim())}`);
  }
  return match[1];
}

interface ControlArchive {
  stanza: ControlStanza;
  text: string;
  files: string[];
  conffiles: string[];
}

async function readControlArchive(file: ArFile, tar: TarMember, limits: DebLimits): Promise<ControlArchive> {
  if (tar.member.size > limits.maxControlMemberBytes) {
    throw new PackageFormatError('control_too_large', `${tar.member.name} is ${tar.member.size} bytes (max ${limits.maxControlMemberBytes})`);
  }
  const files: string[] = [];
  let controlBytes: Buffer | null = null;
  let conffilesBytes: Buffer | null = null;
  await walkTar(
    file.stream(tar.member),
    tar.compression,
    tar.member.size,
    {
      decompression: { maxOutputBytes: limits.maxControlTarBytes, maxRatio: limits.maxRatio },
      maxEntries: limits.maxControlEntries,
      tooManyEntries: () => new PackageFormatError('control_too_large', `control.tar has more than ${limits.maxControlEntries} entries`),
    },
    {
      onEntry(header) {
        const name = header.name.replace(/^(\.\/)+/, '');
        if (header.type === 'directory' || name === '' || name === '.') return { capture: false };
        files.push(name);
        if (name === 'control' || name === 'conffiles') {
          return {
            capture: true,
            maxBytes: limits.maxControlFileBytes,
            tooLarge: () => new PackageFormatError('control_too_large', `${name} exceeds ${limits.maxControlFileBytes} bytes`),
          };
        }
        return { capture: false };
      },
      onData(header, data) {
        if (header.name.replace(/^(\.\/)+/, '') === 'control') controlBytes = data;
        else conffilesBytes = data;
      },
    },
  );
  if (controlBytes === null) throw new PackageFormatError('missing_control_file', 'control.tar has no control file');
  const text = decodeUtf8(controlBytes, 'control');
  const stanza = parseControlStanza(text);
  const conffiles = conffilesBytes === null ? [] : decodeUtf8(conffilesBytes, 'conffiles').split('\n').map((line) => line.trim()).filter(Boolean);
  return { stanza, text, files, conffiles };
}

function decodeUtf8(bytes: Buffer, what: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new PackageFormatError('bad_control_field', `${what} is not valid UTF-8`);
  }
}

type ControlIdentity = Pick<
  DebPackage,
  'name' | 'version' | 'arch' | 'sourceName' | 'sourceVersion' | 'installedSize' | 'multiArch' | 'relations'
>;

function validateControl(stanza: ControlStanza): ControlIdentity {
  const required = (field: string): string => {
    const value = stanza.get(field);
    if (value === undefined || value === '') throw new PackageFormatError('bad_control_field', `${field} field is missing`);
    if (value.includes('\n')) throw new PackageFormatError('bad_control_field', `${field} field spans several lines`);
    return value;
  };
  const name = required('Package');
  assertValidPackageName(name);
  const version = required('Version');
  assertValidPackageVersion(version);
  const arch = required('Architecture');
  assertValidArchitectureName(arch);

  let sourceName = name;
  let sourceVersion = version;
  const source = stanza.get('Source');
  if (source !== undefined) {
    const match = /^(\S+)(?:\s*\(\s*(\S+)\s*\))?$/.exec(source.trim());
    if (!match?.[1]) throw new PackageFormatError('bad_control_field', `Source field ${JSON.stringify(source)} is malformed`);
    sourceName = match[1];
    sourceVersion = match[2] ?? version;
    assertValidPackageName(sourceName);
    assertValidPackageVersion(sourceVersion);
  }

  let installedSize: number | null = null;
  const installed = stanza.get('Installed-Size');
  if (installed !== undefined) {
    if (!/^\d{1,15}$/.test(installed)) throw new PackageFormatError('bad_control_field', `Installed-Size ${JSON.stringify(installed)} is not a number`);
    installedSize = Number(installed);
  }

  const relations = {} as DebRelationFields;
  for (const [key, field] of RELATION_FIELDS) {
    const value = stanza.get(field) ?? null;
    parseRelations(value, field); // validates; callers parse again when they need the structure
    relations[key] = value;
  }
  return { name, version, arch, sourceName, sourceVersion, installedSize, multiArch: stanza.get('Multi-Arch') ?? null, relations };
}

/**
 * The payload's file list, read apart from the rest (see {@link DebPayloadReading}); the same
 * checks and errors as `readDebPackage` with `list`. xz is decoded off the event loop: by
 * `xzDecoder` when given (another process; as for RPM payloads, DecompressionLimits.xzDecoder),
 * else on the thread pool.
 */
export async function listDebPayload(path: string, overrides: Partial<DebLimits> & Pick<DecompressionLimits, 'xzDecoder'> = {}): Promise<DebFileEntry[]> {
  const { xzDecoder, ...given } = overrides;
  const limits: DebLimits = { ...DEFAULT_DEB_LIMITS, ...given };
  const layout = locateMembers(await readArMembers(path, { maxMembers: limits.maxMembers }));
  return listDataFiles(path, layout.data, limits, true, xzDecoder);
}

/** data.tar starts as its name says it is compressed (an uncompressed one: with a tar header's magic). */
async function checkDataMagic(file: ArFile, tar: TarMember): Promise<void> {
  const head = await file.memberHead(tar.member, 512);
  const ok = tar.compression === 'none' ? head.subarray(257, 262).toString('latin1') === 'ustar' : detectCompression(head) === tar.compression;
  if (!ok) throw new PackageFormatError('decompression_failed', `${tar.member.name} does not start as ${tar.compression === 'none' ? 'a tar archive' : `${tar.compression} data`}`);
}

async function listDataFiles(path: string, tar: TarMember, limits: DebLimits, threaded = false, xzDecoder?: () => Duplex): Promise<DebFileEntry[]> {
  const files: DebFileEntry[] = [];
  await walkTar(
    openArMember(path, tar.member),
    tar.compression,
    tar.member.size,
    {
      decompression: { maxOutputBytes: limits.maxDataTarBytes, maxRatio: limits.maxRatio, threaded, ...(xzDecoder ? { xzDecoder } : {}) },
      maxEntries: limits.maxDataEntries,
      tooManyEntries: () => new PackageFormatError('too_many_files', `data.tar has more than ${limits.maxDataEntries} entries`),
    },
    {
      onEntry(header) {
        files.push(toFileEntry(header, limits));
        return { capture: false };
      },
    },
  );
  return files;
}

function toFileEntry(header: TarEntryHeader, limits: DebLimits): DebFileEntry {
  const path = header.name;
  if (path.length > limits.maxPathLength || path.includes('\0')) {
    throw new PackageFormatError('unsafe_file_path', `data.tar path is too long or contains NUL`);
  }
  const segments = path.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) {
    throw new PackageFormatError('unsafe_file_path', `data.tar path ${JSON.stringify(path.slice(0, 200))} escapes the root`);
  }
  return {
    path,
    installPath: `/${segments.join('/')}`,
    size: header.size,
    mode: header.mode,
    type: header.type,
    linkTarget: header.linkTarget,
    user: header.user,
    group: header.group,
  };
}
