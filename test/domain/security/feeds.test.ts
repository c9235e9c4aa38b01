import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { strToU8, zipSync } from 'fflate';
import { DomainError } from '../../../src/domain/errors.js';
import { newEpssStats, readEpssCsv } from '../../../src/domain/security/feeds/epss.js';
import { splitJsonArray } from '../../../src/domain/security/feeds/json-array.js';
import { parseKevCatalog, readKevCatalog, readKevFeed } from '../../../src/domain/security/feeds/kev.js';
import { newOsvFeedStats, readOsvFeed, type OsvFeedLimits } from '../../../src/domain/security/feeds/osv-feed.js';
import { normalizeOsvRecord } from '../../../src/domain/security/osv.js';
import type { AdvisoryRow } from '../../../src/domain/security/types.js';
import { makeTempDir } from '../../helpers/tmp.js';

const FIXTURES = join(import.meta.dirname, '../../fixtures/security');
const OSV_DIR = join(FIXTURES, 'osv');
const osvFiles = readdirSync(OSV_DIR).filter((f) => f.endsWith('.json')).sort();
const expectedRows = osvFiles.flatMap((f) => normalizeOsvRecord(JSON.parse(readFileSync(join(OSV_DIR, f), 'utf8'))).rows);

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}
const byId = (rows: AdvisoryRow[]) => rows.map((r) => `${r.id}/${r.ecosystem}/${r.package_name}`).sort();

async function rejectsWith(p: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof DomainError, String(err));
    assert.equal(err.code, code);
    return true;
  });
}

let dir: string;
let cleanup: () => Promise<void>;
before(async () => ({ dir, cleanup } = await makeTempDir('tollgate-feeds-')));
after(async () => cleanup());

describe('OSV zip feed', () => {
  it('streams every record of a zip built by the zip tool', async () => {
    const src = join(dir, 'zipsrc');
    mkdirSync(join(src, 'nested'), { recursive: true });
    for (const f of osvFiles) writeFileSync(join(src, 'nested', f), readFileSync(join(OSV_DIR, f)));
    writeFileSync(join(src, 'nested', 'broken.json'), '{"id": "DSA-0000-1", "affected": [');
    writeFileSync(join(src, 'README.txt'), 'not a record');
    const zip = join(dir, 'all.zip');
    execFileSync('zip', ['-q', '-r', zip, '.'], { cwd: src });

    const stats = newOsvFeedStats();
    const rows = await collect(readOsvFeed(zip, {}, stats));
    assert.deepEqual(byId(rows), byId(expectedRows));
    assert.equal(stats.records, osvFiles.length + 1);
    assert.equal(stats.withdrawn, 1);
    assert.equal(stats.skipped, 1);
    assert.match(stats.skip_samples[0]!, /broken\.json: invalid JSON/);
    assert.equal(stats.rows, rows.length);
  });

  const zipOf = (entries: Record<string, Uint8Array>, name: string): string => {
    const path = join(dir, name);
    writeFileSync(path, zipSync(entries, { level: 9 }));
    return path;
  };
  const record = (i: number) => strToU8(JSON.stringify({ id: `USN-${i}-1`, related: [`CVE-2024-${1000 + i}`], affected: [{ package: { ecosystem: 'Ubuntu:22.04:LTS', name: `p${i}` }, ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '0' }] }] }] }));

  it('reads a zip produced by fflate', async () => {
    const path = zipOf({ 'a.json': record(1), 'b.json': record(2) }, 'fflate.zip');
    assert.deepEqual((await collect(readOsvFeed(path))).map((r) => r.package_name), ['p1', 'p2']);
  });

  it('caps the entry count', async () => {
    const entries: Record<string, Uint8Array> = {};
    for (let i = 0; i < 20; i++) entries[`r${i}.json`] = record(i);
    const path = zipOf(entries, 'many.zip');
    await rejectsWith(collect(readOsvFeed(path, { maxEntries: 10 })), 'feed_too_many_entries');
    assert.equal((await collect(readOsvFeed(path, { maxEntries: 20 }))).length, 20);
  });

  it('caps one entry and the total, counting decompressed bytes (zip bomb)', async () => {
    const bomb = new Uint8Array(4 * 1024 * 1024).fill(0x20); // compresses to a few KiB
    bomb.set(strToU8('{"id":"X-1","affected":[]}'), 0);
    const path = zipOf({ 'bomb.json': bomb }, 'bomb.zip');
    const limits: Partial<OsvFeedLimits> = { maxEntryBytes: 1024 * 1024 };
    await rejectsWith(collect(readOsvFeed(path, limits)), 'feed_entry_too_large');
    const several: Record<string, Uint8Array> = {};
    for (let i = 0; i < 5; i++) several[`r${i}.json`] = record(i);
    const total = zipOf(several, 'total.zip');
    await rejectsWith(collect(readOsvFeed(total, { maxTotalBytes: 600 })), 'feed_too_large');
  });

  it('rejects a zip whose entry list is damaged as feed_malformed (found by fuzz/targets/osv-feed)', async () => {
    // yauzl reported these as a plain Error ("unexpected EOF"), which escaped the feed reader.
    const kept = join(import.meta.dirname, '../../../fuzz/corpus/osv-feed/finding-zip-entry-list-cut.zip');
    await rejectsWith(collect(readOsvFeed(kept)), 'feed_malformed');
    const entries: Record<string, Uint8Array> = {};
    for (const f of osvFiles.slice(0, 3)) entries[f] = readFileSync(join(OSV_DIR, f));
    const whole = Buffer.from(zipSync(entries, { level: 0 }));
    // The central directory's end record survives; the entries it points at moved.
    const cut = join(dir, 'cut.zip');
    writeFileSync(cut, Buffer.concat([whole.subarray(0, whole.length - 400), whole.subarray(whole.length - 22)]));
    await rejectsWith(collect(readOsvFeed(cut)), 'feed_malformed');
  });

  it('rejects a file that is not a zip, JSON array or object', async () => {
    const path = join(dir, 'garbage.bin');
    writeFileSync(path, 'PK\u0003\u0004 not really a zip');
    await rejectsWith(collect(readOsvFeed(path)), 'feed_malformed');
    const text = join(dir, 'text.txt');
    writeFileSync(text, 'hello');
    await rejectsWith(collect(readOsvFeed(text)), 'feed_malformed');
  });
});

