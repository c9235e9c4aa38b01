/**
 * Builds real .deb files with `dpkg-deb --build` from a small description, for tests, plus a
 * raw ar writer for crafting malformed packages. Builds are reproducible (SOURCE_DATE_EPOCH):
 * the same spec gives the same bytes, a different content gives a different file.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, normalize } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Content of one packaged file; an object to set the mode (e.g. 0o755 for scripts). */
export type DebFileContent = string | Buffer | { content: string | Buffer; mode?: number };

/** What to put in the package. Relationship fields use control syntax: `libc6 (>= 2.34), foo | bar`. */
export interface DebSpec {
  name: string;
  version: string;
  /** Default `amd64`. */
  arch?: string;
  depends?: string;
  preDepends?: string;
  recommends?: string;
  provides?: string;
  conflicts?: string;
  breaks?: string;
  replaces?: string;
  /** `Source:` value, e.g. `openssl` or `openssl (3.0.2-0ubuntu1)`. */
  source?: string;
  multiArch?: 'same' | 'foreign' | 'allowed' | 'no';
  /** Synopsis, optionally followed by long-description lines. Default: "<name> test package". */
  description?: string;
  maintainer?: string;
  section?: string;
  priority?: string;
  /** Relative install path (`usr/bin/tool`) → content. Default: one file under usr/share/doc. */
  files?: Record<string, DebFileContent>;
  /** Symlinks: relative install path → target. */
  symlinks?: Record<string, string>;
  /** Install paths (absolute, e.g. `/etc/tool.conf`) listed in DEBIAN/conffiles. */
  conffiles?: string[];
  /** Write DEBIAN/md5sums for the regular files (as dh_md5sums does). */
  md5sums?: boolean;
  /** Maintainer scripts: `postinst` etc. → body (a `#!/bin/sh` line is added when missing). */
  scripts?: Partial<Record<'preinst' | 'postinst' | 'prerm' | 'postrm', string>>;
  /** Default `xz` (dpkg-deb's default). */
  compression?: 'gzip' | 'xz' | 'zstd' | 'none';
  /** Further control fields, appended in order. */
  extraControl?: Record<string, string>;
  /** Output file name inside `dir`. Default `<name>_<version>_<arch>.deb` (epoch colon removed). */
  fileName?: string;
  /** Pass --nocheck to dpkg-deb, to build packages whose control dpkg would refuse. */
  nocheck?: boolean;
}

