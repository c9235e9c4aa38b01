/**
 * Numeric constants of the RPM file format: header data types, the tags this project reads,
 * and the dependency sense flags. Values are fixed by the on-disk format (rpmtag.h / rpmds.h).
 */

/** Header entry data types. */
export const RpmType = {
  NULL: 0,
  CHAR: 1,
  INT8: 2,
  INT16: 3,
  INT32: 4,
  INT64: 5,
  STRING: 6,
  BIN: 7,
  STRING_ARRAY: 8,
  I18NSTRING: 9,
} as const;
export type RpmTypeCode = (typeof RpmType)[keyof typeof RpmType];

/** Tags of the signature header (RPMSIGTAG_*). */
export const SigTag = {
  SIZE: 1000, // header + payload size, 32-bit
  MD5: 1004,
  PAYLOADSIZE: 1007, // uncompressed payload (cpio archive) size, 32-bit
  SHA1: 269,
  LONGSIZE: 270,
  LONGARCHIVESIZE: 271,
  SHA256: 273,
} as const;

/** Tags of the main header (RPMTAG_*). */
export const Tag = {
  HEADERI18NTABLE: 100,
  NAME: 1000,
  VERSION: 1001,
  RELEASE: 1002,
  EPOCH: 1003,
  SUMMARY: 1004,
  DESCRIPTION: 1005,
  BUILDTIME: 1006,
  BUILDHOST: 1007,
  SIZE: 1009,
  VENDOR: 1011,
  LICENSE: 1014,
  PACKAGER: 1015,
  GROUP: 1016,
  URL: 1020,
  OS: 1021,
  ARCH: 1022,
  OLDFILENAMES: 1027,
  FILESIZES: 1028,
  FILEMODES: 1030,
  FILEMTIMES: 1034,
  FILEDIGESTS: 1035,
  FILELINKTOS: 1036,
  FILEFLAGS: 1037,
  FILEUSERNAME: 1039,
  FILEGROUPNAME: 1040,
  SOURCERPM: 1044,
  ARCHIVESIZE: 1046,
  PROVIDENAME: 1047,
  REQUIREFLAGS: 1048,
  REQUIRENAME: 1049,
  REQUIREVERSION: 1050,
  CONFLICTFLAGS: 1053,
  CONFLICTNAME: 1054,
  CONFLICTVERSION: 1055,
  CHANGELOGTIME: 1080,
  CHANGELOGNAME: 1081,
  CHANGELOGTEXT: 1082,
  OBSOLETENAME: 1090,
  SOURCEPACKAGE: 1106,
  PROVIDEFLAGS: 1112,
  PROVIDEVERSION: 1113,
  OBSOLETEFLAGS: 1114,
  OBSOLETEVERSION: 1115,
  DIRINDEXES: 1116,
  BASENAMES: 1117,
  DIRNAMES: 1118,
  PAYLOADFORMAT: 1124,
  PAYLOADCOMPRESSOR: 1125,
  PAYLOADFLAGS: 1126,
  /** Hex digest of the compressed payload, and its algorithm (OpenPGP hash ids: 8 = SHA-256). */
  PAYLOADDIGEST: 5092,
  PAYLOADDIGESTALGO: 5093,
  OLDSUGGESTSNAME: 1156,
  OLDSUGGESTSVERSION: 1157,
  OLDSUGGESTSFLAGS: 1158,
  OLDENHANCESNAME: 1159,
  OLDENHANCESVERSION: 1160,
  OLDENHANCESFLAGS: 1161,
  LONGARCHIVESIZE: 271,
  LONGFILESIZES: 5008,
  LONGSIZE: 5009,
  FILEDIGESTALGO: 5011,
  RECOMMENDNAME: 5046,
  RECOMMENDVERSION: 5047,
  RECOMMENDFLAGS: 5048,
  SUGGESTNAME: 5049,
  SUGGESTVERSION: 5050,
  SUGGESTFLAGS: 5051,
  SUPPLEMENTNAME: 5052,
  SUPPLEMENTVERSION: 5053,
  SUPPLEMENTFLAGS: 5054,
  ENHANCENAME: 5055,
  ENHANCEVERSION: 5056,
  ENHANCEFLAGS: 5057,
} as const;

/** Dependency sense flags (RPMSENSE_*). */
export const Sense = {
  ANY: 0,
  LESS: 1 << 1,
  GREATER: 1 << 2,
  EQUAL: 1 << 3,
  POSTTRANS: 1 << 5,
  PREREQ: 1 << 6,
  PRETRANS: 1 << 7,
  INTERP: 1 << 8,
  SCRIPT_PRE: 1 << 9,
  SCRIPT_POST: 1 << 10,
  SCRIPT_PREUN: 1 << 11,
  SCRIPT_POSTUN: 1 << 12,
  SCRIPT_VERIFY: 1 << 13,
  MISSINGOK: 1 << 19,
  RPMLIB: 1 << 24,
  CONFIG: 1 << 28,
  STRONG: 1 << 27,
} as const;

/** The comparison bits of a dependency flag word. */
export const SENSE_MASK = Sense.LESS | Sense.GREATER | Sense.EQUAL;

/**
 * Bits that make createrepo_c mark a requirement `pre="1"` in primary.xml: needed while
 * scriptlets run (Requires(pre), Requires(post), pretrans, posttrans, legacy PreReq).
 */
export const PRE_MASK = Sense.PREREQ | Sense.SCRIPT_PRE | Sense.SCRIPT_POST | Sense.PRETRANS | Sense.POSTTRANS;

/** File flags (RPMFILE_*). */
export const FileFlag = {
  CONFIG: 1 << 0,
  DOC: 1 << 1,
  MISSINGOK: 1 << 3,
  NOREPLACE: 1 << 4,
  GHOST: 1 << 6,
  LICENSE: 1 << 7,
  README: 1 << 8,
  ARTIFACT: 1 << 12,
} as const;

/** The POSIX file type bits of a file mode (S_IFMT) and the values this project distinguishes. */
export const S_IFMT = 0o170000;
export const S_IFDIR = 0o040000;
export const S_IFREG = 0o100000;
export const S_IFLNK = 0o120000;
