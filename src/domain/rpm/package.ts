/**
 * The data a repository needs from an RPM package, extracted from its parsed headers.
 * Plain, JSON-serialisable values so the caller can store them as they are.
 */
import { PackageFormatError } from '../errors.js';
import type { RpmHeader } from './header.js';
import { FileFlag, PRE_MASK, S_IFDIR, S_IFMT, SigTag, Tag } from './tags.js';

/** One dependency entry (requires, provides, ...). */
export interface RpmDependency {
  name: string;
  /** Raw RPMSENSE_* flags. */
  flags: number;
  /** `[epoch:]version[-release]` as stored in the header; '' when unversioned. */
  evr: string;
  /** createrepo_c's `pre="1"`: needed by scriptlets (pre, post, pretrans, posttrans, PreReq). */
  pre: boolean;
}

/** How createrepo_c classifies a file: directories win over the ghost flag. */
export type RpmFileType = 'file' | 'dir' | 'ghost';

/** One entry of the package's file list. */
export interface RpmFile {
  path: string;
  mode: number;
  /** Raw RPMFILE_* flags. */
  flags: number;
  type: RpmFileType;
  size: number;
  /** Symlink target, '' when not a symlink. */
  linkTo: string;
  /** Hex digest of the content ('' for dirs, links, ghosts). */
  digest: string;
}

/** One changelog entry, newest first as stored in the package. */
export interface RpmChangelogEntry {
  /** Seconds since the epoch. */
  time: number;
  author: string;
  text: string;
}

/** Names of the dependency kinds, as in the header and in primary.xml. */
export type RpmDependencyKind =
  | 'requires'
  | 'provides'
  | 'conflicts'
  | 'obsoletes'
  | 'recommends'
  | 'suggests'
  | 'supplements'
  | 'enhances';

/** Everything a repository needs from one .rpm file. */
export interface RpmPackage {
  name: string;
  /** null when the package has no EPOCH tag (compares as 0). */
  epoch: number | null;
  version: string;
  release: string;
  /** ARCH tag as written by rpmbuild ('x86_64', 'noarch', ...). */
  arch: string;
  /** A source package: the caller decides to reject it. */
  isSource: boolean;
  summary: string;
  description: string;
  license: string;
  url: string;
  vendor: string;
  packager: string;
  group: string;
  buildTime: number;
  buildHost: string;
  sourceRpm: string;
  /** Size of the .rpm file. */
  packageSize: number;
  /** Sum of the installed file sizes (LONGSIZE, else SIZE). */
  installedSize: number;
  /** Size of the uncompressed cpio payload (0 when the package does not say). */
  archiveSize: number;
  requires: RpmDependency[];
  provides: RpmDependency[];
  conflicts: RpmDependency[];
  obsoletes: RpmDependency[];
  recommends: RpmDependency[];
  suggests: RpmDependency[];
  supplements: RpmDependency[];
  enhances: RpmDependency[];
  files: RpmFile[];
  changelog: RpmChangelogEntry[];
  /** Byte offset of the main header in the file (primary.xml `header-range start`). */
  headerStart: number;
  /** Byte offset just past the main header (`header-range end`), which is where the payload begins. */
  headerEnd: number;
  payloadOffset: number;
  /** PAYLOADCOMPRESSOR, lower-cased; 'gzip' when absent as rpm assumes. */
  payloadCompressor: string;
  /** PAYLOADFORMAT, normally 'cpio'. */
  payloadFormat: string;
  /** SHA256 of the main header from the signature header, '' when absent. */
  headerSha256: string;
}

/** Where the headers sit in the file and how large the file is. */
export interface RpmLayout {
  leadType: number;
  headerStart: number;
  headerEnd: number;
  fileSize: number;
}

interface DepTags {
  name: number;
  flags: number;
  version: number;
}

