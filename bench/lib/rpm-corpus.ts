/**
 * A corpus of many real, distinct .rpm files for benchmarks, built with the real rpmbuild.
 *
 * One rpmbuild run per package costs ~100 ms of process start-up, spec parsing and payload
 * writing, so 10,000 packages would take many minutes. Instead each spec declares a batch of
 * sub-packages (`%package -n <name>`), each with its own name, version, release, arch, summary,
 * description, dependencies and files: one rpmbuild run then writes a whole batch of genuine,
 * independently valid packages (only the changelog and source rpm are shared inside a batch).
 * Batches run in parallel, and a finished batch leaves a marker, so an interrupted build resumes
 * and a complete corpus is reused as is.
 */
import { execFile } from 'node:child_process';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { runPool } from './pool.js';

const run = promisify(execFile);

/** Bump when the generated packages change, so a stale cache is not reused. */
const CORPUS_VERSION = 'v1';
const WORDS = [
  'alpha', 'bolt', 'cedar', 'delta', 'ember', 'flint', 'grove', 'harbor', 'iris', 'juniper',
  'kestrel', 'lumen', 'maple', 'nimbus', 'onyx', 'pixel', 'quartz', 'raven', 'sable', 'tundra',
  'umber', 'vertex', 'willow', 'xenon', 'yarrow', 'zephyr', 'libcore', 'python3', 'perl', 'golang',
];

/** What one generated package looks like; the name is unique within the corpus. */
export interface CorpusPackage {
  index: number;
  name: string;
  version: string;
  release: string;
  arch: 'x86_64' | 'noarch';
  fileName: string;
}

/** Deterministic description of package `i` (no randomness: the corpus is reproducible). */
export function corpusPackage(i: number, prefix = 'bench'): CorpusPackage {
  const name = `${prefix}-${WORDS[i % WORDS.length]}-${String(i).padStart(5, '0')}`;
  const version = `${1 + (i % 7)}.${(i * 13) % 23}.${i % 5}`;
  const release = `${1 + (i % 3)}.el9`;
  const arch = i % 5 === 0 ? 'noarch' : 'x86_64';
  return { index: i, name, version, release, arch, fileName: `${name}-${version}-${release}.${arch}.rpm` };
}

function subpackageSpec(p: CorpusPackage, total: number, prefix: string): string[] {
  const i = p.index;
  const dep = (k: number) => corpusPackage((i + k * 7919) % total, prefix);
  const lines = [
    `%package -n ${p.name}`,
    `Version: ${p.version}`,
    `Release: ${p.release}`,
    `Summary: ${WORDS[(i * 3) % WORDS.length]} toolkit component number ${i} for the benchmark corpus`,
    ...(p.arch === 'noarch' ? ['BuildArch: noarch'] : []),
    `Group: ${i % 2 ? 'System Environment/Libraries' : 'Applications/System'}`,
    'Requires: glibc >= 2.34',
    'Requires: /bin/sh',
    `Requires: ${dep(1).name} >= ${dep(1).version}`,
    `Requires(post): ${dep(2).name}`,
  ];
  for (let k = 0; k < i % 4; k++) lines.push(`Requires: lib${WORDS[(i + k) % WORDS.length]}${k}.so.${k + 1}()(64bit)`);
  lines.push(`Provides: lib${p.name}.so.${1 + (i % 3)}()(64bit)`, `Provides: ${p.name}-api = ${p.version}`);
  if (i % 11 === 0) lines.push(`Obsoletes: ${p.name}-legacy < ${p.version}`);
  if (i % 17 === 0) lines.push(`Conflicts: ${dep(3).name} < 0.5`);
  if (i % 9 === 0) lines.push(`Recommends: ${dep(4).name}`);
  const paragraph = `${p.name} provides the ${WORDS[(i * 7) % WORDS.length]} services of the synthetic benchmark corpus.`;
  lines.push('', `%description -n ${p.name}`, Array.from({ length: 1 + (i % 6) }, () => paragraph).join(' '), '');
  return lines;
}

/** Files of package `i`, relative to the build root: 3 to 27 of them, in bin, etc, lib and share. */
function packageFiles(p: CorpusPackage): Record<string, { data: string; mode: number }> {
  const files: Record<string, { data: string; mode: number }> = {
    [`usr/bin/${p.name}`]: { data: `#!/bin/sh\necho ${p.name} ${p.version}\n`, mode: 0o755 },
    [`etc/${p.name}/${p.name}.conf`]: { data: `# ${p.name}\nenabled=1\n`, mode: 0o644 },
    [`usr/share/doc/${p.name}/README`]: { data: `${p.name} ${p.version}\n`, mode: 0o644 },
  };
  const dir = p.arch === 'noarch' ? `usr/share/${p.name}` : `usr/lib64/${p.name}`;
  for (let k = 0; k < (p.index * 7) % 25; k++) files[`${dir}/module-${k}.dat`] = { data: `${p.name}:${k}\n`, mode: 0o644 };
  return files;
}

