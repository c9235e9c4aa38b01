import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

async function exec(cmd: string, args: string[], cwd?: string): Promise<CommandResult> {
  try {
    const { stdout, stderr } = await run(cmd, args, { cwd, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/**
 * A real apt-get confined to a folder: its own sources list, keyring (signed-by), state and cache,
 * so the host's apt configuration and package database are never touched.
 */
export async function aptSandbox(dir: string, opts: { architectures?: readonly string[] } = {}) {
  for (const sub of ['etc/auth.conf.d', 'etc/sources.list.d', 'etc/preferences.d', 'etc/trusted.gpg.d', 'state/lists/partial', 'cache/archives/partial', 'downloads']) {
    await mkdir(join(dir, sub), { recursive: true });
  }
  await writeFile(join(dir, 'state', 'status'), '');
  const options = [
    `Dir::Etc::SourceList=${join(dir, 'etc', 'sources.list')}`,
    `Dir::Etc::netrc=${join(dir, 'etc', 'auth.conf')}`,
    `Dir::Etc::netrcparts=${join(dir, 'etc', 'auth.conf.d')}`,
    `Dir::Etc::SourceParts=${join(dir, 'etc', 'sources.list.d')}`,
    `Dir::Etc::Preferences=${join(dir, 'etc', 'preferences')}`,
    `Dir::Etc::PreferencesParts=${join(dir, 'etc', 'preferences.d')}`,
    `Dir::Etc::Trusted=${join(dir, 'etc', 'trusted.gpg')}`,
    `Dir::Etc::TrustedParts=${join(dir, 'etc', 'trusted.gpg.d')}`,
    `Dir::State=${join(dir, 'state')}`,
    `Dir::State::status=${join(dir, 'state', 'status')}`,
    `Dir::Cache=${join(dir, 'cache')}`,
    'APT::Architecture=amd64',
    `APT::Architectures=${(opts.architectures ?? ['amd64']).join(',')}`,
    'APT::Sandbox::User=root',
    'Acquire::Languages=none',
    'Acquire::Retries=0',
    'Debug::NoLocking=1',
  ].flatMap((o) => ['-o', o]);
  const update = () => exec('apt-get', [...options, '-q', 'update']);
  return {
    dir,
    async setSource(line: string) {
      await writeFile(join(dir, 'etc', 'sources.list'), `${line}\n`);
    },
    update,
    /** `update`, asserting that it succeeded with neither a warning nor an error (apt exits 0 after some warnings). */
    async updateCleanly(): Promise<CommandResult> {
      const result = await update();
      assert.equal(result.code, 0, result.stderr + result.stdout);
      assert.doesNotMatch(result.stderr, /W: |E: /, result.stderr);
      return result;
    },
    download: (spec: string) => exec('apt-get', [...options, '-q', 'download', spec], join(dir, 'downloads')),
    /** `apt-get source` (needs a `deb-src` line): fetches the .dsc and its files, checks them against Sources, and unpacks with dpkg-source unless `downloadOnly`. */
    source: (spec: string, opts: { downloadOnly?: boolean } = {}) => exec('apt-get', [...options, '-q', 'source', ...(opts.downloadOnly ? ['--download-only'] : []), spec], join(dir, 'downloads')),
    policy: (name: string) => exec('apt-cache', [...options, 'policy', name]),
    show: (name: string) => exec('apt-cache', [...options, 'show', name]),
    /** apt-file over the Contents indices `update` fetched (apt-file's apt.conf.d snippet asks for them); the native architecture's unless named. */
    fileSearch: (pattern: string, arch?: string) => exec('apt-file', [...options, ...(arch ? ['--architecture', arch] : []), 'search', pattern]),
    indexTargets: () => exec('apt-get', [...options, 'indextargets']),
  };
}

export { exec };
