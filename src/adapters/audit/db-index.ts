import { insertAuditIndexEntries, maxAuditIndexSeq } from '../db/audit.table.js';
import type { Db } from '../db/index.js';
import type { AuditEntry, AuditIndex } from './audit-log.js';

/** Mirrors audit entries into the `audit_index` table so the query endpoints can filter and page. */
export function databaseAuditIndex(db: Db): AuditIndex {
  return {
    async insert(entries: readonly AuditEntry[]) {
      await insertAuditIndexEntries(db, entries.map((e) => ({
        seq: e.seq, timestamp: e.timestamp, action: e.action, username: e.user, result: e.result,
        package: e.package, version: e.version, detail: e.detail, ip: e.ip, hash: e.hash,
      })));
    },
    maxSeq: () => maxAuditIndexSeq(db),
  };
}