describe('OSV JSON feed', () => {
  const records = osvFiles.map((f) => JSON.parse(readFileSync(join(OSV_DIR, f), 'utf8')) as unknown);

  it('reads a JSON array, plain or gzipped', async () => {
    const plain = join(dir, 'all.json');
    writeFileSync(plain, JSON.stringify(records, null, 2));
    assert.deepEqual(byId(await collect(readOsvFeed(plain))), byId(expectedRows));
    const gz = join(dir, 'all.json.gz');
    writeFileSync(gz, gzipSync(JSON.stringify(records)));
    const stats = newOsvFeedStats();
    assert.deepEqual(byId(await collect(readOsvFeed(gz, {}, stats))), byId(expectedRows));
    assert.equal(stats.withdrawn, 1);
  });

  it('reads a single record', async () => {
    const one = join(dir, 'one.json');
    writeFileSync(one, readFileSync(join(OSV_DIR, 'RLSA-2023-5453.json')));
    assert.deepEqual((await collect(readOsvFeed(one))).map((r) => r.package_name), ['glibc', 'glibc-common']);
  });

  it('rejects truncated arrays and oversized records', async () => {
    const truncated = join(dir, 'truncated.json');
    writeFileSync(truncated, JSON.stringify(records).slice(0, 500));
    await rejectsWith(collect(readOsvFeed(truncated)), 'feed_malformed');
    const big = join(dir, 'big.json');
    writeFileSync(big, JSON.stringify([{ id: 'A', details: 'x'.repeat(5000), affected: [] }]));
    await rejectsWith(collect(readOsvFeed(big, { maxEntryBytes: 1000 })), 'feed_entry_too_large');
    await rejectsWith(collect(readOsvFeed(big, { maxTotalBytes: 1000 })), 'feed_too_large');
  });

  it('splits arrays across arbitrary chunk boundaries, honouring strings and escapes', async () => {
    const text = ' [ {"a":"]}[{\\"","b":[1,{"c":"}"}]} , {"d":"\\\\"} ,[2] ] \n';
    async function* bytes(): AsyncGenerator<Buffer> {
      for (const b of Buffer.from(text)) yield Buffer.from([b]);
    }
    const parts = (await collect(splitJsonArray(bytes(), 1000))).map((b) => JSON.parse(b.toString()) as unknown);
    assert.deepEqual(parts, [{ a: ']}[{"', b: [1, { c: '}' }] }, { d: '\\' }, [2]]);
    async function* trailing(): AsyncGenerator<Buffer> {
      yield Buffer.from('[{}] x');
    }
    await assert.rejects(collect(splitJsonArray(trailing(), 1000)), DomainError);
  });
});

