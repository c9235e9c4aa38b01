/**
 * The `by-hash/` objects of an APT index folder (`MD5Sum/`, `SHA1/`, `SHA256/`, `SHA512/`): an
 * object is placed once under its SHA-256 and hard-linked under its other digests, exposed under
 * its file name by a hard link, and pruned once no recent generation names it. Shared by the
 * index files (apt-index-files.ts) and the Contents files (apt-contents-files.ts).
 */
import { constants } from 'node:fs';
import { copyFile, link, open, readdir, readFile, rename, stat, utimes, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { fsyncDir, inFolder, isErrno, LINK_REFUSED, linkReplacing, openCutCopy, removeFile, writeFileAtomic } from './atomic.js';
import { tempPathFor } from './temp-names.js';
import type { ContentDigests } from './hash-stream.js';
import type { SpareCopies } from './spare-copies.js';

const BY_HASH_DIRS = [
  ['MD5Sum', 'md5'],
  ['SHA1', 'sha1'],
  ['SHA256', 'sha256'],
  ['SHA512', 'sha512'],
] as const;
const GENERATIONS_FILE = '.generations.json';

/** Where the by-hash object of content with these digests lives (placeObject puts it there). */
export const objectPath = (indexDir: string, d: ContentDigests) => join(indexDir, 'by-hash', 'SHA256', d.sha256);

/** A published file of an index folder that appends extend, and where its object is. */
export interface ExtendedFile {
  name: string;
  object: string;
  digests: { size: number };
  /** For .xz: where the index begins, which an append cuts off and writes anew. */
  xz?: { indexOffset: number } | null;
}

export interface ExtendOptions {
  sync: boolean;
  /** Copies of the current objects made ahead of the append (see spare-copies.ts). */
  spares?: SpareCopies;
}

const spareSlot = (indexDir: string, name: string) => join(indexDir, name);
const cutOf = (file: ExtendedFile) => (file.xz ? file.xz.indexOffset : null);

/**
 * The object of a new generation: a copy of `from`'s object (an .xz one cut where its index
 * begins) extended by `tail`, placed as the object of `d` (its digests, computed beforehand from saved
 * hash states). The copy is the spare made after the last publish when there is one. Returns its path.
 */
export async function extendObject(indexDir: string, from: ExtendedFile, d: ContentDigests, tail: Uint8Array, o: ExtendOptions): Promise<string> {
  const keepBytes = cutOf(from);
  const spare = await o.spares?.take(spareSlot(indexDir, from.name), from.object, keepBytes);
  let handle = spare ? await openSpare(spare, keepBytes ?? from.digests.size) : null;
  const tmp = handle ? spare! : tempPathFor(objectPath(indexDir, d));
  // openCutCopy removes its temp file when it fails.
  handle ??= await openCutCopy(from.object, tmp, keepBytes, (source, to) => inFolder(to, () => copyFile(source, to)));
  try {
    await handle.writeFile(tail);
    if (o.sync) await handle.sync();
  } catch (error) {
    await handle.close().catch(() => undefined);
    await removeFile(tmp);
    throw error;
  }
  // Placed while it closes: on an append's serial path, each call waited for is a thread-pool round trip.
  const [placed] = await Promise.allSettled([placeObject(indexDir, tmp, d), handle.close()]);
  if (placed.status === 'rejected') throw placed.reason;
  return placed.value;
}

/**
 * A spare opened for appending, if it is whole: one removed meanwhile (a start-up clean-up) is not
 * created again, and one of another size is not extended (its digests would not be the ones
 * Release names). Null then, and the caller copies.
 */
async function openSpare(path: string, size: number): Promise<FileHandle | null> {
  const handle = await open(path, constants.O_WRONLY | constants.O_APPEND).catch(() => null);
  if (handle && (await handle.stat()).size === size) return handle;
  await handle?.close();
  await removeFile(path);
  return null;
}

/**
 * After a publish: spare copies of the files it wrote, for the next append to extend without
 * copying (on a filesystem that shares extents they cost nothing; elsewhere, idle time).
 */
export function prepareSpares(indexDir: string, files: readonly ExtendedFile[], o: ExtendOptions): void {
  for (const file of files) o.spares?.prepare(spareSlot(indexDir, file.name), file.object, cutOf(file), o.sync);
}

/**
 * Moves a finished temp file to `by-hash/SHA256/<hex>` and links it under the other digest
 * names; returns the object's path. Objects are content-addressed, so one already there (the same
 * bytes) is kept and the temp file dropped: renamed over, its inode would lose its only name while
 * another placement of the same bytes (two architectures' empty Contents, written side by side)
 * links it under the other names, and that link fails (ENOENT).
 */
export async function placeObject(indexDir: string, tmp: string, d: ContentDigests): Promise<string> {
  const paths = BY_HASH_DIRS.map(([dir, algo]) => join(indexDir, 'by-hash', dir, d[algo]));
  const object = objectPath(indexDir, d);
  const outcome = await inFolder(object, () => linkUnlessPresent(tmp, object));
  const now = new Date();
  // The temp name goes while the other names are made (it was renamed where links are refused).
  await Promise.all([
    outcome === 'renamed' ? null : removeFile(tmp),
    // Kept: touched, so the sweep of objects no generation names sees it as just written.
    outcome === 'kept' ? utimes(object, now, now) : null,
    ...paths.filter((path) => path !== object).map((path) => inFolder(path, () => linkReplacing(object, path, { nameLikelyFree: true }))),
  ]);
  return object;
}

/**
 * Gives `tmp`'s file the name `object` unless a file holds it already ('kept': that one stays). A
 * link ('linked': the caller removes the temp name; a rename would replace), or a rename where the
 * filesystem refuses hard links ('renamed').
 */
async function linkUnlessPresent(tmp: string, object: string): Promise<'linked' | 'renamed' | 'kept'> {
  try {
    await link(tmp, object);
    return 'linked';
  } catch (error) {
    if (isErrno(error, 'EEXIST')) return 'kept';
    if (!isErrno(error, ...LINK_REFUSED)) throw error;
    await rename(tmp, object);
    return 'renamed';
  }
}

/** Makes `indexDir/<name>` the given object (hard link, atomic replace). */
async function exposeAs(indexDir: string, name: string, object: string): Promise<void> {
  await linkReplacing(object, join(indexDir, name));
}

/** Exposes each variant under its name (a hard link to its object), then fsyncs the folders that changed. */
export async function finishWrite(indexDir: string, variants: ReadonlyArray<{ name: string; object: string }>, sync: boolean): Promise<void> {
  await Promise.all(variants.map((v) => exposeAs(indexDir, v.name, v.object)));
  if (sync) await Promise.all([...BY_HASH_DIRS.map(([dir]) => fsyncDir(join(indexDir, 'by-hash', dir))), fsyncDir(indexDir)]);
}

export interface PruneOptions {
  /** Generations always kept, the current one included. */
  keep: number;
  /** Younger generations are kept too (a client between InRelease and its index files)… */
  minAgeSeconds: number;
  /** …but never more than this many, so a burst of publishes cannot pile up full-size copies. */
  maxKept: number;
  /** Also delete by-hash files no generation names (after a full write; appends skip the scan). */
  sweep: boolean;
}

interface Generation {
  at: number;
  files: string[];
}

/**
 * Records this generation's by-hash objects in a manifest and deletes the objects of the
 * generations that are neither among the last `keep` nor young enough to be in use.
 */
export async function pruneByHash(indexDir: string, state: { variants: ReadonlyArray<{ digests: ContentDigests }> }, o: PruneOptions): Promise<void> {
  const current = state.variants.flatMap((v) => BY_HASH_DIRS.map(([dir, algo]) => `by-hash/${dir}/${v.digests[algo]}`));
  const manifestPath = join(indexDir, 'by-hash', GENERATIONS_FILE);
  let generations: Generation[] = [];
  try {
    const parsed: unknown = JSON.parse(await readFile(manifestPath, 'utf8'));
    if (Array.isArray(parsed)) {
      generations = parsed.filter((g): g is Generation => typeof g === 'object' && g !== null && typeof (g as Generation).at === 'number' && Array.isArray((g as Generation).files));
    }
  } catch (err) {
    // A missing or damaged manifest only means less is known to keep; the sweep rule below protects.
    if (!isErrno(err, 'ENOENT') && !(err instanceof SyntaxError)) throw err;
  }
  const now = Date.now();
  const key = current.join();
  generations = [{ at: now, files: current }, ...generations.filter((g) => g.files.join() !== key)];
  const kept = generations.filter((g, i) => i < o.keep || (i < o.maxKept && now - g.at < o.minAgeSeconds * 1000));
  const dropped = generations.slice(kept.length);
  const keptFiles = new Set(kept.flatMap((g) => g.files));
  // Side by side: one after another, a dozen unlinks held the next publish ~20 ms under load.
  const droppedFiles = new Set(dropped.flatMap((g) => g.files).filter((rel) => !keptFiles.has(rel)));
  await Promise.all([...droppedFiles].map((rel) => removeFile(join(indexDir, rel))));
  if (o.sweep) {
    const cutoff = now - o.minAgeSeconds * 1000;
    for (const [dir] of BY_HASH_DIRS) {
      let names: string[];
      try {
        names = await readdir(join(indexDir, 'by-hash', dir));
      } catch (err) {
        if (isErrno(err, 'ENOENT')) continue;
        throw err;
      }
      await Promise.all(names.map(async (name) => {
        const rel = `by-hash/${dir}/${name}`;
        if (keptFiles.has(rel) || name.startsWith('.')) return;
        const info = await stat(join(indexDir, rel)).catch(() => null);
        if (info && info.isFile() && info.mtimeMs < cutoff) await removeFile(join(indexDir, rel));
      }));
    }
  }
  // Not fsynced: after a power loss an older manifest only keeps fewer files (see above).
  // Pruning runs after the publish has answered: the folder may be gone since (a removed distribution).
  await writeFileAtomic(manifestPath, `${JSON.stringify(kept)}\n`, { noSync: true, parentMustExist: true });
}