/** Builds the package into `dir` with the real dpkg-deb and returns the .deb path. */
export async function buildDeb(dir: string, spec: DebSpec): Promise<string> {
  const arch = spec.arch ?? 'amd64';
  const root = await mkdtemp(join(dir, '.debroot-'));
  try {
    await mkdir(join(root, 'DEBIAN'), { recursive: true });
    const files = spec.files ?? { [`usr/share/doc/${spec.name}/README`]: `${spec.name} ${spec.version}\n` };
    for (const [path, value] of Object.entries(files)) {
      const target = join(root, safeRelative(path));
      await mkdir(dirname(target), { recursive: true });
      const { content, mode } = typeof value === 'string' || Buffer.isBuffer(value) ? { content: value, mode: 0o644 } : value;
      await writeFile(target, content);
      await chmod(target, mode ?? 0o644);
    }
    for (const [path, linkTarget] of Object.entries(spec.symlinks ?? {})) {
      const target = join(root, safeRelative(path));
      await mkdir(dirname(target), { recursive: true });
      await run('ln', ['-s', linkTarget, target]);
    }
    await writeFile(join(root, 'DEBIAN', 'control'), controlText(spec, arch));
    if (spec.md5sums) {
      const lines = Object.entries(files).map(([path, value]) => {
        const content = typeof value === 'string' || Buffer.isBuffer(value) ? value : value.content;
        return `${createHash('md5').update(content).digest('hex')}  ${safeRelative(path)}`;
      });
      await writeFile(join(root, 'DEBIAN', 'md5sums'), `${lines.join('\n')}\n`);
    }
    if (spec.conffiles?.length) await writeFile(join(root, 'DEBIAN', 'conffiles'), `${spec.conffiles.join('\n')}\n`);
    for (const [name, body] of Object.entries(spec.scripts ?? {})) {
      const script = join(root, 'DEBIAN', name);
      await writeFile(script, body.startsWith('#!') ? body : `#!/bin/sh\nset -e\n${body}\n`);
      await chmod(script, 0o755);
    }
    const output = join(dir, spec.fileName ?? `${spec.name}_${spec.version.replace(/^\d+:/, '')}_${arch}.deb`);
    const args = ['--root-owner-group', `-Z${spec.compression ?? 'xz'}`, ...(spec.nocheck ? ['--nocheck'] : []), '--build', root, output];
    await run('dpkg-deb', args, { env: { ...process.env, SOURCE_DATE_EPOCH: '1700000000' } });
    return output;
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/** The DEBIAN/control text buildDeb writes for `spec`. */
export function controlText(spec: DebSpec, arch = spec.arch ?? 'amd64'): string {
  const [synopsis = `${spec.name} test package`, ...longLines] = (spec.description ?? `${spec.name} test package`).split('\n');
  const fields: Array<[string, string | undefined]> = [
    ['Package', spec.name],
    ['Source', spec.source],
    ['Version', spec.version],
    ['Architecture', arch],
    ['Multi-Arch', spec.multiArch],
    ['Maintainer', spec.maintainer ?? 'Tollgate Tests <tests@example.invalid>'],
    ['Section', spec.section],
    ['Priority', spec.priority],
    ['Pre-Depends', spec.preDepends],
    ['Depends', spec.depends],
    ['Recommends', spec.recommends],
    ['Conflicts', spec.conflicts],
    ['Breaks', spec.breaks],
    ['Replaces', spec.replaces],
    ['Provides', spec.provides],
    ...Object.entries(spec.extraControl ?? {}),
    ['Description', [synopsis, ...longLines.map((line) => (line.trim() === '' ? ' .' : ` ${line}`))].join('\n')],
  ];
  return fields
    .filter((field): field is [string, string] => field[1] !== undefined)
    .map(([name, value]) => `${name}: ${value}\n`)
    .join('');
}

/** One member for writeArArchive. */
export interface RawArMember {
  name: string;
  data: Buffer;
  /** Override the size written in the header (to fake absurd or truncated sizes). */
  declaredSize?: string;
}

/** Writes an ar archive byte by byte (GNU-style short names), for malformed-package tests. */
export async function writeArArchive(path: string, members: RawArMember[], magic = '!<arch>\n'): Promise<string> {
  const parts: Buffer[] = [Buffer.from(magic, 'latin1')];
  for (const member of members) {
    const header =
      member.name.padEnd(16) +
      '1700000000'.padEnd(12) +
      '0'.padEnd(6) +
      '0'.padEnd(6) +
      '100644'.padEnd(8) +
      (member.declaredSize ?? String(member.data.length)).padEnd(10) +
      '`\n';
    parts.push(Buffer.from(header, 'latin1'), member.data);
    if (member.data.length % 2 === 1) parts.push(Buffer.from('\n'));
  }
  await writeFile(path, Buffer.concat(parts));
  return path;
}

/** Creates a tar archive of `entries` (relative path → content) with GNU tar, compressed or not. */
export async function makeTar(
  dir: string,
  entries: Record<string, string | Buffer>,
  compression: 'gzip' | 'xz' | 'zstd' | 'none' = 'gzip',
): Promise<Buffer> {
  const root = await mkdtemp(join(dir, '.tarroot-'));
  try {
    for (const [path, content] of Object.entries(entries)) {
      const target = join(root, safeRelative(path));
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, content);
    }
    const flag = { gzip: ['--gzip'], xz: ['--xz'], zstd: ['--zstd'], none: [] }[compression];
    const { stdout } = await run('tar', ['-c', ...flag, '--owner=0', '--group=0', '-C', root, '.'], {
      encoding: 'buffer',
      maxBuffer: 512 * 1024 * 1024,
    });
    return stdout;
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

function safeRelative(path: string): string {
  const clean = normalize(path);
  if (isAbsolute(clean) || clean.startsWith('..')) throw new Error(`test helper: path ${path} must be relative`);
  return clean;
}
