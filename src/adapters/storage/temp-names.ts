/**
 * Names of temp files (`.<name>.<writer>.<random>.tmp`; `.spare` for spare copies) and how to tell
 * one its writer left behind.
 *
 * The writer part is `<run>-<pid>`. `run` names this kernel boot and pid namespace: only there
 * does a pid mean the same process, so only there is a gone pid proof of a gone writer. Replicas
 * on other hosts share DATA_DIR, containers have pid namespaces of their own (each replica often
 * pid 1), and a machine that rebooted has new pids: for their files a local pid says nothing
 * (checking it deleted the files another replica was writing). Those are removed only once
 * nobody has written them for FOREIGN_TEMP_IDLE_MS.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';

/**
 * A temp file of another boot, host or container is left this long after its last write: uploads
 * and index writes last seconds to minutes, and a spare copy another replica still counts on is
 * only copied again by it if removed.
 */
export const FOREIGN_TEMP_IDLE_MS = 24 * 60 * 60 * 1000;

const readOr = (read: () => string, fallback: string) => {
  try {
    return read().trim();
  } catch {
    return fallback;
  }
};

/** This boot and pid namespace (where /proc is missing, the host name: pids are checked there). */
export const RUN_TAG = createHash('sha256')
  .update(readOr(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8'), hostname()))
  .update('\0')
  .update(readOr(() => readlinkSync('/proc/self/ns/pid'), ''))
  .digest('hex')
  .slice(0, 8);

const TEMP_NAME = /^\..+\.(?:([0-9a-f]{8})-)?(\d+)\.[0-9a-f]{12}\.(tmp|spare)$/;

/**
 * The unique part of this process's temp names: a 48-bit counter from a random start. Unique
 * within the process, and across processes with the writer part; a random start keeps a process
 * that got the pid of a crashed one from meeting its leftovers. (A `randomBytes` call per name
 * was 1 % of the event loop under a burst of tiny uploads: an upload and its publish name ~10.)
 */
let nextTempNumber = randomBytes(6).readUIntBE(0, 6);

/** A unique temp name next to `target` (same folder, so the final rename cannot cross devices). */
export function tempPathFor(target: string, kind: 'tmp' | 'spare' = 'tmp'): string {
  const unique = nextTempNumber.toString(16).padStart(12, '0');
  nextTempNumber = (nextTempNumber + 1) % 2 ** 48;
  return join(dirname(target), `.${basename(target)}.${RUN_TAG}-${process.pid}.${unique}.${kind}`);
}

/** Who wrote a temp file: `run` is null for names from before the run tag (unknown origin). */
export function tempWriterOf(name: string): { run: string | null; pid: number } | null {
  const m = TEMP_NAME.exec(name);
  return m ? { run: m[1] ?? null, pid: Number(m[2]) } : null;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, owned by someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** True for a temp file at `path` whose writer is gone (see the module comment); false for any other name. */
export async function isAbandonedTemp(path: string, now = Date.now()): Promise<boolean> {
  const writer = tempWriterOf(basename(path));
  if (!writer) return false;
  if (writer.run === RUN_TAG) return writer.pid !== process.pid && !processAlive(writer.pid);
  const info = await stat(path).catch(() => null);
  return info !== null && now - info.mtimeMs > FOREIGN_TEMP_IDLE_MS;
}
