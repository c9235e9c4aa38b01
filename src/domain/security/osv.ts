/**
 * OSV record (https://ossf.github.io/osv-schema/) → flat advisory rows, one per affected package.
 *
 * - Withdrawn records give no rows.
 * - CVE ids come from the record id, `aliases`, `related` and `upstream` (and the CVE suffix of
 *   ids such as `UBUNTU-CVE-2024-1234` / `DEBIAN-CVE-2024-1234`).
 * - Ranges of type ECOSYSTEM (and SEMVER, same semantics) are kept; GIT ranges are ignored since
 *   distro packages carry no commit hashes. Events are paired in listed order into intervals (all
 *   distro feeds list them sorted): `introduced` opens one, the next `fixed` / `last_affected` /
 *   `limit` closes it.
 * - Urgency: the first string found under `urgency`, `priority`, `ubuntu_priority` or `severity`
 *   in the affected entry's `ecosystem_specific`, its `database_specific`, then the record's
 *   `database_specific`; else a non-CVSS `severity[]` entry (OSV type `Ubuntu`).
 * - "Will not fix": a string under `status`, `fix_status`, `fix_state`, `state` or `resolution`
 *   in those same objects that reads `ignored`, `will not fix`, `won't fix`, `wont-fix`/`wontfix`,
 *   `out of support scope` (Red Hat), or `end-of-life` (Debian tracker) — optionally in `<…>`
 *   as the Debian tracker writes them. `deferred`/`postponed` are NOT wont-fix: a fix may come.
 */
import { chooseSeverity, type CvssCandidate } from './severity.js';
import type { AdvisoryRange, AdvisoryRow } from './types.js';

export { distroEcosystems, ecosystemForCodename, type DistroEcosystem } from './ecosystems.js';

/** Bounds on one record: anything larger is treated as malformed. */
export const OSV_LIMITS = {
  maxAffected: 5000,
  maxRangesPerPackage: 1000,
  maxEventsPerRange: 1000,
  maxVersionsPerPackage: 20000,
  maxStringLength: 1024,
  maxSummaryLength: 1000,
} as const;

