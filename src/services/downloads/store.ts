/**
 * Download counts in the database (migration 0004): attribution of counted files to packages,
 * batched upserts, the daily move of the per-window totals and the statistics query.
 *
 * Invariant: a window's rows in download_totals are the sums of download_counts over the `days`
 * UTC days ending at its download_rollups.day. Writers (the in-process counter, the access-log
 * ingester, the daily move, in any replica) lock the download_rollups rows first on PostgreSQL
 * (SQLite runs one transaction at a time), so none of them sees a window half moved.
 */
import type { Transaction } from 'kysely';
import type { Db, DbDialect } from '../../adapters/db/index.js';
import type { Database } from '../../adapters/db/schema.js';
import {
  addDownloadCounts, addDownloadDays, addDownloadTotals, countDownloadedPackages, findDownloadRollups, findPoolFileOwners, findTopDownloads,
  lockDownloadRollups, rebuildDownloadTotals, setDownloadRollupDay, shiftDownloadTotals, sumDownloadsByDay, sumDownloadsByDistribution,
} from '../../adapters/db/downloads.table.js';
import { creditedDistribution, DOWNLOAD_WINDOWS, SHARED, type DownloadWindow } from '../../domain/downloads/attribution.js';
import { addDays, fillDays, lastDays, utcDay } from '../../domain/utc-days.js';

/** Downloads of one repository file on one UTC day, before attribution. */
export interface FileDownloads {
  day: string;
  path: string;
  downloads: number;
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
}

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
    // Each window's totals cover the days up to the day it was last rolled to (not necessarily
    // today: a flush can come first on a new day); rows outside that range reach it when it rolls.
    for (const days of DOWNLOAD_WINDOWS) {
      const through = rollups.get(days);
      if (!through) continue;
      const from = addDays(through, 1 - days);
      await this.upsertTotals(trx, days, rows.filter((r) => r.day >= from && r.day <= through));
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
        if (through === '' || through > today || addDays(through, days) <= today) await rebuildDownloadTotals(trx, days, addDays(today, 1 - days), today);
        else await shiftDownloadTotals(trx, days, { after: through, through: today }, { from: addDays(through, 1 - days), through: addDays(today, -days) });
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

  /** The package each requested file belongs to (name, version, arch, credited distribution). */
  private async owners(trx: Db, paths: string[]): Promise<Map<string, PackageKey>> {
    const rows = await findPoolFileOwners(trx, paths);
    const byPath = new Map<string, typeof rows>();
    for (const r of rows) byPath.set(r.pool_path, [...(byPath.get(r.pool_path) ?? []), r]);
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
