/**
 * The large signed APT upstream of bench/import.ts and bench/lib/import-profile.ts: the machine's
 * Debian bookworm main `Packages` (APT lists) when present, else generated paragraphs; gzip-compressed,
 * Release signed by a throwaway gpg key (InRelease).
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import type { makeGpgKey } from '../../harness/upstream.js';

const run = promisify(execFile);
export const BOOKWORM_LISTS = '/var/lib/apt/lists/deb.debian.org_debian_dists_bookworm_main_binary-amd64_Packages.lz4';

/** The `Packages` text: bookworm main from the APT lists, else `synthetic` generated paragraphs. */
export async function bigPackages(synthetic: number, forceSynthetic: boolean): Promise<{ text: Buffer; what: string; debian: boolean }> {
  if (existsSync(BOOKWORM_LISTS) && !forceSynthetic) {
    const chunks: Buffer[] = [];
    const child = spawn('lz4', ['-dc', BOOKWORM_LISTS]);
    for await (const chunk of child.stdout) chunks.push(chunk as Buffer);
    return { text: Buffer.concat(chunks), what: 'Debian bookworm main (APT lists)', debian: true };
  }
  const parts: string[] = [];
  for (let i = 0; i < synthetic; i++) {
    const sha = Buffer.from(String(i).padStart(32, '0')).toString('hex');
    parts.push(`Package: synth-${i}\nVersion: 1.${i % 50}-1\nArchitecture: amd64\nDepends: ${i > 0 ? `synth-${i - 1}, ` : ''}libc6 (>= 2.34)\nFilename: pool/main/s/synth-${i}.deb\nSize: ${1000 + i}\nSHA256: ${sha}\nDescription: synthetic package ${i}\n long description of synthetic package ${i}\n`);
  }
  return { text: Buffer.from(parts.join('\n')), what: `${synthetic} generated paragraphs`, debian: false };
}

/** `repo/dists/<suite>/main/binary-amd64/Packages.gz` with a Release and its InRelease. */
export async function signedSuite(repo: string, suite: string, packages: Buffer, gpg: Awaited<ReturnType<typeof makeGpgKey>>): Promise<void> {
  const dist = join(repo, 'dists', suite);
  await mkdir(join(dist, 'main', 'binary-amd64'), { recursive: true });
  await writeFile(join(dist, 'main', 'binary-amd64', 'Packages.gz'), gzipSync(packages, { level: 6 }));
  const { stdout } = await run('apt-ftparchive', ['-o', `APT::FTPArchive::Release::Suite=${suite}`, 'release', '.'], { cwd: dist, maxBuffer: 64 * 1024 * 1024 });
  await writeFile(join(dist, 'Release'), stdout);
  await gpg.gpg(['--yes', '--clearsign', '--output', join(dist, 'InRelease'), join(dist, 'Release')]);
}

/** The closures bench/import.ts times: the largest of bookworm, then ordinary ones. */
export const DEBIAN_RESOLVES = ['texlive-full', 'kde-full', 'gnome', 'libreoffice', 'openjdk-17-jdk', 'nginx', 'python3', 'curl'];
