/**
 * PostgreSQL plans the package search's page (`lower(name) LIKE '%…%'`, ordered by name) from the
 * expression statistics of migration 0017: a text that many names contain is read off the name
 * index, a few rows, instead of a sort of the whole table. Without the statistics the planner
 * guesses a handful of matches and sorts a sequential scan (checked here too, so the test shows
 * what the statistics change).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { backends, startTestApp, type TestApp } from '../../helpers/app.js';

const ROWS = 20_000;

describe('the package search page on PostgreSQL uses the name index for a common text', { skip: !backends().includes('postgres') && 'TEST_DATABASE_URL is not set' }, () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ backend: 'postgres' });
    const now = new Date().toISOString();
    for (let start = 0; start < ROWS; start += 1_000) {
      await t.ctx.db.insertInto('packages').values(Array.from({ length: 1_000 }, (_, k) => {
        const i = start + k;
        const name = `stat${String(i).padStart(6, '0')}`;
        return {
          id: `s${i}`, distribution: 'jammy', format: 'deb' as const, name, version: '1.0-1', arch: 'amd64', component: 'main', status: 'published' as const,
          cve_status: 'not_scanned' as const, sha256: String(i).padStart(64, '0'), upload_sha256: String(i).padStart(64, '0'), upload_size: 1, signed_by: null,
          sha512: '0', sha1: '0', md5: '0', size: 1, filename: `${name}.deb`, pool_path: `apt/pool/main/s/${name}/${name}_1.0-1_amd64.deb`,
          source_name: name, source_version: '1.0-1', metadata: '{}', index_entry: `Package: ${name}`, relations: '{}', files: '[]', pipeline: '[]',
          findings: '{}', reasons: '[]', uploaded_by: null, sla_deadline: null, seq: i, created_at: now, updated_at: now,
        };
      })).execute();
    }
  });
  after(async () => t?.close());

  /** The plan of the search page for a text half the names contain. */
  const plan = async () => {
    await sql`analyze packages`.execute(t.ctx.db);
    const { rows } = await sql<{ 'QUERY PLAN': string }>`explain select * from packages where lower(name) like '%stat01%' order by name, created_at, seq limit 50`.execute(t.ctx.db);
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  };

  it('with the statistics the page walks the name index; without them it sorts a sequential scan', async () => {
    const version = await sql<{ v: string }>`select current_setting('server_version_num') as v`.execute(t.ctx.db);
    if (Number(version.rows[0]!.v) < 140000) return; // no expression statistics before PostgreSQL 14
    const withStatistics = await plan();
    assert.match(withStatistics, /Index Scan using packages_name/, withStatistics);
    assert.doesNotMatch(withStatistics, /Seq Scan/, withStatistics);
    await sql`drop statistics packages_lower_name`.execute(t.ctx.db);
    const without = await plan();
    assert.match(without, /Seq Scan on packages/, without);
  });
});
