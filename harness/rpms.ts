/**
 * Builds real .rpm files with `rpmbuild -bb` from a small description, for tests.
 * Results are cached by the hash of the description under the system temp dir, so a test
 * suite that builds the same packages again pays only a copy.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Content of one packaged file; an object to set the mode (e.g. 0o755 for scripts). */
export type RpmFileContent = string | Buffer | { content: string | Buffer; mode?: number };

/** One changelog entry; rpm keeps them newest first, so list them that way. */
export interface RpmChangelogSpec {
  date: Date;
  author: string;
  text: string;
}

/** What to put in the package. Dependency strings use spec syntax: `bash >= 4.0`. */
export interface RpmSpec {
  name: string;
  version: string;
  release?: string;
  epoch?: number;
  arch?: 'x86_64' | 'noarch' | 'i686' | 'aarch64';
  summary?: string;
  description?: string;
  license?: string;
  url?: string;
  vendor?: string;
  packager?: string;
  group?: string;
  requires?: string[];
  /** Requires(pre): entries. */
  requiresPre?: string[];
  /** Requires(post): entries. */
  requiresPost?: string[];
  provides?: string[];
  conflicts?: string[];
  obsoletes?: string[];
  recommends?: string[];
  suggests?: string[];
  supplements?: string[];
  enhances?: string[];
  /** Absolute path → content. Files under /etc are marked %config. */
  files?: Record<string, RpmFileContent>;
  /** Directories owned by the package (%dir). */
  dirs?: string[];
  /** Files listed as %ghost (not in the payload). */
  ghosts?: string[];
  /** Symlinks: absolute path → target. */
  symlinks?: Record<string, string>;
  /** A %pre scriptlet body. */
  preScript?: string;
  payloadCompression?: 'gzip' | 'xz' | 'zstd';
  changelog?: RpmChangelogSpec[];
  /** Disable automatic requires/provides (shebang and ELF scanning). */
  noAutoReqProv?: boolean;
}

const CACHE_DIR = join(tmpdir(), 'tollgate-rpm-cache');
const PAYLOAD_MACRO = { gzip: 'w9.gzdio', xz: 'w6.xzdio', zstd: 'w19.zstdio' } as const;
const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

function changelogDate(d: Date): string {
  const day = String(d.getUTCDate()).padStart(2, '0');
  return `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${day} ${d.getUTCFullYear()}`;
}

/** Spec files treat % as a macro; file names and texts must be escaped. */
function esc(text: string): string {
  return text.replace(/%/g, '%%');
}

function fileEntry(content: RpmFileContent): { data: Buffer; mode: number } {
  if (typeof content === 'string') return { data: Buffer.from(content), mode: 0o644 };
  if (Buffer.isBuffer(content)) return { data: content, mode: 0o644 };
  const data = typeof content.content === 'string' ? Buffer.from(content.content) : content.content;
  return { data, mode: content.mode ?? 0o644 };
}

function specText(spec: RpmSpec, contentDir: string): string {
  const lines: string[] = [
    `Name: ${spec.name}`,
    `Version: ${spec.version}`,
    `Release: ${spec.release ?? '1'}`,
    `Summary: ${esc(spec.summary ?? `The ${spec.name} test package`)}`,
    `License: ${esc(spec.license ?? 'MIT')}`,
  ];
  if (spec.epoch !== undefined) lines.push(`Epoch: ${spec.epoch}`);
  if (spec.arch === 'noarch') lines.push('BuildArch: noarch');
  if (spec.url) lines.push(`URL: ${esc(spec.url)}`);
  if (spec.vendor) lines.push(`Vendor: ${esc(spec.vendor)}`);
  if (spec.packager) lines.push(`Packager: ${esc(spec.packager)}`);
  if (spec.group) lines.push(`Group: ${esc(spec.group)}`);
  if (spec.noAutoReqProv) lines.push('AutoReqProv: no');
  const deps: [string, string[] | undefined][] = [
    ['Requires', spec.requires],
    ['Requires(pre)', spec.requiresPre],
    ['Requires(post)', spec.requiresPost],
    ['Provides', spec.provides],
    ['Conflicts', spec.conflicts],
    ['Obsoletes', spec.obsoletes],
    ['Recommends', spec.recommends],
    ['Suggests', spec.suggests],
    ['Supplements', spec.supplements],
    ['Enhances', spec.enhances],
  ];
  for (const [tag, values] of deps) for (const v of values ?? []) lines.push(`${tag}: ${v}`);
  lines.push('', '%description', esc(spec.description ?? `Test package ${spec.name}.`), '');
  lines.push('%install', 'mkdir -p %{buildroot}', `cp -a '${contentDir}/.' %{buildroot}/`);
  for (const [path, target] of Object.entries(spec.symlinks ?? {})) {
    lines.push(`mkdir -p "%{buildroot}${dirname(path)}"`, `ln -s '${target}' "%{buildroot}${path}"`);
  }
  for (const d of spec.dirs ?? []) lines.push(`mkdir -p "%{buildroot}${d}"`);
  lines.push('');
  if (spec.preScript) lines.push('%pre', spec.preScript, '');
  lines.push('%files');
  for (const path of Object.keys(spec.files ?? {})) {
    lines.push(`${path.startsWith('/etc/') ? '%config ' : ''}"${esc(path)}"`);
  }
  for (const path of Object.keys(spec.symlinks ?? {})) lines.push(`"${esc(path)}"`);
  for (const d of spec.dirs ?? []) lines.push(`%dir "${esc(d)}"`);
  for (const g of spec.ghosts ?? []) lines.push(`%ghost "${esc(g)}"`);
  lines.push('');
  if (spec.changelog?.length) {
    lines.push('%changelog');
    for (const c of spec.changelog) lines.push(`* ${changelogDate(c.date)} ${esc(c.author)}`, esc(c.text), '');
  }
  return lines.join('\n') + '\n';
}

