/**
 * Opening a file that must lie inside an allowed folder (FEEDS_DIR, CA_BUNDLE_DIR), whatever
 * `..` segments or symbolic links its path holds. Settings name these files, and an admin session
 * must not turn them into a way to read /etc/shadow or the service's own keys.
 *
 * The real path (every link resolved) must be inside the real folder; the last component is then
 * opened without following links, and on Linux the opened descriptor's own path is checked again,
 * so a link swapped in between the check and the open is caught. Errors carry the precise reason
 * for the server log; callers answer users one generic message.
 */
import { constants } from 'node:fs';
import { open, readlink, realpath, type FileHandle } from 'node:fs/promises';
import { isInsideDir } from '../../domain/settings-rules.js';

export class ConfinedFileError extends Error {}

export async function openConfinedFile(path: string, dir: string): Promise<FileHandle> {
  let realDir: string;
  let real: string;
  try {
    realDir = await realpath(dir);
    real = await realpath(path);
  } catch (err) {
    throw new ConfinedFileError(`cannot resolve ${path}: ${(err as Error).message}`);
  }
  if (!isInsideDir(realDir, real)) throw new ConfinedFileError(`${path} resolves to ${real}, outside ${realDir}`);
  let handle: FileHandle;
  try {
    // O_NONBLOCK: a FIFO planted in the folder must not hang the open; no effect on regular files.
    handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    throw new ConfinedFileError(`cannot open ${real}: ${(err as Error).message}`);
  }
  try {
    const opened = await openedPath(handle);
    if (opened !== null && !isInsideDir(realDir, opened)) throw new ConfinedFileError(`${real} was opened as ${opened}, outside ${realDir}`);
    if (!(await handle.stat()).isFile()) throw new ConfinedFileError(`${real} is not a regular file`);
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** The path the kernel holds for an open descriptor (Linux /proc); null where that is not available. */
async function openedPath(handle: FileHandle): Promise<string | null> {
  try {
    return await readlink(`/proc/self/fd/${handle.fd}`);
  } catch {
    return null;
  }
}

/** Reads a whole confined file as text. */
export async function readConfinedFile(path: string, dir: string): Promise<string> {
  const handle = await openConfinedFile(path, dir);
  try {
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}
