/** Test helpers: the reference `apt-ftparchive`, and the facts it would compute for a .deb. */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import type { PoolFileFacts } from '../../../../src/domain/repo/apt/stanza.js';

const run = promisify(execFile);

/** `apt-ftparchive packages pool` run in `aptRoot`: the reference Packages text. */
export async function ftparchivePackages(aptRoot: string): Promise<string> {
  const { stdout } = await run('apt-ftparchive', ['packages', 'pool'], { cwd: aptRoot, maxBuffer: 256 * 1024 * 1024 });
  return stdout;
}

/** `apt-ftparchive release .` run in `distDir` with the given Release fields. */
export async function ftparchiveRelease(distDir: string, fields: Record<string, string>): Promise<string> {
  const opts = Object.entries(fields).flatMap(([k, v]) => ['-o', `APT::FTPArchive::Release::${k}=${v}`]);
  const { stdout } = await run('apt-ftparchive', [...opts, 'release', '.'], { cwd: distDir });
  return stdout;
}

/** The raw DEBIAN/control of a .deb, parsed into `[name, value]` pairs (continuation lines kept verbatim). */
export async function controlFieldsOf(deb: string): Promise<Array<[string, string]>> {
  const { stdout } = await run('dpkg-deb', ['--info', deb, 'control']);
  const fields: Array<[string, string]> = [];
  for (const line of stdout.split('\n')) {
    if (line === '') continue;
    const last = fields[fields.length - 1];
    if (/^[ \t]/.test(line) && last) last[1] += `\n${line}`;
    else {
      const colon = line.indexOf(':');
      fields.push([line.slice(0, colon), line.slice(colon + 1).trim()]);
    }
  }
  return fields;
}

/** Size and digests of a file, as the pool path `filename`. */
export async function fileFacts(path: string, filename: string): Promise<PoolFileFacts> {
  const data = await readFile(path);
  const hex = (algo: string): string => createHash(algo).update(data).digest('hex');
  return { filename, size: data.length, md5: hex('md5'), sha1: hex('sha1'), sha256: hex('sha256'), sha512: hex('sha512') };
}

/** Split a Packages text into stanzas (each ending in one newline). */
export function splitStanzas(packages: string): string[] {
  return packages.split(/\n\n+/).filter((s) => s.trim() !== '').map((s) => `${s.trimEnd()}\n`);
}
