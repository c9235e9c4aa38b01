/**
 * The audit trail's query side: pages of the database index of its entries, newest first. The
 * day files stay the source of truth (adapters/audit/audit-log.ts: appends and verification).
 */
import { findAuditEntries, type AuditFilter, type AuditIndexEntry } from '../adapters/db/audit.table.js';
import type { Db } from '../adapters/db/index.js';

export type { AuditFilter, AuditIndexEntry };

export class AuditQueries {
  constructor(private readonly db: Db) {}

  /** The entries matching `filter` on page `page` of `perPage`, and how many match in all. */
  page(filter: AuditFilter, page: number, perPage: number): Promise<{ items: AuditIndexEntry[]; total: number }> {
    return findAuditEntries(this.db, filter, { page, perPage });
  }
}
