import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { open, readdir, readFile, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../storage/atomic.js';

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
  /** Adds entries (in sequence order) in one write; entries already indexed are skipped. */
  insert(entries: readonly AuditEntry[]): Promise<void>;
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
/** Entries written by one append at most. */
const MAX_BATCH = 256;

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
    for (let i = 0; i < pending.length; i += MAX_BATCH) await index.insert(pending.slice(i, i + MAX_BATCH));
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

  /** Entries waiting for the append under way: the next append writes them together. */
  private queued: Array<{ input: AuditInput; resolve: (entry: AuditEntry) => void; reject: (error: unknown) => void }> = [];
  private appending = false;

  /**
   * Appends an entry; resolves once it is on disk and indexed. Entries recorded while an append
   * is under way are written by the next one together, with one sync (group commit): under a
   * stream of uploads each waited for the syncs of all the entries before its own.
   */
  record(input: AuditInput): Promise<AuditEntry> {
    const done = new Promise<AuditEntry>((resolve, reject) => this.queued.push({ input, resolve, reject }));
    if (!this.appending) this.tail = this.appendQueued();
    return done;
  }

  private async appendQueued(): Promise<void> {
    this.appending = true;
    try {
      while (this.queued.length > 0) {
        const batch = this.queued.splice(0, MAX_BATCH);
        const inputs = batch.map((b) => b.input);
        const shared = this.shared;
        try {
          const entries = shared
            ? await shared.run(async () => {
                const tip = await this.readTip();
                if (tip && tip.seq >= this.seq) {
                  this.seq = tip.seq;
                  this.lastHash = tip.hash;
                }
                return this.append(inputs);
              })
            : await this.append(inputs);
          batch.forEach((b, i) => b.resolve(entries[i]!));
        } catch (error) {
          for (const b of batch) b.reject(error);
        }
      }
    } finally {
      this.appending = false;
    }
  }

  private async append(inputs: readonly AuditInput[]): Promise<AuditEntry[]> {
    const at = this.now();
    const timestamp = at.toISOString().replace('Z', '+00:00');
    let prev = this.lastHash;
    const entries = inputs.map((input, i): AuditEntry => {
      const base = {
        timestamp,
        action: input.action,
        user: input.user,
        result: input.result,
        package: input.package ?? null,
        version: input.version ?? null,
        detail: input.detail ?? null,
        ip: input.ip ?? null,
        seq: this.seq + 1 + i,
        prev_hash: prev,
      };
      prev = entryHash(base);
      return { ...base, hash: prev };
    });
    const lines = Buffer.from(entries.map((e) => `${serialise(e)}\n`).join(''));
    // Read and write: a failed append is cut back (dropFailedAppend), which reads the file's end.
    const handle = await open(join(this.dir, `${timestamp.slice(0, 10)}.jsonl`), 'a+', 0o640);
    let written = false;
    try {
      await handle.appendFile(lines);
      written = true;
      await handle.datasync();
    } catch (error) {
      await dropFailedAppend(handle, lines, written).catch(() => undefined);
      throw error;
    } finally {
      await handle.close();
    }
    this.seq = entries.at(-1)!.seq;
    this.lastHash = prev;
    await this.index.insert(entries);
    return entries;
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
    // Whole and on disk before the files it stands for go: a crash between must not leave a
    // chain that starts nowhere (or an anchor cut short).
    if (tip) await writeFileAtomic(join(this.dir, ANCHOR_FILE), JSON.stringify({ seq: tip.seq, hash: tip.hash }));
    for (const file of expired) await unlink(join(this.dir, file));
    return { files: expired, upToSeq: tip?.seq ?? null };
  }
}

/**
 * After a failed append, the file as it was before it: its entries are not recorded (their
 * sequence numbers go to the next ones), so neither the whole lines (written, then the sync
 * failed) nor the part a full disk let through may stay, or the next entry would follow them and
 * break the chain. The part is the longest beginning of `lines` the file ends with.
 */
async function dropFailedAppend(handle: FileHandle, lines: Buffer, written: boolean): Promise<void> {
  const { size } = await handle.stat();
  let cut = size - lines.length;
  if (!written) {
    const window = Math.min(size, lines.length);
    const tail = Buffer.alloc(window);
    await handle.read(tail, 0, window, size - window);
    // The part begins where the earlier content ends: after a line break, or at the file's start.
    let part = 0;
    for (let start = 0; start < window; start++) {
      const lineStart = start === 0 ? size === window : tail[start - 1] === 0x0a;
      if (lineStart && tail.subarray(start).equals(lines.subarray(0, window - start))) {
        part = window - start;
        break;
      }
    }
    cut = size - part;
  }
  if (cut < size) await handle.truncate(cut);
}
