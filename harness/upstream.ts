/**
 * Upstream repositories for the import tests, built with the real tools and signed with a
 * throwaway gpg key: APT with apt-ftparchive (InRelease by `gpg --clearsign`, Release.gpg by
 * `--detach-sign --armor`), RPM with createrepo_c (repomd.xml.asc), served on loopback.
 */
import { execFile } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, normalize } from 'node:path';
import { promisify } from 'node:util';
import { buildDeb, type DebSpec } from './debs.js';
import { buildRpms, type RpmSpec } from './rpms.js';

const run = promisify(execFile);

export interface GpgKey {
  home: string;
  armoredPublic: string;
  /** Signs with this key: args after `gpg --batch --homedir`. */
  gpg(args: string[]): Promise<void>;
}

/** A fresh GNUPGHOME with one ed25519 signing key. */
export async function makeGpgKey(dir: string, uid = 'Upstream Test <upstream@example.org>'): Promise<GpgKey> {
  const home = join(dir, 'gnupg');
  await mkdir(home, { recursive: true, mode: 0o700 });
  const gpg = async (args: string[]) => {
    await run('gpg', ['--batch', '--quiet', '--homedir', home, '--pinentry-mode', 'loopback', '--passphrase', '', ...args]);
  };
  await gpg(['--quick-gen-key', uid, 'ed25519', 'sign', 'never']);
  const { stdout } = await run('gpg', ['--batch', '--homedir', home, '--armor', '--export']);
  return { home, armoredPublic: stdout, gpg };
}

/** Builds `dists/<suite>/main/binary-amd64/Packages{,.gz,.xz}` and a signed Release over them. */
export async function buildAptRepo(root: string, key: GpgKey | null, debs: DebSpec[], suite = 'stable'): Promise<void> {
  const pool = join(root, 'pool', 'main');
  await mkdir(pool, { recursive: true });
  for (const spec of debs) await buildDeb(pool, spec);
  await writeAptIndexes(root, key, suite);
}

/** (Re)writes the indexes and signatures from what is in pool/. */
export async function writeAptIndexes(root: string, key: GpgKey | null, suite = 'stable'): Promise<void> {
  const dist = join(root, 'dists', suite);
  const bin = join(dist, 'main', 'binary-amd64');
  await mkdir(bin, { recursive: true });
  const { stdout } = await run('apt-ftparchive', ['packages', 'pool'], { cwd: root, maxBuffer: 256 * 1024 * 1024 });
  await writeFile(join(bin, 'Packages'), stdout);
  await run('sh', ['-c', 'gzip -9nkf Packages && xz -kf Packages'], { cwd: bin });
  await signRelease(root, key, suite);
}

/** Rewrites Release, InRelease and Release.gpg for what dists/<suite> holds now. */
export async function signRelease(root: string, key: GpgKey | null, suite = 'stable'): Promise<void> {
  const dist = join(root, 'dists', suite);
  const { stdout } = await run('apt-ftparchive', [
    '-o', `APT::FTPArchive::Release::Suite=${suite}`, '-o', `APT::FTPArchive::Release::Codename=${suite}`,
    '-o', 'APT::FTPArchive::Release::Architectures=amd64', '-o', 'APT::FTPArchive::Release::Components=main',
    'release', '.',
  ], { cwd: dist });
  await writeFile(join(dist, 'Release'), stdout);
  if (key) {
    await key.gpg(['--yes', '--clearsign', '--output', join(dist, 'InRelease'), join(dist, 'Release')]);
    await key.gpg(['--yes', '--detach-sign', '--armor', '--output', join(dist, 'Release.gpg'), join(dist, 'Release')]);
  }
}

/** Builds the RPMs into root/Packages, runs createrepo_c and signs repomd.xml. */
export async function buildRpmRepo(root: string, key: GpgKey | null, rpms: RpmSpec[]): Promise<void> {
  await buildRpms(join(root, 'Packages'), rpms);
  await writeRpmIndexes(root, key);
}

export async function writeRpmIndexes(root: string, key: GpgKey | null, extra: string[] = []): Promise<void> {
  await run('createrepo_c', ['--quiet', '--no-database', '--simple-md-filenames', ...extra, root]);
  if (key) await signRepomd(root, key);
}

export async function signRepomd(root: string, key: GpgKey): Promise<void> {
  const repomd = join(root, 'repodata', 'repomd.xml');
  await key.gpg(['--yes', '--detach-sign', '--armor', '--output', `${repomd}.asc`, repomd]);
}

export interface StaticServer {
  url: string;
  /** Paths requested so far, in order. */
  requests: string[];
  close(): Promise<void>;
}

/** Serves `root` read-only on 127.0.0.1, with ETag / If-None-Match. */
export async function serveDir(root: string): Promise<StaticServer> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
      requests.push(path);
      const file = join(root, normalize(path).replace(/^(\.\.[/\\])+/, ''));
      try {
        const info = await stat(file);
        if (!info.isFile()) throw new Error('not a file');
        const etag = `"${info.size}-${info.mtimeMs}"`;
        if (req.headers['if-none-match'] === etag) {
          res.writeHead(304, { etag }).end();
          return;
        }
        res.writeHead(200, { 'content-length': info.size, etag });
        createReadStream(file).pipe(res);
      } catch {
        res.writeHead(404).end();
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export { readFile };

/**
 * Rewrites a createrepo_c repository's primary metadata as zstd (this createrepo_c may be built
 * without zstd): primary.xml.zst replaces primary.xml.gz in repomd.xml, which is signed again.
 */
export async function recompressPrimaryZstd(root: string, key: GpgKey): Promise<void> {
  const { createHash } = await import('node:crypto');
  const repodata = join(root, 'repodata');
  await run('sh', ['-c', 'gzip -dc primary.xml.gz | zstd -q -19 -o primary.xml.zst && rm primary.xml.gz'], { cwd: repodata });
  const zst = await readFile(join(repodata, 'primary.xml.zst'));
  const repomdPath = join(repodata, 'repomd.xml');
  const repomd = await readFile(repomdPath, 'utf8');
  const updated = repomd.replace(/<data type="primary">[\s\S]*?<\/data>/, (block) => block
    .replace(/<checksum type="sha256">[0-9a-f]+<\/checksum>/, `<checksum type="sha256">${createHash('sha256').update(zst).digest('hex')}</checksum>`)
    .replace(/<location href="repodata\/primary\.xml\.gz"\/>/, '<location href="repodata/primary.xml.zst"/>')
    .replace(/<size>\d+<\/size>/, `<size>${zst.length}</size>`));
  if (updated === repomd) throw new Error('repomd.xml has no primary entry to rewrite');
  await writeFile(repomdPath, updated);
  await signRepomd(root, key);
}
