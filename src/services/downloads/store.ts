/**
 * Download counts in the database (migration 0004): attribution of counted files to packages,
 * batched upserts, the daily move of the per-window totals and the statistics query.
 *
 * Invariant: a window's rows in download_totals are the sums of download_counts over the `days`
 * UTC days ending at its download_rollups.day; likewise download_token_totals (per token, 0012)
 * over download_token_days (0011). Writers (the in-process counter, the access-log
 * ingester, the daily move, in any replica) lock the download_rollups rows first on PostgreSQL
 * (SQLite runs one transaction at a time), so none of them sees a window half moved.
 */
import type { Transaction } from 'kysely';
import type { Db, DbDialect } from '../../adapters/db/index.js';
import type { Database } from '../../adapters/db/schema.js';
import { describeApiTokens } from '../../adapters/db/api-tokens.table.js';
import {
  addDownloadCounts, addDownloadDays, addDownloadTokenCounts, addDownloadTokenDays, addDownloadTotals, countDownloadedPackages, findDownloadRollups,
  findPoolFileOwners, findTopDownloads, hasTokenDownloads, findTopTokenDownloads, lockDownloadRollups, rebuildDownloadTotals, setDownloadRollupDay, shiftDownloadTotals,
  sumDownloadsByDay, sumDownloadsByDistribution, sumTokenDownloads, addDownloadTokenTotals, rebuildDownloadTokenTotals, shiftDownloadTokenTotals, findTopTokens,
  type DownloadTokenCountRow, type DownloadTokenDayRow,
} from '../../adapters/db/downloads.table.js';
import { creditedDistribution, DOWNLOAD_WINDOWS, SHARED, type DownloadWindow } from '../../domain/downloads/attribution.js';
import { addDays, fillDays, lastDays, utcDay } from '../../domain/utc-days.js';
import { rpmNoarchCopies } from '../../domain/repo/rpm/tree.js';

/** The token a download was made with (never its secret). */
export interface DownloadToken {
  id: string;
  /** Its owner's user name. */
  username: string;
}

/** Downloads of one repository file on one UTC day (with one token, or none), before attribution. */
export interface FileDownloads {
  day: string;
  path: string;
  downloads: number;
  token?: DownloadToken | null;
}

export interface AddReport {
  /** Downloads credited to a package. */
  counted: number;
  /** Downloads of files no package row has (deleted since): dropped. */
  unresolved: number;
}

interface PackageKey {
  distribution: string;
  name: string;
  version: string;
  arch: string;
}

export interface DownloadStats {
  days: number;
  from: string;
  to: string;
  total: number;
  distinct_packages: number;
  by_day: Array<{ day: string; downloads: number }>;
  by_distribution: Array<{ distribution: string | null; downloads: number }>;
  packages: Array<{ name: string; version: string; distribution: string | null; arch: string; downloads: number }>;
  /** Unfiltered answers: downloads made with each token the caller may see, most first. */
  by_token?: TokenDownloads[];
  /** `?token=`: the token the whole answer is about. */
  token?: TokenDownloads;
}

/** Downloads made with one token (id, owner, and its name and kind while the token row exists). */
export interface TokenDownloads {
  token_id: string;
  username: string;
  name: string | null;
  kind: 'api' | 'read' | null;
  downloads: number;
}

/** Which tokens' figures a caller sees: every token's (admins) or those of these ids. */
export type TokenView = { all: true } | { all: false; ids: readonly string[] };

const keyOf = (k: PackageKey) => `${k.distribution}\n${k.name}\n${k.version}\n${k.arch}`;
const publicDistribution = (d: string) => (d === SHARED ? null : d);

export class DownloadStore {
  constructor(
    private readonly db: Db,
    private readonly dialect: DbDialect,
  ) {}

  /** Credits downloads to packages and adds them to every table, in one transaction. */
  async add(entries: readonly FileDownloads[], trx?: Transaction<Database>): Promise<AddReport> {
    if (entries.length === 0) return { counted: 0, unresolved: 0 };
    if (!trx) return this.db.transaction().execute((t) => this.add(entries, t));
    const rollups = await lockDownloadRollups(trx, this.dialect);
    const owners = await this.owners(trx, [...new Set(entries.map((e) => e.path))]);
    const counts = new Map<string, PackageKey & { day: string; downloads: number }>();
    let unresolved = 0;
    for (const e of entries) {
      const owner = owners.get(e.path);
      if (!owner) {
        unresolved += e.downloads;
        continue;
      }
      const key = `${e.day}\n${keyOf(owner)}`;
      const row = counts.get(key) ?? { ...owner, day: e.day, downloads: 0 };
      row.downloads += e.downloads;
      counts.set(key, row);
    }
    const rows = [...counts.values()];
    await addDownloadCounts(trx, rows);
    await this.upsertDays(trx, rows);
    const tokenDays = await this.upsertTokens(trx, entries, owners);
    // Each window's totals cover the days up to the day it was last rolled to (not necessarily
    // today: a flush can come first on a new day); rows outside that range reach it when it rolls.
    for (const days of DOWNLOAD_WINDOWS) {
      const through = rollups.get(days);
      if (!through) continue;
      const from = addDays(through, 1 - days);
      await this.upsertTotals(trx, days, rows.filter((r) => r.day >= from && r.day <= through));
      await this.upsertTokenTotals(trx, days, tokenDays.filter((r) => r.day >= from && r.day <= through));
    }
    return { counted: rows.reduce((n, r) => n + r.downloads, 0), unresolved };
  }

