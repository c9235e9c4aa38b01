/**
 * Downloads served by this process, counted in memory and written in batches: recording one is a
 * map increment after the response has gone out, so the file transfer never waits on the
 * database. A failed write keeps the counts for the next flush. A download made with a token is
 * counted under that token too (the same map, the token in the key).
 */
import type { Logger } from 'pino';
import type { DownloadStore, DownloadToken, FileDownloads } from './store.js';

const DAY_MS = 86_400_000;

export class DownloadCounter {
  private pending = new Map<string, number>();
  /** Owner of each token met since the last flush (a token's owner never changes). */
  private owners = new Map<string, string>();
  private running: Promise<void> = Promise.resolve();
  private day = '';
  private dayEnds = 0;

  constructor(
    private readonly store: DownloadStore,
    private readonly log: Logger,
  ) {}

  /** One download of the repository file `path` (its pool path) at `at` (ms since the epoch), made with `token` if any. */
  record(path: string, at = Date.now(), token: DownloadToken | null = null): void {
    if (at >= this.dayEnds || at < this.dayEnds - DAY_MS) {
      const start = at - (at % DAY_MS);
      this.day = new Date(start).toISOString().slice(0, 10);
      this.dayEnds = start + DAY_MS;
    }
    // Token ids are UUIDs and days have no line break: the path is whatever follows the second one.
    const key = `${this.day}\n${token?.id ?? ''}\n${path}`;
    if (token) this.owners.set(token.id, token.username);
    this.pending.set(key, (this.pending.get(key) ?? 0) + 1);
  }

  /** Downloads recorded and not yet written. */
  get buffered(): number {
    let n = 0;
    for (const count of this.pending.values()) n += count;
    return n;
  }

  /** Writes what has been recorded; flushes run one at a time. */
  flush(): Promise<void> {
    this.running = this.running.then(() => this.write());
    return this.running;
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    const owners = this.owners;
    this.pending = new Map();
    this.owners = new Map();
    const entries: FileDownloads[] = [...batch].map(([key, downloads]) => {
      const cut = key.indexOf('\n');
      const cut2 = key.indexOf('\n', cut + 1);
      const tokenId = key.slice(cut + 1, cut2);
      return { day: key.slice(0, cut), path: key.slice(cut2 + 1), downloads, token: tokenId ? { id: tokenId, username: owners.get(tokenId) ?? '' } : null };
    });
    try {
      const report = await this.store.add(entries);
      if (report.unresolved) this.log.debug({ unresolved: report.unresolved }, 'downloads of files no package has were not counted');
    } catch (error) {
      for (const [key, n] of batch) this.pending.set(key, (this.pending.get(key) ?? 0) + n);
      for (const [id, username] of owners) if (!this.owners.has(id)) this.owners.set(id, username);
      this.log.warn({ err: error, downloads: entries.length }, 'download counts not written; kept for the next flush');
    }
  }
}
