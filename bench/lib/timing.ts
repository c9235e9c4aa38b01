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

/** The parts of a Server-Timing header as the service writes it (`receive;dur=1.2, …`): name and milliseconds. */
function serverTimingParts(header: string): Array<[name: string, ms: number]> {
  return header.split(', ').flatMap((entry) => {
    const [name, dur] = entry.split(';dur=');
    return name && dur ? [[name, Number(dur)] as [string, number]] : [];
  });
}

/** The median of each part of several Server-Timing headers (`receive 1.2, format 0.8, …`). */
export function medianServerTiming(headers: readonly string[]): string {
  const parts = new Map<string, number[]>();
  for (const header of headers) {
    for (const [name, ms] of serverTimingParts(header)) parts.set(name, [...(parts.get(name) ?? []), ms]);
  }
  return [...parts].map(([name, values]) => `${name} ${median(values).toFixed(1)}`).join(', ') + ' ms';
}

/** How many APT index publishes the service made, by mode, and their mean duration (from its /metrics text). */
export function publishesOf(metrics: string): string {
  const series = (name: string, mode: string) => Number(new RegExp(`^tollgate_publish_duration_seconds_${name}\\{format="deb",mode="${mode}"\\} (\\S+)`, 'm').exec(metrics)?.[1] ?? 0);
  return ['append', 'full'].map((mode) => `${series('count', mode)} ${mode} (mean ${((1000 * series('sum', mode)) / Math.max(1, series('count', mode))).toFixed(1)} ms)`).join(', ');
}

/** One upload as its client timed it, with the service's Server-Timing header. */
export interface TimedUpload {
  clientMs: number;
  serverTiming: string;
}

/**
 * Where the clients' time went, summed over every upload: each Server-Timing part (but `total`)
 * and what the service did not time (the connection, sending the answer, the client itself), in
 * seconds and as a share of the whole (`receive 12.4 s 30 %, …, outside 4.3 s 10 %`). Unlike the
 * medians, this weighs each upload by how long it took, as throughput does.
 */
export function timeShares(uploads: readonly TimedUpload[]): string {
  const parts = new Map<string, number>();
  let client = 0;
  let timed = 0;
  for (const upload of uploads) {
    client += upload.clientMs;
    for (const [name, ms] of serverTimingParts(upload.serverTiming)) {
      if (name === 'total') continue;
      parts.set(name, (parts.get(name) ?? 0) + ms);
      timed += ms;
    }
  }
  if (client === 0) return 'not measured';
  // The service's clock and the client's agree within a rounding: the whole is never less than its parts.
  const whole = Math.max(client, timed);
  const shown = [...parts, ['outside', whole - timed] as const].filter(([, ms]) => ms / whole >= 0.005);
  return `${(client / 1000).toFixed(1)} s: ${shown.map(([name, ms]) => `${name} ${(ms / 1000).toFixed(1)} s ${Math.round((100 * ms) / whole)} %`).join(', ')}`;
}
