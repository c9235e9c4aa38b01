/** Small timing helpers for benchmarks. */

/** Runs `fn` and returns its result with the wall-clock time it took, in milliseconds. */
export async function timed<T>(fn: () => Promise<T> | T): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await fn();
  return { ms: performance.now() - start, value };
}

/** The median of a non-empty list (mean of the two middle values for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error('median of nothing');
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The nearest-rank `q` quantile (0 < q <= 1) of a list; NaN for an empty one. */
export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]! : NaN;
}

/** `1234.5` → `1.23 s`, `12.3` → `12 ms`: readable durations for tables. */
export function formatMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`;
}

/** Bytes as MiB, one decimal. */
export function formatMiB(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** The median of each part of several Server-Timing headers (`receive 1.2, format 0.8, …`). */
export function medianServerTiming(headers: readonly string[]): string {
  const parts = new Map<string, number[]>();
  for (const header of headers) {
    for (const entry of header.split(', ')) {
      const [name, dur] = entry.split(';dur=');
      if (name && dur) parts.set(name, [...(parts.get(name) ?? []), Number(dur)]);
    }
  }
  return [...parts].map(([name, values]) => `${name} ${median(values).toFixed(1)}`).join(', ') + ' ms';
}

/** How many APT index publishes the service made, by mode, and their mean duration (from its /metrics text). */
export function publishesOf(metrics: string): string {
  const series = (name: string, mode: string) => Number(new RegExp(`^tollgate_publish_duration_seconds_${name}\\{format="deb",mode="${mode}"\\} (\\S+)`, 'm').exec(metrics)?.[1] ?? 0);
  return ['append', 'full'].map((mode) => `${series('count', mode)} ${mode} (mean ${((1000 * series('sum', mode)) / Math.max(1, series('count', mode))).toFixed(1)} ms)`).join(', ');
}
