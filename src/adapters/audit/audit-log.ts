import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { open, readdir, readFile, unlink, writeFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

export const AUDIT_ACTIONS = [
  'UPLOAD', 'DELETE', 'IMPORT', 'SYNC', 'LOGIN', 'LOGOUT', 'USER_CREATE', 'USER_UPDATE', 'USER_DELETE',
  'USER_ROLE_CHANGE', 'PASSWORD_CHANGE', 'PASSWORD_RESET', 'SECURITY_DECISION', 'QUARANTINE',
  'RESCAN', 'CLAMAV_UPDATE', 'SETTINGS_CHANGE', 'GPG_GENERATE', 'INIT_DISTS', 'IMPORT_GROUP_DELETE',
  'PROMOTE', 'MIGRATE', 'TOKEN_CREATE', 'TOKEN_REVOKE', 'MFA_CHANGE', 'SYNC_INDEX', 'RETENTION',
  'SETTINGS_TEST', 'IMPORT_SOURCE_CHANGE', 'DISTRIBUTION_CREATE', 'DISTRIBUTION_UPDATE', 'DISTRIBUTION_RETIRE',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];
export type AuditResult = 'SUCCESS' | 'FAILURE' | 'WARNING';

export interface AuditInput {
  action: AuditAction;
  user: string | null;
  result: AuditResult;
  package?: string | null;
  version?: string | null;
  detail?: string | null;
  ip?: string | null;
}

export interface AuditEntry {
  timestamp: string;
  action: AuditAction;
  user: string | null;
  result: AuditResult;
  package: string | null;
  version: string | null;
  detail: string | null;
  ip: string | null;
  seq: number;
  prev_hash: string;
  hash: string;
}

/** Where entries are mirrored for querying; the JSONL files stay the source of truth. */
export interface AuditIndex {
  insert(entry: AuditEntry): Promise<void>;
  maxSeq(): Promise<number>;
}

/**
 * Makes appends exclusive across the processes that share the audit folder (replicas on one
 * database): `run` holds a lock shared by all of them while the append reads the chain's tip
 * from the files, writes its entry and indexes it.
 */
export interface SharedAppendLock {
  run<T>(append: () => Promise<T>): Promise<T>;
}

export interface ChainBreak {
  file: string;
  line: number;
  seq: number | null;
  reason: string;
}

export interface VerifyReport {
  ok: boolean;
  entries: number;
  files: number;
  first_broken: ChainBreak | null;
}

const GENESIS = '0'.repeat(64);
const ANCHOR_FILE = 'retention-anchor.json';
const DAY_FILE = /^\d{4}-\d{2}-\d{2}\.jsonl$/;

/** The hash covers the previous hash and every field of the entry in a fixed order. */
export function entryHash(e: Omit<AuditEntry, 'hash'>): string {
  const canonical = JSON.stringify([
    e.seq, e.timestamp, e.action, e.user, e.result, e.package, e.version, e.detail, e.ip, e.prev_hash,
  ]);
  return createHash('sha256').update(e.prev_hash).update('\n').update(canonical).digest('hex');
}

function serialise(e: AuditEntry): string {
  return JSON.stringify({
    timestamp: e.timestamp, action: e.action, user: e.user, result: e.result, package: e.package,
    version: e.version, detail: e.detail, ip: e.ip, seq: e.seq, prev_hash: e.prev_hash, hash: e.hash,
  });
}

/**
 * Append-only audit trail: one JSONL file per UTC day, each entry chained to the previous one
 * by SHA-256, so any edit or deletion is detectable. Appends are serialised in-process and
 * flushed to disk before the caller continues, so a change is never reported done without its
 * audit entry. With a shared lock (several replicas writing one folder), each append also takes
 * the lock and reads the chain's tip from the files, so the replicas extend one chain in turn.
 */
export class AuditLog {
  private tail: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly dir: string,
    private readonly index: AuditIndex,
    private seq: number,
    private lastHash: string,
    private readonly now: () => Date,
    private readonly shared: SharedAppendLock | null,
  ) {}

  static async open(dir: string, index: AuditIndex, now: () => Date = () => new Date(), shared: SharedAppendLock | null = null): Promise<AuditLog> {
    mkdirSync(dir, { recursive: true });
    const files = await AuditLog.dayFiles(dir);
    let seq = 0;
    let lastHash = GENESIS;
    const pending: AuditEntry[] = [];
    const indexed = await index.maxSeq();
    for (const file of files) {
      for (const line of (await readFile(join(dir, file), 'utf8')).split('\n')) {
        if (!line.trim()) continue;
        const entry = JSON.parse(line) as AuditEntry;
        seq = entry.seq;
        lastHash = entry.hash;
        if (entry.seq > indexed) pending.push(entry);
      }
    }
    // Entries written to the file whose index insert was interrupted by a crash.
    for (const entry of pending) await index.insert(entry);
    return new AuditLog(dir, index, seq, lastHash, now, shared);
  }

  /** The last entry of the newest day file (another replica may have written it). */
  private async readTip(): Promise<{ seq: number; hash: string } | null> {
    const newest = (await AuditLog.dayFiles(this.dir)).at(-1);
    if (!newest) return null;
    const handle = await open(join(this.dir, newest), 'r');
    try {
      const { size } = await handle.stat();
      // An entry is far below 64 KiB (details are bounded); read more only if the tail holds no full line.
      for (let span = Math.min(size, 64 * 1024); ; span = Math.min(size, span * 4)) {
        const buffer = Buffer.alloc(span);
        await handle.read(buffer, 0, span, size - span);
        const lines = buffer.toString('utf8').split('\n').filter((l) => l.trim());
        const last = span === size ? lines.at(-1) : lines.slice(1).at(-1);
        if (last) {
          const entry = JSON.parse(last) as AuditEntry;
          return { seq: entry.seq, hash: entry.hash };
        }
        if (span === size) return null;
      }
    } finally {
      await handle.close();
    }
  }

  private static async dayFiles(dir: string): Promise<string[]> {
    return (await readdir(dir)).filter((f) => DAY_FILE.test(f)).sort();
  }

  record(input: AuditInput): Promise<AuditEntry> {
    const shared = this.shared;
    const append = shared
      ? () => shared.run(async () => {
          const tip = await this.readTip();
          if (tip && tip.seq >= this.seq) {
            this.seq = tip.seq;
            this.lastHash = tip.hash;
          }
          return this.append(input);
        })
      : () => this.append(input);
    const run = this.tail.then(append);
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async append(input: AuditInput): Promise<AuditEntry> {
    const at = this.now();
    const base = {
      timestamp: at.toISOString().replace('Z', '+00:00'),
      action: input.action,
      user: input.user,
      result: input.result,
      package: input.package ?? null,
      version: input.version ?? null,
      detail: input.detail ?? null,
      ip: input.ip ?? null,
      seq: this.seq + 1,
      prev_hash: this.lastHash,
    };
    const entry: AuditEntry = { ...base, hash: entryHash(base) };
    const line = Buffer.from(`${serialise(entry)}\n`);
    // Read and write: a failed append is cut back (dropFailedAppend), which reads the file's end.
    const handle = await open(join(this.dir, `${base.timestamp.slice(0, 10)}.jsonl`), 'a+', 0o640);
    let written = false;
    try {
      await handle.appendFile(line);
      written = true;
      await handle.datasync();
    } catch (error) {
      await dropFailedAppend(handle, line.length, written).catch(() => undefined);
      throw error;
    } finally {
      await handle.close();
    }
    this.seq = entry.seq;
    this.lastHash = entry.hash;
    await this.index.insert(entry);
    return entry;
  }

  /** Walks every file in order and reports the first entry whose chain does not hold. */
  async verify(): Promise<VerifyReport> {
    await this.tail;
    const files = await AuditLog.dayFiles(this.dir);
    const anchor = await this.readAnchor();
    let prev = anchor?.hash ?? GENESIS;
    let expectedSeq = (anchor?.seq ?? 0) + 1;
    let entries = 0;
    for (const file of files) {
      const lines = (await readFile(join(this.dir, file), 'utf8')).split('\n');
      for (let i = 0; i < lines.length; i++) {
        const line = lines[i]!;
        if (!line.trim()) continue;
        const broken = (reason: string, seq: number | null): VerifyReport => ({
          ok: false, entries, files: files.length, first_broken: { file, line: i + 1, seq, reason },
        });
        let entry: AuditEntry;
        try {
          entry = JSON.parse(line) as AuditEntry;
        } catch {
          return broken('line is not valid JSON', null);
        }
        if (entry.seq !== expectedSeq) return broken(`sequence gap: expected ${expectedSeq}, found ${entry.seq}`, entry.seq);
        if (entry.prev_hash !== prev) return broken('prev_hash does not match the previous entry', entry.seq);
        const { hash, ...rest } = entry;
        if (entryHash(rest) !== hash) return broken('entry content does not match its hash', entry.seq);
        prev = hash;
        expectedSeq++;
        entries++;
      }
    }
    return { ok: true, entries, files: files.length, first_broken: null };
  }

  private async readAnchor(): Promise<{ seq: number; hash: string } | null> {
    try {
      return JSON.parse(await readFile(join(this.dir, ANCHOR_FILE), 'utf8')) as { seq: number; hash: string };
    } catch {
      return null;
    }
  }

  /**
   * Retention: removes whole day files older than `days`. The last removed entry's seq and hash
   * are kept as the anchor the verification starts from, so the remaining chain still verifies
   * and removing a newer file is still detected.
   */
  async removeOlderThan(days: number): Promise<{ files: string[]; upToSeq: number | null }> {
    await this.tail;
    const cutoff = new Date(this.now().getTime() - days * 86_400_000).toISOString().slice(0, 10);
    const today = this.now().toISOString().slice(0, 10);
    const expired = (await AuditLog.dayFiles(this.dir)).filter((f) => f.slice(0, 10) < cutoff && f.slice(0, 10) !== today);
    const last = expired.at(-1);
    if (!last) return { files: [], upToSeq: null };
    const lines = (await readFile(join(this.dir, last), 'utf8')).split('\n').filter((l) => l.trim());
    const tip = lines.length ? (JSON.parse(lines.at(-1)!) as AuditEntry) : null;
    if (tip) await writeFile(join(this.dir, ANCHOR_FILE), JSON.stringify({ seq: tip.seq, hash: tip.hash }));
    for (const file of expired) await unlink(join(this.dir, file));
    return { files: expired, upToSeq: tip?.seq ?? null };
  }
}

/**
 * After a failed append, the file as it was before it: the entry is not recorded (its sequence
 * number goes to the next one), so neither the whole line (written, then the sync failed) nor the
 * part a full disk let through may stay, or the next entry would follow it and break the chain.
 * A part is shorter than the line, so the line before it ends within that many bytes.
 */
async function dropFailedAppend(handle: FileHandle, lineBytes: number, written: boolean): Promise<void> {
  const { size } = await handle.stat();
  let cut = size - lineBytes;
  if (!written) {
    const window = Math.min(size, lineBytes);
    const tail = Buffer.alloc(window);
    await handle.read(tail, 0, window, size - window);
    cut = size - window + tail.lastIndexOf(0x0a) + 1;
  }
  if (cut < size) await handle.truncate(cut);
}