/** Result of normalising one record: its rows, or why it gave none. */
export interface OsvNormalizeResult {
  rows: AdvisoryRow[];
  /** null when the record was used; `withdrawn`; or a short reason it is malformed. */
  skipped: null | 'withdrawn' | string;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const CVE_RE = /^CVE-\d{4}-\d{4,}$/;
const CVE_SUFFIX_RE = /(?:^|-)(CVE-\d{4}-\d{4,})$/;
const URGENCY_KEYS = ['urgency', 'priority', 'ubuntu_priority', 'severity'] as const;
const STATUS_KEYS = ['status', 'fix_status', 'fix_state', 'state', 'resolution'] as const;
const WONT_FIX_RE = /^<?\s*(ignored|will not fix|won'?t fix|wont[-_ ]?fix|out of support scope|end[-_ ]of[-_ ]life)\b/i;

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | null {
  if (typeof v !== 'string') return null;
  const t = v.trim();
  return t.length > 0 && t.length <= OSV_LIMITS.maxStringLength ? t : null;
}

function strings(v: unknown): string[] {
  if (!Array.isArray(v)) return [];
  return v.map(str).filter((s): s is string => s !== null);
}

/** First urgency-like string in the given objects. */
function findUrgency(sources: readonly unknown[]): string | null {
  for (const source of sources) {
    if (!isObject(source)) continue;
    for (const key of URGENCY_KEYS) {
      const value = str(source[key]);
      if (value) return value;
    }
  }
  return null;
}

/** True when one of the objects carries a "will not fix" status marker. */
export function hasWontFixMarker(sources: readonly unknown[]): boolean {
  for (const source of sources) {
    if (!isObject(source)) continue;
    for (const key of STATUS_KEYS) {
      const value = str(source[key]);
      if (value && WONT_FIX_RE.test(value)) return true;
    }
  }
  return false;
}

/** Pair a range's events, in listed order, into intervals. Returns null when malformed. */
export function eventsToIntervals(events: unknown): AdvisoryRange[] | null {
  if (!Array.isArray(events) || events.length > OSV_LIMITS.maxEventsPerRange) return null;
  const out: AdvisoryRange[] = [];
  let open: AdvisoryRange | null = null;
  for (const event of events) {
    if (!isObject(event)) return null;
    const introduced = str(event.introduced);
    const fixed = str(event.fixed);
    const lastAffected = str(event.last_affected);
    const limit = str(event.limit);
    if (introduced !== null) {
      if (open) out.push(open); // two introduced in a row: the first stays open-ended
      open = { introduced };
    } else if (fixed !== null || lastAffected !== null || limit !== null) {
      // An end without an opening event has nothing to close (OSV requires an introduced first).
      if (!open) continue;
      if (fixed !== null) open.fixed = fixed;
      else if (lastAffected !== null) open.last_affected = lastAffected;
      else if (limit !== null) open.limit = limit;
      out.push(open);
      open = null;
    }
  }
  if (open) out.push(open);
  return out;
}

/** Collect the CVE ids a record names. */
function cveIds(record: JsonObject, id: string): string[] {
  const found = new Set<string>();
  for (const candidate of [id, ...strings(record.aliases), ...strings(record.related), ...strings(record.upstream)]) {
    if (CVE_RE.test(candidate)) found.add(candidate);
    else {
      const suffix = CVE_SUFFIX_RE.exec(candidate);
      if (suffix?.[1]) found.add(suffix[1]);
    }
  }
  return [...found].sort();
}

function severityEntries(v: unknown): { cvss: CvssCandidate[]; words: string[] } {
  const cvss: CvssCandidate[] = [];
  const words: string[] = [];
  if (!Array.isArray(v)) return { cvss, words };
  for (const entry of v) {
    if (!isObject(entry)) continue;
    const type = str(entry.type);
    const score = str(entry.score);
    if (!type || !score) continue;
    if (type.startsWith('CVSS_')) cvss.push({ type, score });
    else words.push(score);
  }
  return { cvss, words };
}

/** Normalise one parsed OSV record into advisory rows. Never throws. */
export function normalizeOsvRecord(record: unknown): OsvNormalizeResult {
  if (!isObject(record)) return { rows: [], skipped: 'record is not an object' };
  const id = str(record.id);
  if (!id) return { rows: [], skipped: 'missing id' };
  if (record.withdrawn !== undefined && record.withdrawn !== null) return { rows: [], skipped: 'withdrawn' };
  const affected = record.affected;
  if (!Array.isArray(affected)) return { rows: [], skipped: 'missing affected[]' };
  if (affected.length > OSV_LIMITS.maxAffected) return { rows: [], skipped: 'too many affected entries' };

  const cves = cveIds(record, id);
  const recordSeverity = severityEntries(record.severity);
  const summaryText = str(record.summary) ?? (typeof record.details === 'string' ? record.details.trim().split('\n')[0] ?? '' : '');
  const summary = summaryText.slice(0, OSV_LIMITS.maxSummaryLength);
  const modified = str(record.modified);
  const published = str(record.published);

  const byKey = new Map<string, AdvisoryRow>();
  for (const entry of affected) {
    if (!isObject(entry) || !isObject(entry.package)) continue;
    const ecosystem = str(entry.package.ecosystem);
    const name = str(entry.package.name);
    if (!ecosystem || !name) continue;

    const ranges: AdvisoryRange[] = [];
    const rawRanges = Array.isArray(entry.ranges) ? entry.ranges : [];
    if (rawRanges.length > OSV_LIMITS.maxRangesPerPackage) return { rows: [], skipped: 'too many ranges' };
    for (const range of rawRanges) {
      if (!isObject(range)) continue;
      const type = str(range.type);
      if (type !== 'ECOSYSTEM' && type !== 'SEMVER') continue;
      const intervals = eventsToIntervals(range.events);
      if (!intervals) return { rows: [], skipped: 'malformed range events' };
      ranges.push(...intervals);
    }
    const versions = strings(entry.versions);
    if (versions.length > OSV_LIMITS.maxVersionsPerPackage) return { rows: [], skipped: 'too many versions' };

    const markerSources = [entry.ecosystem_specific, entry.database_specific, record.database_specific];
    const entrySeverity = severityEntries(entry.severity);
    const urgency = findUrgency(markerSources) ?? entrySeverity.words[0] ?? recordSeverity.words[0] ?? null;
    const choice = chooseSeverity([...entrySeverity.cvss, ...recordSeverity.cvss], urgency);
    const wontFix = hasWontFixMarker(markerSources);

    const key = `${ecosystem}\u0000${name}`;
    const existing = byKey.get(key);
    if (existing) {
      // The same package listed twice in one record: one row with the union of its ranges.
      existing.ranges.push(...ranges);
      existing.versions.push(...versions.filter((v) => !existing.versions.includes(v)));
      existing.wont_fix ||= wontFix;
      continue;
    }
    byKey.set(key, {
      id,
      cve_ids: cves,
      ecosystem,
      package_name: name,
      purl: str(entry.package.purl),
      ranges,
      versions,
      severity: choice.severity,
      severity_source: choice.source,
      cvss_vector: choice.cvss_vector,
      cvss_score: choice.cvss_score,
      urgency,
      wont_fix: wontFix,
      summary,
      modified,
      published,
    });
  }
  return { rows: [...byKey.values()], skipped: null };
}
