/**
 * CISA Known Exploited Vulnerabilities catalogue (JSON: `{title, catalogVersion, dateReleased,
 * count, vulnerabilities: [{cveID, vendorProject, product, vulnerabilityName, dateAdded,
 * shortDescription, requiredAction, dueDate, knownRansomwareCampaignUse, notes, cwes}]}`).
 * The file is small (~1.5 MiB) and is read whole, with a size cap. Entries without a valid CVE
 * id are skipped and counted.
 */
import { feedMalformed, feedTooLarge, readFileBounded } from './bytes.js';

/** One KEV entry. */
export interface KevRow {
  cve_id: string;
  vendor_project: string | null;
  product: string | null;
  vulnerability_name: string | null;
  date_added: string | null;
  due_date: string | null;
  /** `Known` / `Unknown` as published. */
  known_ransomware_campaign_use: string | null;
}

/** A parsed catalogue. */
export interface KevCatalog {
  catalog_version: string | null;
  date_released: string | null;
  rows: KevRow[];
  skipped: number;
}

/** Default size cap (the real catalogue is ~1.5 MiB). */
export const DEFAULT_KEV_MAX_BYTES = 64 * 1024 * 1024;
const MAX_ENTRIES = 1_000_000;
const CVE_RE = /^CVE-\d{4}-\d{4,}$/;

function text(v: unknown): string | null {
  if (typeof v !== 'string') return null;
  const t = v.trim();
  return t === '' ? null : t.slice(0, 1000);
}

/** Validate a parsed KEV document into rows. Throws DomainError('feed_malformed'). */
export function parseKevCatalog(doc: unknown): KevCatalog {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw feedMalformed('feed_malformed', 'KEV catalogue must be an object');
  const body = doc as Record<string, unknown>;
  const list = body.vulnerabilities;
  if (!Array.isArray(list)) throw feedMalformed('feed_malformed', 'KEV catalogue has no vulnerabilities[]');
  if (list.length > MAX_ENTRIES) throw feedTooLarge('feed_too_many_entries', `KEV catalogue has more than ${MAX_ENTRIES} entries`);
  const rows: KevRow[] = [];
  const seen = new Set<string>();
  let skipped = 0;
  for (const item of list) {
    const entry = typeof item === 'object' && item !== null ? (item as Record<string, unknown>) : {};
    const cve = text(entry.cveID);
    if (!cve || !CVE_RE.test(cve) || seen.has(cve)) {
      skipped++;
      continue;
    }
    seen.add(cve);
    rows.push({
      cve_id: cve,
      vendor_project: text(entry.vendorProject),
      product: text(entry.product),
      vulnerability_name: text(entry.vulnerabilityName),
      date_added: text(entry.dateAdded),
      due_date: text(entry.dueDate),
      known_ransomware_campaign_use: text(entry.knownRansomwareCampaignUse),
    });
  }
  return { catalog_version: text(body.catalogVersion), date_released: text(body.dateReleased), rows, skipped };
}

/** Read and parse a KEV catalogue file (plain or gzipped). */
export async function readKevCatalog(path: string, maxBytes = DEFAULT_KEV_MAX_BYTES): Promise<KevCatalog> {
  const chunks: Buffer[] = [];
  for await (const chunk of readFileBounded(path, maxBytes, 'feed_too_large')) chunks.push(chunk);
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw feedMalformed('feed_malformed', 'KEV catalogue is not valid JSON');
  }
  return parseKevCatalog(doc);
}

/** Rows of a KEV catalogue file, as an async iterator (same shape as the other feed readers). */
export async function* readKevFeed(path: string, maxBytes = DEFAULT_KEV_MAX_BYTES): AsyncGenerator<KevRow> {
  yield* (await readKevCatalog(path, maxBytes)).rows;
}
