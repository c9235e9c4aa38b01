/**
 * Builds real Debian source packages with `dpkg-source -b` from a tiny debian/ tree, for tests:
 * "3.0 (quilt)" with an .orig tarball, or "3.0 (native)"; optionally a source-only .changes
 * (`dpkg-genchanges -S`). Reproducible: SOURCE_DATE_EPOCH fixes the tarballs' dates.
 */
import { execFile } from 'node:child_process';
import { chmod, mkdir, readdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface SourceSpec {
  name: string;
  /** Full Debian version, epoch included (`1:2.4.1+ds1-1~acme1`); a native package has no revision. */
  version: string;
  format: '3.0 (quilt)' | '3.0 (native)';
  binaries?: string[];
  /** Upstream files (path → content). */
  files?: Record<string, string>;
  /** Build a source-only .changes too. */
  changes?: boolean;
  /** Clear-sign the .dsc (as real ones are) with a throwaway key made in `dir`. */
  sign?: boolean;
}

export interface BuiltSource {
  dir: string;
  dsc: string;
  /** The files the .dsc names (paths). */
  files: string[];
  changes: string | null;
}

const withoutEpoch = (v: string) => v.replace(/^\d+:/, '');
const upstreamOf = (v: string) => withoutEpoch(v).replace(/-[^-]+$/, '');

/** Builds the source package in `dir` (created); the .dsc and its files end up there. */
export async function buildSourcePackage(dir: string, spec: SourceSpec): Promise<BuiltSource> {
  const native = spec.format === '3.0 (native)';
  const upstream = native ? withoutEpoch(spec.version) : upstreamOf(spec.version);
  const tree = join(dir, `${spec.name}-${upstream}`);
  await mkdir(join(tree, 'debian', 'source'), { recursive: true });
  for (const [path, content] of Object.entries(spec.files ?? { 'README': `${spec.name} ${upstream}\n` })) {
    await mkdir(join(tree, path, '..'), { recursive: true });
    await writeFile(join(tree, path), content);
  }
  const env = { ...process.env, SOURCE_DATE_EPOCH: '1764151200', TZ: 'UTC', LC_ALL: 'C' };
  if (!native) await run('tar', ['--sort=name', '--mtime=@1764151200', '--owner=0', '--group=0', '-czf', join(dir, `${spec.name}_${upstream}.orig.tar.gz`), '-C', dir, `${spec.name}-${upstream}`], { env });
  const binaries = spec.binaries ?? [`${spec.name}-bin`];
  await writeFile(join(tree, 'debian', 'control'), [
    `Source: ${spec.name}\nSection: devel\nPriority: optional\nMaintainer: Acme Builds <builds@acme.example>\nBuild-Depends: debhelper-compat (= 13)\nStandards-Version: 4.6.2\nHomepage: https://acme.example/${spec.name}\n`,
    ...binaries.map((b) => `Package: ${b}\nArchitecture: any\nDepends: \${misc:Depends}\nDescription: ${b} test package\n Built by the source package tests.\n`),
  ].join('\n'));
  await writeFile(join(tree, 'debian', 'changelog'), `${spec.name} (${spec.version}) unstable; urgency=medium\n\n  * Test build.\n\n -- Acme Builds <builds@acme.example>  Wed, 26 Nov 2025 10:00:00 +0000\n`);
  await writeFile(join(tree, 'debian', 'rules'), '#!/usr/bin/make -f\n%:\n\tdh $@\n');
  await chmod(join(tree, 'debian', 'rules'), 0o755);
  await writeFile(join(tree, 'debian', 'source', 'format'), `${spec.format}\n`);
  await run('dpkg-source', ['-b', `${spec.name}-${upstream}`], { cwd: dir, env });
  const dsc = join(dir, `${spec.name}_${withoutEpoch(spec.version)}.dsc`);
  if (spec.sign) {
    const gnupg = join(dir, '.gnupg');
    await mkdir(gnupg, { recursive: true, mode: 0o700 });
    const genv = { ...env, GNUPGHOME: gnupg };
    await run('gpg', ['--batch', '--passphrase', '', '--quick-gen-key', 'Acme Builds <builds@acme.example>', 'ed25519', 'sign', 'never'], { env: genv });
    await run('gpg', ['--batch', '--yes', '--clearsign', '--output', `${dsc}.signed`, dsc], { env: genv });
    await rename(`${dsc}.signed`, dsc);
  }
  const files = (await readdir(dir)).filter((f) => f.startsWith(`${spec.name}_`) && /\.tar\.(gz|xz)$/.test(f)).sort().map((f) => join(dir, f));
  let changes: string | null = null;
  if (spec.changes) {
    const { stdout } = await run('dpkg-genchanges', ['-S', '-sa'], { cwd: tree, env });
    changes = join(dir, `${spec.name}_${withoutEpoch(spec.version)}_source.changes`);
    await writeFile(changes, stdout);
  }
  return { dir, dsc, files, changes };
}
