import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * Writes a secret to a file only its owner may read (0600), atomically: the content goes to a new
 * file created 0600 (never a moment readable by others, never half written under the real name),
 * is fsynced, and then renamed over `file` (the folder fsynced after). A crash leaves either the
 * old file or the new one.
 */
export function writeSecretFile(file: string, content: string): void {
  const temp = join(dirname(file), `.secret-${randomBytes(6).toString('hex')}.tmp`);
  const fd = openSync(temp, 'wx', 0o600);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(temp, { force: true });
    throw error;
  }
  closeSync(fd);
  try {
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  // The new name on disk too: the initial admin's row is committed, and its password must not be lost with a power cut.
  const folder = openSync(dirname(file), 'r');
  try {
    fsyncSync(folder);
  } finally {
    closeSync(folder);
  }
}
