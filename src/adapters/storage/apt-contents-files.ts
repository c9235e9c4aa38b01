/**
 * The `Contents-<arch>.gz` files of one APT component (`dists/<codename>/<component>/`): written
 * whole from batches of lines, or extended with a gzip member, each file an immutable by-hash
 * object of the component folder, exposed by a hard link, with digests continued from saved hash
 * states — the way Packages.gz is kept (apt-index-files.ts), sharing its machinery.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { tempPathFor } from './temp-names.js';
import { syncFile } from './atomic.js';
import type { ContentDigests } from './hash-stream.js';
import { extendObject, finishWrite, objectPath, placeObject } from './apt-by-hash.js';
import { Digests, gzipMember, HashTap, writeAndWait, type AptIndexState, type IndexFileOptions, type StagedWrite, type VariantName, type VariantState } from './apt-index-files.js';

export const contentsFileName = (arch: string): VariantName => `Contents-${arch}.gz`;

/** Writes one Contents file from its lines; the object is placed, not yet exposed (see `exposeContents`). */
export async function writeContentsFile(componentDir: string, arch: string, batches: AsyncIterable<readonly string[]>, o: IndexFileOptions): Promise<VariantState> {
  const objectDir = join(componentDir, 'by-hash', 'SHA256');
  await mkdir(objectDir, { recursive: true });
  const name = contentsFileName(arch);
  const temp = tempPathFor(join(objectDir, name));
  const gz = createGzip({ level: o.gzipLevel });
  const tap = new HashTap(Digests.empty());
  const plain = Digests.empty();
  const done = pipeline(gz, tap, createWriteStream(temp, { flags: 'wx' }));
  // Awaited below; when the loop fails first (a batch that cannot be read) it rejects too, and
  // an unhandled rejection would stop the process.
  done.catch(() => undefined);
  try {
    for await (const batch of batches) {
      if (batch.length === 0) continue;
      const text = Buffer.from(batch.join(''));
      plain.updateSync(text);
      await writeAndWait(gz, text);
    }
    gz.end();
    await done;
  } catch (error) {
    gz.destroy();
    await done.catch(() => undefined);
    await rm(temp, { force: true });
    throw error;
  }
  if (o.sync) await syncFile(temp);
  const digests = await tap.digests.finish();
  return { name, object: await placeObject(componentDir, temp, digests), digests, prefix: tap.digests, xz: null, plain: { digests: await plain.finish(), prefix: plain } };
}

/**
 * The file extended by `added` as one more gzip member, its digests first and its object placed
 * behind them (not yet exposed, see `exposeContents`); null when its object is gone (then write in full).
 */
export async function appendContents(componentDir: string, file: VariantState, added: string, o: IndexFileOptions): Promise<StagedWrite<VariantState> | null> {
  if (!(await stat(file.object).then(() => true, () => false))) return null;
  if (!file.plain) return null;
  const text = Buffer.from(added);
  const member = await gzipMember(text, o.gzipLevel);
  const plainPrefix = await file.plain.prefix.copy().update(text);
  const prefix = await file.prefix.copy().update(member);
  const digests = await prefix.finish();
  const plain = { digests: await plainPrefix.finish(), prefix: plainPrefix };
  const written = extendObject(componentDir, file, digests, member, o).then(() => undefined);
  written.catch(() => undefined);
  return { state: { name: file.name, object: objectPath(componentDir, digests), digests, prefix, xz: null, plain }, written };
}

/** Release entries of a component's Contents files: each compressed file and its uncompressed name (not served). */
export function contentsReleaseEntries(component: string, state: AptIndexState): Array<{ path: string } & ContentDigests> {
  return state.variants.flatMap((v) => [
    ...(v.plain ? [{ path: `${component}/${v.name.slice(0, -'.gz'.length)}`, ...v.plain.digests }] : []),
    { path: `${component}/${v.name}`, ...v.digests },
  ]);
}

/** Exposes the component's Contents files under their names; the state to prune and extend. */
export async function exposeContents(componentDir: string, files: VariantState[], appends: number, o: IndexFileOptions): Promise<AptIndexState> {
  await finishWrite(componentDir, files, o.sync);
  return { indexDir: componentDir, variants: files, appends };
}
