/**
 * Download statistics: the built-in server's counter, the reverse-proxy log ingester and the
 * statistics query, with their timers.
 *
 * Timing: counted downloads are written every FLUSH_MS and at shutdown (and before a statistics
 * answer, so this process's own downloads are never missing from it); proxy logs are read every
 * INGEST_MS; the per-window totals move to a new UTC day on its first tick (or by the first
 * statistics request of the day, if it comes first).
 */
import type { Logger } from 'pino';
import { localAccessLogFiles } from '../../adapters/access-logs/log-files.js';
import type { Db, DbDialect } from '../../adapters/db/index.js';
import type { DownloadWindow } from '../../domain/downloads/attribution.js';
import { parseLogGlob } from '../../domain/downloads/log-glob.js';
import { AccessLogIngester } from './access-logs.js';
import { DownloadCounter } from './counter.js';
import { DownloadStore, type DownloadStats, type TokenView } from './store.js';

export const FLUSH_MS = 5_000;
export const INGEST_MS = 60_000;

export interface DownloadsDeps {
  db: Db;
  dialect: DbDialect;
  log: Logger;
  /** ACCESS_LOG_PATH; null = no proxy logs. */
  accessLogPath: string | null;
  /** How often the proxy logs are read (default INGEST_MS). */
  ingestEveryMs?: number;
}

export class DownloadsService {
  readonly store: DownloadStore;
  readonly counter: DownloadCounter;
  /** Null when ACCESS_LOG_PATH is not set. */
  readonly logs: AccessLogIngester | null;
  private timers: NodeJS.Timeout[] = [];

  constructor(private readonly deps: DownloadsDeps) {
    this.store = new DownloadStore(deps.db, deps.dialect);
    this.counter = new DownloadCounter(this.store, deps.log);
    this.logs = deps.accessLogPath ? new AccessLogIngester(deps.db, deps.dialect, this.store, localAccessLogFiles(parseLogGlob(deps.accessLogPath)), deps.log) : null;
  }

  start(): void {
    const every = (ms: number, task: () => Promise<unknown>, what: string) => {
      const timer = setInterval(() => {
        task().catch((error: unknown) => this.deps.log.warn({ err: error }, `${what} failed`));
      }, ms);
      timer.unref();
      this.timers.push(timer);
    };
    every(FLUSH_MS, async () => {
      await this.counter.flush();
      await this.store.rollOver();
    }, 'download count flush');
    if (this.logs) every(this.deps.ingestEveryMs ?? INGEST_MS, () => this.logs!.ingest(), 'access log ingest');
  }

  /**
   * The window's figures: all downloads, with `by_token` for the tokens `view` lets the caller
   * see; or, given `token`, only the downloads made with that token.
   */
  async stats(days: DownloadWindow, limit: number, options: { view?: TokenView; token?: string } = {}): Promise<DownloadStats> {
    await this.counter.flush();
    if (options.token !== undefined) return this.store.tokenStats(days, limit, options.token);
    if (options.view) return this.store.statsWithTokens(days, limit, options.view);
    return this.store.stats(days, limit);
  }

  /** Stops the timers and writes what is still buffered. */
  async close(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    await this.logs?.idle();
    await this.counter.flush();
  }
}