const DEP_TAGS: Record<RpmDependencyKind, DepTags> = {
  requires: { name: Tag.REQUIRENAME, flags: Tag.REQUIREFLAGS, version: Tag.REQUIREVERSION },
  provides: { name: Tag.PROVIDENAME, flags: Tag.PROVIDEFLAGS, version: Tag.PROVIDEVERSION },
  conflicts: { name: Tag.CONFLICTNAME, flags: Tag.CONFLICTFLAGS, version: Tag.CONFLICTVERSION },
  obsoletes: { name: Tag.OBSOLETENAME, flags: Tag.OBSOLETEFLAGS, version: Tag.OBSOLETEVERSION },
  recommends: { name: Tag.RECOMMENDNAME, flags: Tag.RECOMMENDFLAGS, version: Tag.RECOMMENDVERSION },
  suggests: { name: Tag.SUGGESTNAME, flags: Tag.SUGGESTFLAGS, version: Tag.SUGGESTVERSION },
  supplements: { name: Tag.SUPPLEMENTNAME, flags: Tag.SUPPLEMENTFLAGS, version: Tag.SUPPLEMENTVERSION },
  enhances: { name: Tag.ENHANCENAME, flags: Tag.ENHANCEFLAGS, version: Tag.ENHANCEVERSION },
};

/** Reads one dependency kind from the name/flags/version tag triple. */
function readDeps(h: RpmHeader, tags: DepTags, kind: string): RpmDependency[] {
  const names = h.stringArray(tags.name) ?? [];
  const flags = h.numbers(tags.flags) ?? [];
  const versions = h.stringArray(tags.version) ?? [];
  if ((flags.length && flags.length !== names.length) || (versions.length && versions.length !== names.length)) {
    throw new PackageFormatError('bad_dependency', `${kind}: name, flag and version counts differ`);
  }
  return names.map((name, i) => {
    const f = flags[i] ?? 0;
    return { name, flags: f, evr: versions[i] ?? '', pre: kind === 'requires' && (f & PRE_MASK) !== 0 };
  });
}

function requireString(h: RpmHeader, tag: number, label: string): string {
  const value = h.string(tag);
  if (value === undefined || value === '') {
    throw new PackageFormatError('missing_tag', `the package header has no ${label}`);
  }
  return value;
}

/** Builds the file list from DIRNAMES/BASENAMES/DIRINDEXES (or legacy OLDFILENAMES). */
function readFiles(h: RpmHeader): RpmFile[] {
  let paths: string[];
  const basenames = h.stringArray(Tag.BASENAMES);
  if (basenames) {
    const dirnames = h.stringArray(Tag.DIRNAMES) ?? [];
    const dirindexes = h.numbers(Tag.DIRINDEXES) ?? [];
    if (dirindexes.length !== basenames.length) {
      throw new PackageFormatError('bad_file_list', 'basename and dirindex counts differ');
    }
    paths = basenames.map((base, i) => {
      const dir = dirnames[dirindexes[i] ?? -1];
      if (dir === undefined) throw new PackageFormatError('bad_file_list', `file ${base} points at a missing directory`);
      return dir + base;
    });
  } else {
    paths = h.stringArray(Tag.OLDFILENAMES) ?? [];
  }
  const count = paths.length;
  const column = <T>(values: T[] | undefined, fallback: T, label: string): T[] => {
    if (!values) return new Array<T>(count).fill(fallback);
    if (values.length !== count) throw new PackageFormatError('bad_file_list', `${label} count differs from the file count`);
    return values;
  };
  const modes = column(h.numbers(Tag.FILEMODES), 0, 'file mode');
  const flags = column(h.numbers(Tag.FILEFLAGS), 0, 'file flag');
  const sizes = column(h.numbers(Tag.LONGFILESIZES) ?? h.numbers(Tag.FILESIZES), 0, 'file size');
  const links = column(h.stringArray(Tag.FILELINKTOS), '', 'file link');
  const digests = column(h.stringArray(Tag.FILEDIGESTS), '', 'file digest');
  return paths.map((path, i) => {
    const mode = modes[i] ?? 0;
    const flag = flags[i] ?? 0;
    const type: RpmFileType = (mode & S_IFMT) === S_IFDIR ? 'dir' : flag & FileFlag.GHOST ? 'ghost' : 'file';
    return { path, mode, flags: flag, type, size: sizes[i] ?? 0, linkTo: links[i] ?? '', digest: digests[i] ?? '' };
  });
}