  /**
   * Moves every window to today's UTC day, once a day: the days entering it are added and the days
   * leaving it subtracted, both read from download_counts (a few days' rows, whatever the size of
   * the table). A window never built, or last moved a whole window ago or more, is rebuilt.
   */
  async rollOver(now = new Date()): Promise<DownloadWindow[]> {
    const today = utcDay(now);
    const due = (await findDownloadRollups(this.db)).filter((r) => r.day !== today);
    if (due.length === 0) return [];
    return this.db.transaction().execute(async (trx) => {
      const rollups = await lockDownloadRollups(trx, this.dialect);
      const moved: DownloadWindow[] = [];
      for (const days of DOWNLOAD_WINDOWS) {
        const through = rollups.get(days) ?? '';
        if (through === today) continue;
        if (through === '' || through > today || addDays(through, days) <= today) {
          await rebuildDownloadTotals(trx, days, addDays(today, 1 - days), today);
          await rebuildDownloadTokenTotals(trx, days, addDays(today, 1 - days), today);
        } else {
          const entering = { after: through, through: today };
          const leaving = { from: addDays(through, 1 - days), through: addDays(today, -days) };
          await shiftDownloadTotals(trx, days, entering, leaving);
          await shiftDownloadTokenTotals(trx, days, entering, leaving);
        }
        await setDownloadRollupDay(trx, days, today);
        moved.push(days);
      }
      return moved;
    });
  }

  /** GET /downloads/stats: every figure is an index read of the pre-aggregated tables. */
  async stats(days: DownloadWindow, limit: number, now = new Date()): Promise<DownloadStats> {
    await this.rollOver(now);
    const window = lastDays(days, now);
    const perDay = await sumDownloadsByDay(this.db, window.from, window.to);
    const perDistribution = await sumDownloadsByDistribution(this.db, window.from, window.to);
    const top = await findTopDownloads(this.db, days, limit);
    const distinct = await countDownloadedPackages(this.db, days);
    const byDay = fillDays(window.days, perDay.map((r) => ({ day: r.day, downloads: Number(r.downloads) })), (day) => ({ day, downloads: 0 }));
    return {
      days,
      from: window.from,
      to: window.to,
      total: byDay.reduce((n, d) => n + d.downloads, 0),
      distinct_packages: distinct,
      by_day: byDay,
      by_distribution: perDistribution.map((r) => ({ distribution: publicDistribution(r.distribution), downloads: Number(r.downloads) })),
      packages: top.map((r) => ({ ...r, distribution: publicDistribution(r.distribution), downloads: Number(r.downloads) })),
    };
  }

  /**
   * `stats` plus, per token the caller may see, the window's downloads made with it (`by_token`,
   * read from the per-window token totals; `limit` tokens at most).
   */
  async statsWithTokens(days: DownloadWindow, limit: number, view: TokenView, now = new Date()): Promise<DownloadStats> {
    const answer = await this.stats(days, limit, now);
    const perToken = await findTopTokens(this.db, days, view.all ? null : view.ids, limit);
    return { ...answer, by_token: await this.describeTokens(perToken) };
  }

  /**
   * The same figures for the downloads made with one token: per day and distribution from the
   * per-day token sums, its top packages from its own per-package rows over the window.
   */
  async tokenStats(days: DownloadWindow, limit: number, tokenId: string, now = new Date()): Promise<DownloadStats> {
    const window = lastDays(days, now);
    const rows = await sumTokenDownloads(this.db, tokenId, window.from, window.to);
    const perDay = new Map<string, number>();
    const perDistribution = new Map<string, number>();
    for (const r of rows) {
      perDay.set(r.day, (perDay.get(r.day) ?? 0) + r.downloads);
      perDistribution.set(r.distribution, (perDistribution.get(r.distribution) ?? 0) + r.downloads);
    }
    const { top, distinct } = await findTopTokenDownloads(this.db, tokenId, window.from, window.to, limit);
    const byDay = fillDays(window.days, [...perDay].map(([day, downloads]) => ({ day, downloads })), (day) => ({ day, downloads: 0 }));
    const total = byDay.reduce((n, d) => n + d.downloads, 0);
    const [described] = await this.describeTokens([{ token_id: tokenId, username: rows[0]?.username ?? '', downloads: total }]);
    return {
      days,
      from: window.from,
      to: window.to,
      total,
      distinct_packages: distinct,
      by_day: byDay,
      by_distribution: [...perDistribution]
        .map(([distribution, downloads]) => ({ distribution, downloads }))
        .sort((a, b) => b.downloads - a.downloads || a.distribution.localeCompare(b.distribution))
        .map((r) => ({ distribution: publicDistribution(r.distribution), downloads: r.downloads })),
      packages: top.map((r) => ({ ...r, distribution: publicDistribution(r.distribution) })),
      token: described!,
    };
  }

