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
import { createReadStream } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { Logger } from 'pino';
import type { Db, DbDialect } from '../../adapters/db/index.js';
import { parseCombinedLine } from '../../domain/downloads/access-log.js';
import type { LogGlob } from '../../domain/downloads/log-glob.js';
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

interface LogFile {
  path: string;
  gzip: boolean;
  size: number;
  mtimeMs: number;
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
    private readonly glob: LogGlob,
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
  private async files(): Promise<LogFile[]> {
    let names: string[];
    try {
      names = (await readdir(this.glob.dir)).filter((n) => this.glob.matches(n));
    } catch (error) {
      this.log.warn({ err: error, dir: this.glob.dir }, 'access log folder not readable');
      return [];
    }
    const files: LogFile[] = [];
    for (const name of names) {
      const path = join(this.glob.dir, name);
      const info = await stat(path).catch(() => null);
      if (!info?.isFile() || info.size === 0) continue;
      const handle = await open(path, 'r');
      const magic = Buffer.alloc(2);
      try {
        await handle.read(magic, 0, 2, 0);
      } finally {
        await handle.close();
      }
      files.push({ path, gzip: magic[0] === 0x1f && magic[1] === 0x8b, size: info.size, mtimeMs: info.mtimeMs });
    }
    return files.sort((a, b) => a.mtimeMs - b.mtimeMs || b.path.localeCompare(a.path));
  }

  private open(file: LogFile, start = 0): Readable {
    if (file.gzip) return createReadStream(file.path).pipe(createGunzip());
    // A snapshot of the current size: what is appended meanwhile is read next time.
    return createReadStream(file.path, { start, end: file.size - 1 });
  }

  /** SHA-256 of the first line of the (decompressed) content; null until one is complete. */
  private async identity(file: LogFile): Promise<string | null> {
    const stream = this.open(file);
    const head: Buffer[] = [];
    let length = 0;
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        const newline = chunk.indexOf(10);
        head.push(newline === -1 ? chunk : chunk.subarray(0, newline + 1));
        length += newline === -1 ? chunk.length : newline + 1;
        if (newline !== -1 || length >= IDENTITY_BYTES) {
          return createHash('sha256').update(Buffer.concat(head).subarray(0, IDENTITY_BYTES)).digest('hex');
        }
      }
    } catch {
      // A gzip file still being written ends early: read it once it is complete.
    } finally {
      stream.destroy();
    }
    return null;
  }

  private async ingestFile(file: LogFile, report: IngestReport): Promise<void> {
    const identity = await this.identity(file);
    if (!identity) return;
    const state = await this.db.selectFrom('access_log_files').select(['position', 'complete']).where('identity', '=', identity).executeTakeFirst();
    const position = Number(state?.position ?? 0);
    if (state?.complete || (!file.gzip && position >= file.size)) return;
    report.files++;

    const stream = this.open(file, position);
    // Gzip positions count decompressed bytes, which can only be reached by decompressing.
    let skip = file.gzip ? position : 0;
    let consumed = position;
    let carry: Buffer = Buffer.alloc(0);
    let progress: Progress = { identity, path: file.path, start: position, lines: 0, counts: new Map() };
    let ended = false;
    try {
      for await (const raw of stream as AsyncIterable<Buffer>) {
        let chunk = raw;
        if (skip > 0) {
          const dropped = Math.min(skip, chunk.length);
          skip -= dropped;
          chunk = chunk.subarray(dropped);
          if (chunk.length === 0) continue;
        }
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
    } finally {
      stream.destroy();
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
        let q = trx.selectFrom('access_log_files').select(['position', 'lines', 'counted']).where('identity', '=', progress.identity);
        if (this.dialect === 'postgres') q = q.forUpdate();
        const row = await q.executeTakeFirst();
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
          await trx.updateTable('access_log_files').set(values).where('identity', '=', progress.identity).execute();
        } else {
          const inserted = await trx.insertInto('access_log_files').values({ identity: progress.identity, ...values })
            .onConflict((oc) => oc.column('identity').doNothing()).executeTakeFirst();
          if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) throw new PositionMoved();
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
