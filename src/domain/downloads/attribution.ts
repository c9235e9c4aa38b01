/**
 * To which distribution a download is credited. An RPM file lives under its distribution's own
 * tree, so its path names exactly one. The APT pool is shared: one `.deb` may be listed by several
 * distributions and the request does not say which one the client uses. Such a download is
 * credited once, to no distribution (`SHARED`, answered as `distribution: null`), rather than to
 * each of them (which would inflate per-distribution sums) or to a guessed one.
 */
import { INDEXED_STATUSES } from '../distributions.js';

/** Stored in place of a distribution for shared pool files ('' because it is part of a unique key). */
export const SHARED = '';

/** The windows `/downloads/stats?days=` accepts. */
export const DOWNLOAD_WINDOWS = [7, 30, 90] as const;
export type DownloadWindow = (typeof DOWNLOAD_WINDOWS)[number];
export const isDownloadWindow = (days: number): days is DownloadWindow => (DOWNLOAD_WINDOWS as readonly number[]).includes(days);

export interface PoolRow {
  distribution: string;
  status: string;
}

/**
 * The distribution credited for a file whose package rows are `rows`: the one distribution whose
 * index lists it; SHARED when several do. A file no index lists (a request racing a quarantine) is
 * judged by all its rows the same way. Null when no row has that file: nothing to credit.
 */
export function creditedDistribution(rows: readonly PoolRow[]): string | null {
  if (rows.length === 0) return null;
  const indexed = rows.filter((r) => (INDEXED_STATUSES as readonly string[]).includes(r.status));
  const distributions = new Set((indexed.length ? indexed : rows).map((r) => r.distribution));
  return distributions.size === 1 ? [...distributions][0]! : SHARED;
}
