/**
 * Folders a benchmark writes into, emptied so that the deletion does not slow the run it precedes.
 *
 * On ext4 without a journal (this machine's root filesystem), an inode freed less than a minute
 * ago is not handed out again (five minutes more while its inode-table block is unwritten), and
 * every file created in its block group scans past each such inode, one buffer-cache look-up
 * apiece (`recently_deleted` in fs/ext4/ialloc.c; 13 % of all CPU samples under `perf` during an
 * upload burst). A bench that deleted its last run's data (~4,600 files and folders) just before
 * uploading measured that too: 2.6–4.6 ms of kernel CPU per tiny upload instead of 1.6–2.0, and up
 * to a quarter fewer uploads/s (journal, 2026-11-30). So a run's folders are removed when it ends,
 * synced, and the next run waits, if it must, until that deletion is a minute old.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** How long ext4 skips an inode deleted and written back (RECENTCY_MIN), plus a second of margin. */
const RECENT_MS = 61_000;

/** The mount that holds `path`: the longest mount point that is a prefix of its real path. */
function mountOf(path: string, mounts: string): { source: string; type: string } | null {
  let real = path;
  while (!existsSync(real)) real = dirname(real);
  real = realpathSync(real);
  let best: { point: string; source: string; type: string } | null = null;
  for (const line of mounts.split('\n')) {
    const [source, point, type] = line.split(' ');
    if (!source || !point || !type) continue;
    const inside = point === '/' || real === point || real.startsWith(`${point}/`);
    if (inside && (!best || point.length > best.point.length)) best = { point, source, type };
  }
  return best;
}

/**
 * True where deleting files slows the next creations for a minute: ext4 mounted without a
 * journal (no jbd2 entry for its device). Anywhere else (a journalled ext4, XFS, tmpfs) the
 * inode is reused at once and the run need not wait.
 */
export function skipsRecentlyFreedInodes(path: string, mounts = readFileSync('/proc/mounts', 'utf8'), journals = '/proc/fs/jbd2'): boolean {
  const mount = mountOf(path, mounts);
  if (!mount || mount.type !== 'ext4' || !mount.source.startsWith('/dev/')) return false;
  const device = basename(existsSync(mount.source) ? realpathSync(mount.source) : mount.source);
  return !existsSync(join(journals, `${device}-8`));
}

const stampOf = (work: string) => join(work, '.last-deletion');

async function markDeleted(work: string): Promise<void> {
  // The 60 s apply once the inode-table blocks are written back; a dirty one is skipped 300 s more.
  await run('sync');
  await writeFile(stampOf(work), String(Date.now()));
}

/**
 * Removes each of `dirs` (a run killed before its clean-up leaves them), creates `work` (where the
 * time of the last deletion is kept), and, if one of `dirs` is on a filesystem where it matters,
 * waits until that deletion is a minute old.
 */
export async function freshDirs(
  work: string,
  dirs: readonly string[],
  { affected = skipsRecentlyFreedInodes, wait = (ms: number) => sleep(ms) }: { affected?: (dir: string) => boolean; wait?: (ms: number) => Promise<unknown> } = {},
): Promise<void> {
  await mkdir(work, { recursive: true });
  const leftovers = (await Promise.all(dirs.map((d) => stat(d).then(() => d, () => null)))).filter((d) => d !== null);
  if (leftovers.length > 0) {
    await Promise.all(leftovers.map((d) => rm(d, { recursive: true, force: true })));
    await markDeleted(work);
  }
  if (!dirs.some((d) => affected(d))) return;
  const deletedAt = Number(await readFile(stampOf(work), 'utf8').catch(() => '0'));
  const remaining = deletedAt + RECENT_MS - Date.now();
  if (remaining <= 0) return;
  console.error(`waiting ${Math.ceil(remaining / 1000)} s: files deleted by the last run a moment ago would slow this run's file creation (ext4 without a journal; bench/lib/fresh-dirs.ts)`);
  await wait(remaining);
}

/** Removes a run's folders once its figures are out (`keep`: left for a look; the next run removes them). */
export async function removeRunDirs(work: string, dirs: readonly string[], keep = process.argv.includes('--keep-data')): Promise<void> {
  if (keep) {
    console.error(`kept: ${dirs.join(', ')}`);
    return;
  }
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  await markDeleted(work);
}