function batchSpec(batch: CorpusPackage[], total: number, prefix: string, contentDir: string): string {
  const first = batch[0]!;
  const lines = [
    `Name: ${prefix}-batch-${first.index}`,
    'Version: 1.0',
    'Release: 1',
    'Summary: Benchmark corpus batch',
    'License: MIT',
    'URL: https://example.invalid/tollgate-bench',
    'Vendor: Tollgate bench',
    'Packager: Bench Builder <bench@example.invalid>',
    'AutoReqProv: no',
    '',
    '%description',
    'Not built: only the sub-packages are.',
    '',
  ];
  for (const p of batch) lines.push(...subpackageSpec(p, total, prefix));
  lines.push('%install', 'mkdir -p %{buildroot}', `cp -a '${contentDir}/.' %{buildroot}/`, '');
  for (const p of batch) {
    lines.push(`%files -n ${p.name}`, `/usr/bin/${p.name}`, `%dir /etc/${p.name}`, `%config(noreplace) /etc/${p.name}/${p.name}.conf`);
    lines.push(`%doc /usr/share/doc/${p.name}/README`);
    if ((p.index * 7) % 25 > 0) lines.push(p.arch === 'noarch' ? `/usr/share/${p.name}` : `/usr/lib64/${p.name}`);
    lines.push('');
  }
  lines.push('%changelog');
  const base = Date.UTC(2024, 0, 1) - (first.index % 50) * 86_400_000;
  for (let k = 0; k < 3 + (first.index % 6); k++) {
    const d = new Date(base - k * 30 * 86_400_000);
    const day = d.toUTCString().slice(0, 16).replace(',', '').split(' '); // [Mon, 01, Jan, 2024]
    lines.push(`* ${day[0]} ${day[2]} ${day[1]} ${day[3]} Bench Builder <bench@example.invalid> - 1.0-${10 - k}`);
    lines.push(`- Change ${k} of batch ${first.index}: fix issue #${first.index + k}`, '');
  }
  return lines.join('\n') + '\n';
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(() => true, () => false);
}

async function buildBatch(dir: string, batch: CorpusPackage[], total: number, prefix: string): Promise<void> {
  const marker = join(dir, `.batch-${batch[0]!.index}.done`);
  if (await exists(marker)) return;
  const work = join(dir, `.work-${batch[0]!.index}`);
  await rm(work, { recursive: true, force: true });
  const content = join(work, 'content');
  for (const p of batch) {
    for (const [path, f] of Object.entries(packageFiles(p))) {
      const target = join(content, path);
      await mkdir(join(target, '..'), { recursive: true });
      await writeFile(target, f.data, { mode: f.mode });
    }
  }
  const specPath = join(work, 'batch.spec');
  await writeFile(specPath, batchSpec(batch, total, prefix, content));
  const out = join(work, 'out');
  await run('rpmbuild', [
    '-bb', '--nodeps', '--quiet', '--target', 'x86_64',
    '--define', `_topdir ${join(work, 'top')}`,
    '--define', `_rpmdir ${out}`,
    '--define', '_build_name_fmt %%{NAME}-%%{VERSION}-%%{RELEASE}.%%{ARCH}.rpm',
    '--define', '_binary_payload w6.gzdio',
    '--define', '__os_install_post %{nil}',
    '--define', 'debug_package %{nil}',
    '--define', '_build_id_links none',
    '--define', '_buildhost tollgate-bench',
    specPath,
  ], { maxBuffer: 64 * 1024 * 1024 });
  const built = new Set(await readdir(out));
  for (const p of batch) {
    if (!built.has(p.fileName)) throw new Error(`rpmbuild did not produce ${p.fileName}`);
    await rename(join(out, p.fileName), join(dir, p.fileName));
  }
  await rm(work, { recursive: true, force: true });
  await writeFile(marker, '');
}

/** Options of {@link buildRpmCorpus}. */
export interface RpmCorpusOptions {
  /** Packages per rpmbuild run; default 100. */
  batchSize?: number;
  /** Concurrent rpmbuild runs; default: the number of CPUs. */
  parallel?: number;
  /** Name prefix; packages of different prefixes never collide. */
  prefix?: string;
  /** Called after each batch with the number of packages done. */
  onProgress?: (done: number, total: number) => void;
}

/**
 * Builds (or reuses) `count` distinct real packages in `<root>/<prefix>-<count>-<version>/`;
 * returns their paths in index order.
 */
export async function buildRpmCorpus(root: string, count: number, options: RpmCorpusOptions = {}): Promise<string[]> {
  const prefix = options.prefix ?? 'bench';
  const batchSize = options.batchSize ?? 100;
  const dir = join(root, `${prefix}-${count}-${CORPUS_VERSION}`);
  await mkdir(dir, { recursive: true });
  const packages = Array.from({ length: count }, (_, i) => corpusPackage(i, prefix));
  const batches: CorpusPackage[][] = [];
  for (let i = 0; i < count; i += batchSize) batches.push(packages.slice(i, i + batchSize));
  let done = 0;
  await runPool(batches, options.parallel ?? availableParallelism(), async (batch) => {
    await buildBatch(dir, batch, count, prefix);
    done += batch.length;
    options.onProgress?.(done, count);
  });
  return packages.map((p) => join(dir, p.fileName));
}