function cacheKey(spec: RpmSpec): string {
  const h = createHash('sha256');
  h.update('v2\0');
  h.update(JSON.stringify({ ...spec, files: undefined }));
  for (const [path, content] of Object.entries(spec.files ?? {})) {
    const { data, mode } = fileEntry(content);
    h.update(`\0${path}\0${mode}\0`);
    h.update(data);
  }
  return h.digest('hex').slice(0, 32);
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

async function findRpm(dir: string): Promise<string> {
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith('.rpm')) return join(entry.parentPath, entry.name);
  }
  throw new Error(`rpmbuild produced no package in ${dir}`);
}

/** Builds the package with the real rpmbuild (or takes it from the cache); returns the .rpm path in `dir`. */
export async function buildRpm(dir: string, spec: RpmSpec): Promise<string> {
  await mkdir(CACHE_DIR, { recursive: true });
  const key = cacheKey(spec);
  const arch = spec.arch ?? 'x86_64';
  const fileName = `${spec.name}-${spec.version}-${spec.release ?? '1'}.${arch}.rpm`;
  const cached = join(CACHE_DIR, `${key}-${fileName}`);
  if (!(await exists(cached))) {
    const work = await mkdtemp(join(tmpdir(), 'tollgate-rpmbuild-'));
    try {
      const contentDir = join(work, 'content');
      await mkdir(contentDir, { recursive: true });
      for (const [path, content] of Object.entries(spec.files ?? {})) {
        const { data, mode } = fileEntry(content);
        const target = join(contentDir, path);
        await mkdir(dirname(target), { recursive: true });
        await writeFile(target, data, { mode });
      }
      const specPath = join(work, `${spec.name}.spec`);
      await writeFile(specPath, specText(spec, contentDir));
      const args = [
        '-bb',
        '--nodeps',
        '--quiet',
        '--define', `_topdir ${join(work, 'top')}`,
        '--define', `_binary_payload ${PAYLOAD_MACRO[spec.payloadCompression ?? 'gzip']}`,
        '--define', '__os_install_post %{nil}',
        '--define', 'debug_package %{nil}',
        '--define', '_build_id_links none',
        '--define', '_buildhost tollgate-test',
        ...(arch === 'noarch' ? [] : ['--target', arch]),
        specPath,
      ];
      await run('rpmbuild', args, { maxBuffer: 16 * 1024 * 1024 });
      const built = await findRpm(join(work, 'top', 'RPMS'));
      const partial = `${cached}.${process.pid}.${Date.now()}.part`;
      await copyFile(built, partial);
      await rename(partial, cached);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }
  await mkdir(dir, { recursive: true });
  const out = join(dir, fileName);
  await copyFile(cached, out);
  return out;
}

/** Builds several packages, a few at a time. */
export async function buildRpms(dir: string, specs: RpmSpec[], parallel = 4): Promise<string[]> {
  const results = new Array<string>(specs.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < specs.length) {
      const i = next++;
      results[i] = await buildRpm(dir, specs[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, specs.length) }, worker));
  return results;
}