  /** Whether downloads were ever counted for this token id. */
  hasToken(tokenId: string): Promise<boolean> {
    return hasTokenDownloads(this.db, tokenId);
  }

  /** Token rows' names and kinds next to their download sums (null for a token since deleted with its account). */
  private async describeTokens(rows: ReadonlyArray<{ token_id: string; username: string; downloads: number }>): Promise<TokenDownloads[]> {
    if (rows.length === 0) return [];
    const tokens = await describeApiTokens(this.db, rows.map((r) => r.token_id));
    const byId = new Map(tokens.map((t) => [t.id, t]));
    return rows.map((r) => {
      const t = byId.get(r.token_id);
      return { token_id: r.token_id, username: r.username || t?.username || '', name: t?.name ?? null, kind: t?.kind ?? null, downloads: Number(r.downloads) };
    });
  }

  /** Downloads made with a token, per day, token and distribution and per day, token and package. */
  private async upsertTokens(trx: Db, entries: readonly FileDownloads[], owners: Map<string, PackageKey>): Promise<DownloadTokenDayRow[]> {
    const days = new Map<string, DownloadTokenDayRow>();
    const counts = new Map<string, DownloadTokenCountRow>();
    for (const e of entries) {
      const owner = e.token ? owners.get(e.path) : undefined;
      if (!e.token || !owner) continue;
      const dayKey = `${e.day}\n${e.token.id}\n${owner.distribution}`;
      const day = days.get(dayKey) ?? { day: e.day, token_id: e.token.id, username: e.token.username, distribution: owner.distribution, downloads: 0 };
      day.downloads += e.downloads;
      days.set(dayKey, day);
      const countKey = `${e.day}\n${e.token.id}\n${keyOf(owner)}`;
      const count = counts.get(countKey) ?? { day: e.day, token_id: e.token.id, username: e.token.username, ...owner, downloads: 0 };
      count.downloads += e.downloads;
      counts.set(countKey, count);
    }
    if (days.size === 0) return [];
    await addDownloadTokenDays(trx, [...days.values()]);
    await addDownloadTokenCounts(trx, [...counts.values()]);
    return [...days.values()];
  }

  private async upsertTokenTotals(trx: Db, days: number, rows: readonly DownloadTokenDayRow[]): Promise<void> {
    const sums = new Map<string, { days: number; token_id: string; username: string; downloads: number }>();
    for (const r of rows) {
      const sum = sums.get(r.token_id) ?? { days, token_id: r.token_id, username: r.username, downloads: 0 };
      sum.downloads += r.downloads;
      sums.set(r.token_id, sum);
    }
    await addDownloadTokenTotals(trx, [...sums.values()]);
  }

  /** The package each requested file belongs to (name, version, arch, credited distribution). */
  private async owners(trx: Db, paths: string[]): Promise<Map<string, PackageKey>> {
    // A noarch RPM of a several-architecture distribution is served from every architecture's
    // tree; its row names one of them (rpmNoarchCopies).
    const places = new Map(paths.map((p) => [p, [p, ...rpmNoarchCopies(p)]]));
    const rows = await findPoolFileOwners(trx, [...new Set([...places.values()].flat())]);
    const rowsAt = new Map<string, typeof rows>();
    for (const r of rows) rowsAt.set(r.pool_path, [...(rowsAt.get(r.pool_path) ?? []), r]);
    const byPath = new Map<string, typeof rows>();
    for (const [path, at] of places) {
      const list = at.flatMap((p) => rowsAt.get(p) ?? []);
      if (list.length) byPath.set(path, list);
    }
    const owners = new Map<string, PackageKey>();
    for (const [path, list] of byPath) {
      const distribution = creditedDistribution(list);
      // Every row of one pool file is the same file: same name, version and arch.
      if (distribution !== null) owners.set(path, { distribution, name: list[0]!.name, version: list[0]!.version, arch: list[0]!.arch });
    }
    return owners;
  }

  private async upsertDays(trx: Db, rows: ReadonlyArray<{ day: string; distribution: string; downloads: number }>): Promise<void> {
    const sums = new Map<string, { day: string; distribution: string; downloads: number }>();
    for (const r of rows) {
      const key = `${r.day}\n${r.distribution}`;
      const sum = sums.get(key) ?? { day: r.day, distribution: r.distribution, downloads: 0 };
      sum.downloads += r.downloads;
      sums.set(key, sum);
    }
    await addDownloadDays(trx, [...sums.values()]);
  }

  private async upsertTotals(trx: Db, days: number, rows: ReadonlyArray<PackageKey & { downloads: number }>): Promise<void> {
    const sums = new Map<string, PackageKey & { days: number; downloads: number }>();
    for (const r of rows) {
      const key = keyOf(r);
      const sum = sums.get(key) ?? { days, distribution: r.distribution, name: r.name, version: r.version, arch: r.arch, downloads: 0 };
      sum.downloads += r.downloads;
      sums.set(key, sum);
    }
    await addDownloadTotals(trx, [...sums.values()]);
  }
}
