/**
 * Reverse-proxy access logs (ACCESS_LOG_PATH): every matching file, plain or gzipped, is read
 * once and resumed at the byte where the last run stopped.
 *
 * A file is known by the SHA-256 of its first line, not by its name or inode: `access.log` renamed
 * to `access.log.1` keeps its content, and `access.log.1` compressed to `access.log.2.gz` keeps it
 * too (positions count decompressed bytes), so rotation resumes instead of counting again. A
 * truncated and rewritten file starts with another line and is a new file. Progress and the counts
 * it produced are committed in one transaction, guarded by the position it started from, so two
 * replicas reading the same files cannot count a line twice.
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { AccessLogFile, AccessLogFiles } from '../../adapters/access-logs/log-files.js';
import type { Db, DbDialect } from '../../adapters/db/index.js';
import { findAccessLogFile, insertAccessLogFile, lockAccessLogFile, updateAccessLogFile } from '../../adapters/db/downloads.table.js';
import { parseCombinedLine } from '../../domain/downloads/access-log.js';
import { countsAsDownload, packageFilePath } from '../../domain/downloads/package-path.js';
import { utcDay } from '../../domain/utc-days.js';
import { isoUtc } from '../../domain/time.js';
import type { DownloadStore, FileDownloads } from './store.js';

/** Progress is committed at least this often, so a huge first read is not lost to a restart. */
const COMMIT_BYTES = 32 * 1024 * 1024;
/** A first line longer than this is cut for the identity (no real access log has one). */
const IDENTITY_BYTES = 64 * 1024;
/** Longer "lines" (a binary file matching the glob) are skipped instead of buffered whole. */
const MAX_LINE_BYTES = 1024 * 1024;

export interface IngestReport {
  files: number;
  lines: number;
  counted: number;
  unresolved: number;
}

interface Progress {
  identity: string;
  path: string;
  start: number;
  lines: number;
  counts: Map<string, number>;
}

class PositionMoved extends Error {}

export class AccessLogIngester {
  private running: Promise<IngestReport> = Promise.resolve({ files: 0, lines: 0, counted: 0, unresolved: 0 });

  constructor(
    private readonly db: Db,
    private readonly dialect: DbDialect,
    private readonly store: DownloadStore,
    private readonly logFiles: AccessLogFiles,
    private readonly log: Logger,
  ) {}

  /** Reads what is new in every matching file; runs one at a time. */
  ingest(): Promise<IngestReport> {
    this.running = this.running.catch(() => undefined).then(() => this.run());
    return this.running;
  }

  /** Resolves once no run is under way. */
  async idle(): Promise<void> {
    await this.running.catch(() => undefined);
  }

  private async run(): Promise<IngestReport> {
    const report: IngestReport = { files: 0, lines: 0, counted: 0, unresolved: 0 };
    for (const file of await this.files()) {
      try {
        await this.ingestFile(file, report);
      } catch (error) {
        this.log.warn({ err: error, file: file.path }, 'access log not ingested');
      }
    }
    return report;
  }

  /** Matching regular files, oldest first, so rotated content is met before its successor. */
  private async files(): Promise<AccessLogFile[]> {
    let files: AccessLogFile[];
    try {
      files = await this.logFiles.list();
    } catch (error) {
      this.log.warn({ err: error, dir: this.logFiles.dir }, 'access log folder not readable');
      return [];
    }
    return files.sort((a, b) => a.mtimeMs - b.mtimeMs || b.path.localeCompare(a.path));
  }

  /** SHA-256 of the first line of the (decompressed) content; null until one is complete. */
  private async identity(file: AccessLogFile): Promise<string | null> {
    const line = await this.logFiles.firstLine(file, IDENTITY_BYTES);
    return line === null ? null : createHash('sha256').update(line).digest('hex');
  }

  private async ingestFile(file: AccessLogFile, report: IngestReport): Promise<void> {
    const identity = await this.identity(file);
    if (!identity) return;
    const state = await findAccessLogFile(this.db, identity);
    const position = Number(state?.position ?? 0);
    if (state?.complete || (!file.gzip && position >= file.size)) return;
    report.files++;

    let consumed = position;
    let carry: Buffer = Buffer.alloc(0);
    let progress: Progress = { identity, path: file.path, start: position, lines: 0, counts: new Map() };
    let ended = false;
    try {
      for await (const chunk of this.logFiles.read(file, position)) {
        const data = carry.length ? Buffer.concat([carry, chunk]) : chunk;
        const last = data.lastIndexOf(10);
        if (last === -1) {
          carry = data;
          if (carry.length > MAX_LINE_BYTES) {
            consumed += carry.length;
            carry = Buffer.alloc(0);
          }
          continue;
        }
        this.countLines(data.subarray(0, last), progress);
        consumed += last + 1;
        carry = Buffer.from(data.subarray(last + 1));
        if (consumed - progress.start >= COMMIT_BYTES) {
          await this.commit(progress, consumed, false, report);
          progress = { ...progress, start: consumed, lines: 0, counts: new Map() };
        }
      }
      ended = true;
    } catch (error) {
      if (!file.gzip) throw error;
      this.log.debug({ err: error, file: file.path }, 'gzip access log ends early; the rest is read once it is complete');
    }
    // A complete gzip file is final: its last line counts even without a newline.
    const complete = file.gzip && ended;
    if (complete && carry.length) {
      this.countLines(carry, progress);
      consumed += carry.length;
    }
    await this.commit(progress, consumed, complete, report);
  }

  private countLines(block: Buffer, progress: Progress): void {
    for (const line of block.toString('utf8').split('\n')) {
      if (line === '') continue;
      progress.lines++;
      if (!line.includes('deb') && !line.includes('rpm')) continue;
      const entry = parseCombinedLine(line);
      if (!entry?.target || !countsAsDownload(entry.method, entry.status)) continue;
      const path = packageFilePath(entry.target);
      if (!path) continue;
      const key = `${utcDay(entry.time)}\n${path}`;
      progress.counts.set(key, (progress.counts.get(key) ?? 0) + 1);
    }
  }

  /** Moves the file's position from `progress.start` to `position` and adds its counts, atomically. */
  private async commit(progress: Progress, position: number, complete: boolean, report: IngestReport): Promise<void> {
    const entries: FileDownloads[] = [...progress.counts].map(([key, downloads]) => {
      const cut = key.indexOf('\n');
      return { day: key.slice(0, cut), path: key.slice(cut + 1), downloads };
    });
    const counted = entries.reduce((n, e) => n + e.downloads, 0);
    try {
      const added = await this.db.transaction().execute(async (trx) => {
        const row = await lockAccessLogFile(trx, this.dialect, progress.identity);
        if (Number(row?.position ?? 0) !== progress.start) throw new PositionMoved();
        const values = {
          path: progress.path,
          position,
          complete: complete ? 1 : 0,
          lines: Number(row?.lines ?? 0) + progress.lines,
          counted: Number(row?.counted ?? 0) + counted,
          updated_at: isoUtc(),
        };
        if (row) {
          await updateAccessLogFile(trx, progress.identity, values);
        } else if (!(await insertAccessLogFile(trx, { identity: progress.identity, ...values }))) {
          throw new PositionMoved();
        }
        return this.store.add(entries, trx);
      });
      report.lines += progress.lines;
      report.counted += added.counted;
      report.unresolved += added.unresolved;
    } catch (error) {
      if (!(error instanceof PositionMoved)) throw error;
      // Another process counted these lines first.
      throw new Error(`${progress.path}: read concurrently by another process; skipped this time`);
    }
  }
}