function readChangelog(h: RpmHeader): RpmChangelogEntry[] {
  const times = h.numbers(Tag.CHANGELOGTIME) ?? [];
  const names = h.stringArray(Tag.CHANGELOGNAME) ?? [];
  const texts = h.stringArray(Tag.CHANGELOGTEXT) ?? [];
  const n = Math.min(times.length, names.length, texts.length);
  const out: RpmChangelogEntry[] = [];
  for (let i = 0; i < n; i++) out.push({ time: times[i] ?? 0, author: names[i] ?? '', text: texts[i] ?? '' });
  return out;
}

/**
 * The package as a re-signed copy of its file has it: a new signature header moves the main
 * header (and the payload behind it) and changes the file's size; nothing else changes.
 */
export function withResignedLayout(pkg: RpmPackage, layout: { headerStart: number; headerEnd: number; fileSize: number }): RpmPackage {
  return { ...pkg, packageSize: layout.fileSize, headerStart: layout.headerStart, headerEnd: layout.headerEnd, payloadOffset: layout.headerEnd };
}

/** Extracts the repository view of a package from its signature and main headers. */
export function packageFromHeaders(sig: RpmHeader, h: RpmHeader, layout: RpmLayout): RpmPackage {
  const name = requireString(h, Tag.NAME, 'NAME');
  const version = requireString(h, Tag.VERSION, 'VERSION');
  const release = requireString(h, Tag.RELEASE, 'RELEASE');
  const sourceRpm = h.string(Tag.SOURCERPM) ?? '';
  // rpm's own rule: a header without SOURCERPM is a source package.
  const isSource = layout.leadType === 1 || h.has(Tag.SOURCEPACKAGE) || !h.has(Tag.SOURCERPM);
  const arch = h.string(Tag.ARCH) ?? '';
  if (!isSource && arch === '') throw new PackageFormatError('missing_tag', 'the package header has no ARCH');
  const deps = {} as Record<RpmDependencyKind, RpmDependency[]>;
  for (const [kind, tags] of Object.entries(DEP_TAGS) as [RpmDependencyKind, DepTags][]) {
    deps[kind] = readDeps(h, tags, kind);
  }
  return {
    name,
    epoch: h.number(Tag.EPOCH) ?? null,
    version,
    release,
    arch,
    isSource,
    summary: h.string(Tag.SUMMARY) ?? '',
    description: h.string(Tag.DESCRIPTION) ?? '',
    license: h.string(Tag.LICENSE) ?? '',
    url: h.string(Tag.URL) ?? '',
    vendor: h.string(Tag.VENDOR) ?? '',
    packager: h.string(Tag.PACKAGER) ?? '',
    group: h.string(Tag.GROUP) ?? '',
    buildTime: h.number(Tag.BUILDTIME) ?? 0,
    buildHost: h.string(Tag.BUILDHOST) ?? '',
    sourceRpm,
    packageSize: layout.fileSize,
    installedSize: h.number(Tag.LONGSIZE) ?? h.number(Tag.SIZE) ?? 0,
    // rpmbuild writes the payload size into the signature header; rpm merges it as ARCHIVESIZE.
    archiveSize:
      h.number(Tag.LONGARCHIVESIZE) ??
      h.number(Tag.ARCHIVESIZE) ??
      sig.number(SigTag.LONGARCHIVESIZE) ??
      sig.number(SigTag.PAYLOADSIZE) ??
      0,
    ...deps,
    files: readFiles(h),
    changelog: readChangelog(h),
    headerStart: layout.headerStart,
    headerEnd: layout.headerEnd,
    payloadOffset: layout.headerEnd,
    payloadCompressor: (h.string(Tag.PAYLOADCOMPRESSOR) ?? 'gzip').toLowerCase(),
    payloadFormat: h.string(Tag.PAYLOADFORMAT) ?? 'cpio',
    headerSha256: sig.string(SigTag.SHA256) ?? '',
  };
}
