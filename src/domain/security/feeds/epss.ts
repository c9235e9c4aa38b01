/**
 * EPSS CSV (FIRST's `epss_scores-YYYY-MM-DD.csv[.gz]`): optional `#model_version:…,score_date:…`
 * comment lines, a header naming the columns `cve`, `epss`, `percentile`, then one row per CVE.
 * Plain or gzipped. Lines are split by hand so that one line is bounded; rows with a bad CVE id or
 * a number outside 0..1 are skipped and counted.
 */
import { feedMalformed, feedTooLarge, readFileBounded } from './bytes.js';

/** One EPSS row. */
export interface EpssRow {
  cve: string;
  epss: number;
  percentile: number;
}

/** Caps of one EPSS read. */
export interface EpssLimits {
  maxBytes: number;
  maxLineLength: number;
  maxRows: number;
}

/** Defaults: the real file is ~10 MiB and ~300 000 rows. */
export const DEFAULT_EPSS_LIMITS: EpssLimits = { maxBytes: 256 * 1024 * 1024, maxLineLength: 4096, maxRows: 5_000_000 };

/** Metadata and counters of one read. */
export interface EpssStats {
  model_version: string | null;
  score_date: string | null;
  rows: number;
  skipped: number;
}

/** A fresh stats object. */
export function newEpssStats(): EpssStats {
  return { model_version: null, score_date: null, rows: 0, skipped: 0 };
}

const CVE_RE = /^CVE-\d{4}-\d{4,}$/;

function parseComment(line: string, stats: EpssStats): void {
  for (const part of line.replace(/^#+/, '').split(',')) {
    const colon = part.indexOf(':');
    if (colon < 0) continue;
    const key = part.slice(0, colon).trim();
    const value = part.slice(colon + 1).trim();
    if (key === 'model_version') stats.model_version = value;
    else if (key === 'score_date') stats.score_date = value;
  }
}

function probability(text: string | undefined): number | null {
  if (text === undefined) return null;
  const t = text.trim();
  if (!/^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/.test(t)) return null;
  const n = Number(t);
  return n >= 0 && n <= 1 ? n : null;
}

/** Lines of a byte stream, each at most `maxLength` characters. */
async function* lines(source: AsyncIterable<Buffer>, maxLength: number): AsyncGenerator<string> {
  let carry = '';
  const decoder = new TextDecoder('utf-8');
  for await (const chunk of source) {
    const text = carry + decoder.decode(chunk, { stream: true });
    const parts = text.split('\n');
    carry = parts.pop() ?? '';
    if (carry.length > maxLength) throw feedMalformed('feed_malformed', `EPSS line longer than ${maxLength} characters`);
    for (const line of parts) {
      if (line.length > maxLength) throw feedMalformed('feed_malformed', `EPSS line longer than ${maxLength} characters`);
      yield line.replace(/\r$/, '');
    }
  }
  carry += decoder.decode();
  if (carry.length > 0) yield carry.replace(/\r$/, '');
}

/** Read every EPSS row of a CSV file (plain or gzip). */
export async function* readEpssCsv(path: string, limits: Partial<EpssLimits> = {}, stats: EpssStats = newEpssStats()): AsyncGenerator<EpssRow> {
  const caps = { ...DEFAULT_EPSS_LIMITS, ...limits };
  let columns: { cve: number; epss: number; percentile: number } | null = null;
  for await (const raw of lines(readFileBounded(path, caps.maxBytes, 'feed_too_large'), caps.maxLineLength)) {
    const line = raw.replace(/^\uFEFF/, '').trim();
    if (line === '') continue;
    if (line.startsWith('#')) {
      parseComment(line, stats);
      continue;
    }
    const cells = line.split(',');
    if (!columns) {
      const names = cells.map((c) => c.trim().toLowerCase().replace(/^"|"$/g, ''));
      const cve = names.indexOf('cve');
      const epss = names.indexOf('epss');
      const percentile = names.indexOf('percentile');
      if (cve < 0 || epss < 0 || percentile < 0) throw feedMalformed('feed_malformed', 'EPSS header must name cve, epss and percentile');
      columns = { cve, epss, percentile };
      continue;
    }
    const cve = cells[columns.cve]?.trim().replace(/^"|"$/g, '') ?? '';
    const epss = probability(cells[columns.epss]);
    const percentile = probability(cells[columns.percentile]);
    if (!CVE_RE.test(cve) || epss === null || percentile === null) {
      stats.skipped++;
      continue;
    }
    stats.rows++;
    if (stats.rows > caps.maxRows) throw feedTooLarge('feed_too_many_entries', `EPSS has more than ${caps.maxRows} rows`);
    yield { cve, epss, percentile };
  }
  if (!columns) throw feedMalformed('feed_malformed', 'EPSS file has no header line');
}
