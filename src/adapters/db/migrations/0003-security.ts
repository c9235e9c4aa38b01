import type { Kysely } from 'kysely';

/**
 * The built-in vulnerability database (advisories from OSV feeds, EPSS, KEV), per-package findings (for filtering by
 * severity and CVE), security decision records (one per name, version and arch) and the scheduler's run marks.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // One row per OSV record × affected package; `data` is the flattened AdvisoryRow (JSON).
  await db.schema
    .createTable('vuln_advisories')
    .addColumn('feed', 'text', (c) => c.notNull())
    .addColumn('advisory_id', 'text', (c) => c.notNull())
    .addColumn('ecosystem', 'text', (c) => c.notNull())
    .addColumn('package_name', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('vuln_advisories_lookup').on('vuln_advisories').columns(['ecosystem', 'package_name']).execute();
  await db.schema.createIndex('vuln_advisories_feed').on('vuln_advisories').column('feed').execute();

  await db.schema
    .createTable('vuln_epss')
    .addColumn('cve_id', 'text', (c) => c.primaryKey())
    .addColumn('epss', 'real', (c) => c.notNull())
    .addColumn('percentile', 'real', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('vuln_kev')
    .addColumn('cve_id', 'text', (c) => c.primaryKey())
    .addColumn('vendor_project', 'text')
    .addColumn('product', 'text')
    .addColumn('vulnerability_name', 'text')
    .addColumn('date_added', 'text')
    .addColumn('due_date', 'text')
    .addColumn('known_ransomware_campaign_use', 'text')
    .execute();

  // One row per feed (OSV feeds by their configured name, plus `epss` and `kev`).
  await db.schema
    .createTable('vuln_feed_state')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('etag', 'text')
    .addColumn('last_modified', 'text')
    .addColumn('sha256', 'text')
    /** Last time the feed was confirmed current (downloaded, or answered "not modified"). */
    .addColumn('fetched_at', 'text')
    /** Last time its content was loaded into the tables. */
    .addColumn('loaded_at', 'text')
    .addColumn('records', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rows', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('skipped', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_error', 'text')
    .addColumn('last_attempt_at', 'text')
    .execute();

  await db.schema
    .createTable('package_findings')
    .addColumn('package_id', 'text', (c) => c.notNull().references('packages.id').onDelete('cascade'))
    .addColumn('cve_id', 'text', (c) => c.notNull())
    .addColumn('severity', 'text', (c) => c.notNull())
    .addColumn('severity_rank', 'integer', (c) => c.notNull())
    .addColumn('cvss_score', 'real')
    .addColumn('epss', 'real')
    .addColumn('in_kev', 'integer')
    .addColumn('fix_state', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('package_findings_pk', ['package_id', 'cve_id'])
    .execute();
  await db.schema.createIndex('package_findings_cve').on('package_findings').column('cve_id').execute();
  await db.schema.createIndex('package_findings_severity').on('package_findings').columns(['severity', 'package_id']).execute();

  await db.schema
    .createTable('security_decisions')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('arch', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('justification', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('target_version', 'text')
    .addColumn('cve_ids', 'text', (c) => c.notNull())
    /** CVEs the decision covers (its cve_ids, else the findings it was taken on): rescan uses it. */
    .addColumn('covered_cve_ids', 'text', (c) => c.notNull())
    .addColumn('decided_by', 'text')
    .addColumn('decided_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('security_decisions_pk', ['name', 'version', 'arch'])
    .execute();

  // Last run of each scheduled job: lets one replica claim a daily slot and a restart skip a run done.
  await db.schema
    .createTable('job_runs')
    .addColumn('job', 'text', (c) => c.primaryKey())
    .addColumn('last_run_at', 'text')
    .addColumn('last_result', 'text')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['job_runs', 'security_decisions', 'package_findings', 'vuln_feed_state', 'vuln_kev', 'vuln_epss', 'vuln_advisories']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
