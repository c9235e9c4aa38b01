import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { exec } from './apt.js';

/**
 * A real dnf confined to a folder: --installroot, its own repos.d and cache, and only the one
 * repository under test enabled, so the host is never touched. Packages are checked against the
 * repository key (gpgcheck=1) unless the caller turns it off.
 */
export async function dnfSandbox(dir: string, repo: { id: string; baseurl: string; gpgkey: string; gpgcheck?: boolean; arch?: string }) {
  for (const sub of ['root', 'repos.d', 'cache', 'downloads']) await mkdir(join(dir, sub), { recursive: true });
  const repoFile = [
    `[${repo.id}]`,
    `name=${repo.id}`,
    `baseurl=${repo.baseurl}`,
    'enabled=1',
    `gpgcheck=${repo.gpgcheck === false ? 0 : 1}`,
    'repo_gpgcheck=1',
    `gpgkey=${repo.gpgkey}`,
    'metadata_expire=0',
    '',
  ].join('\n');
  await writeFile(join(dir, 'repos.d', `${repo.id}.repo`), repoFile);
  const common = [
    `--installroot=${join(dir, 'root')}`,
    `--setopt=reposdir=${join(dir, 'repos.d')}`,
    `--setopt=cachedir=${join(dir, 'cache')}`,
    '--setopt=keepcache=0',
    '--setopt=install_weak_deps=0',
    '--releasever=9',
    `--forcearch=${repo.arch ?? 'x86_64'}`,
    `--disablerepo=*`,
    `--enablerepo=${repo.id}`,
    '--assumeyes',
  ];
  return {
    dir,
    makecache: () => exec('dnf', [...common, 'makecache']),
    list: (name: string) => exec('dnf', [...common, '--refresh', 'list', '--available', name]),
    download: (name: string) => exec('dnf', [...common, 'download', `--destdir=${join(dir, 'downloads')}`, name]),
    repoquery: (args: string[]) => exec('dnf', [...common, 'repoquery', ...args]),
    /** Imports a key into the sandbox root's rpmdb (what dnf does itself for repository packages). */
    importKey: (path: string) => exec('rpm', [`--root=${join(dir, 'root')}`, '--import', path]),
    /** Installs into the sandbox root; `localpkg_gpgcheck` makes dnf check a local file's signature too. */
    install: (specs: string[]) => exec('dnf', [...common, '--setopt=localpkg_gpgcheck=1', 'install', ...specs]),
  };
}