describe('EPSS CSV', () => {
  it('reads rows and the model header; skips invalid rows', async () => {
    const stats = newEpssStats();
    const rows = await collect(readEpssCsv(join(FIXTURES, 'epss_scores-2024-06-01.csv'), {}, stats));
    assert.equal(rows.length, 9);
    assert.deepEqual(rows.find((r) => r.cve === 'CVE-2023-4911'), { cve: 'CVE-2023-4911', epss: 0.79331, percentile: 0.98513 });
    assert.equal(stats.model_version, 'v2023.03.01');
    assert.equal(stats.score_date, '2024-06-01T00:00:00+0000');
    assert.equal(stats.skipped, 2);
  });

  it('reads a gzipped file with CRLF line ends and reordered columns', async () => {
    const path = join(dir, 'epss.csv.gz');
    writeFileSync(path, gzipSync('#model_version:v2025.03.14,score_date:2025-06-01T00:00:00Z\r\npercentile,cve,epss\r\n0.5,CVE-2024-3094,0.8\r\n'));
    assert.deepEqual(await collect(readEpssCsv(path)), [{ cve: 'CVE-2024-3094', epss: 0.8, percentile: 0.5 }]);
  });

  it('fails on a missing header, an overlong line or too many rows', async () => {
    const noHeader = join(dir, 'noheader.csv');
    writeFileSync(noHeader, '#model_version:x\n');
    await rejectsWith(collect(readEpssCsv(noHeader)), 'feed_malformed');
    const wrongHeader = join(dir, 'wrong.csv');
    writeFileSync(wrongHeader, 'a,b,c\nCVE-2024-1,0.1,0.2\n');
    await rejectsWith(collect(readEpssCsv(wrongHeader)), 'feed_malformed');
    const long = join(dir, 'long.csv');
    writeFileSync(long, `cve,epss,percentile\n${'x'.repeat(10_000)}\n`);
    await rejectsWith(collect(readEpssCsv(long)), 'feed_malformed');
    await rejectsWith(collect(readEpssCsv(join(FIXTURES, 'epss_scores-2024-06-01.csv'), { maxRows: 3 })), 'feed_too_many_entries');
  });
});

describe('KEV catalogue', () => {
  it('reads the CISA catalogue shape', async () => {
    const kev = await readKevCatalog(join(FIXTURES, 'known_exploited_vulnerabilities.json'));
    assert.equal(kev.catalog_version, '2024.06.01');
    assert.equal(kev.date_released, '2024-06-01T15:00:00.0000Z');
    assert.deepEqual(kev.rows.map((r) => r.cve_id), ['CVE-2023-4911', 'CVE-2021-44228']);
    assert.equal(kev.skipped, 1);
    assert.deepEqual(kev.rows[1], {
      cve_id: 'CVE-2021-44228', vendor_project: 'Apache', product: 'Log4j2', vulnerability_name: 'Apache Log4j2 Remote Code Execution Vulnerability',
      date_added: '2021-12-10', due_date: '2021-12-24', known_ransomware_campaign_use: 'Known',
    });
    assert.equal((await collect(readKevFeed(join(FIXTURES, 'known_exploited_vulnerabilities.json')))).length, 2);
  });

  it('rejects malformed or oversized catalogues', async () => {
    assert.throws(() => parseKevCatalog([]), DomainError);
    assert.throws(() => parseKevCatalog({ vulnerabilities: 'x' }), DomainError);
    const bad = join(dir, 'kev-bad.json');
    writeFileSync(bad, '{"vulnerabilities": [');
    await rejectsWith(readKevCatalog(bad), 'feed_malformed');
    await rejectsWith(readKevCatalog(join(FIXTURES, 'known_exploited_vulnerabilities.json'), 100), 'feed_too_large');
  });
});

describe('OSV feed files refused early', () => {
  /** Files this process has open under `dir` (Linux: /proc/self/fd links). */
  const openUnder = (where: string) =>
    readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`).startsWith(where);
      } catch {
        return false;
      }
    }).length;

  it('closes the file of every feed refused as neither a zip, a JSON array nor an object, or empty', async () => {
    const bad = join(dir, 'not-json.txt');
    const empty = join(dir, 'empty.json');
    writeFileSync(bad, 'this is not a feed\n'.repeat(1000));
    writeFileSync(empty, '');
    for (let i = 0; i < 20; i++) {
      await rejectsWith(collect(readOsvFeed(bad)), 'feed_malformed');
      await rejectsWith(collect(readOsvFeed(empty)), 'feed_malformed');
    }
    // Stream closes complete on a later tick.
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(openUnder(dir), 0, 'no feed file left open');
  });
});
