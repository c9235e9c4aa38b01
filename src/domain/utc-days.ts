/** UTC calendar days as `YYYY-MM-DD` text: the grouping key of every per-day statistic. */

const DAY_MS = 86_400_000;

export function utcDay(at: Date | number): string {
  return new Date(typeof at === 'number' ? at : at.getTime()).toISOString().slice(0, 10);
}

/** The day `offset` days after `day` (negative: before). */
export function addDays(day: string, offset: number): string {
  return utcDay(Date.parse(`${day}T00:00:00Z`) + offset * DAY_MS);
}

/** The last `days` UTC days up to and including the day of `now`: `{from, to, days: [from … to]}`. */
export function lastDays(days: number, now: Date | number): { from: string; to: string; days: string[] } {
  const to = utcDay(now);
  const list = Array.from({ length: days }, (_, i) => addDays(to, i - days + 1));
  return { from: list[0]!, to, days: list };
}

/**
 * One entry per day of `days`, the aggregated `rows` where they exist and `empty()` elsewhere, so a
 * day without activity is listed with zeros instead of missing.
 */
export function fillDays<T extends { day: string }>(days: readonly string[], rows: readonly T[], empty: (day: string) => T): T[] {
  const byDay = new Map(rows.map((r) => [r.day, r]));
  return days.map((day) => byDay.get(day) ?? empty(day));
}
