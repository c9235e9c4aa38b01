/** OSV feed files (zip of records, JSON array, single record; plain or gzipped): readOsvFeed to the end. */
import { DomainError } from '../../src/domain/errors.js';
import { newOsvFeedStats, readOsvFeed } from '../../src/domain/security/feeds/osv-feed.js';
import { asyncTarget, expectOnly, invariant, scratchFile } from '../lib/harness.js';

const file = scratchFile('feed');
const LIMITS = { maxEntries: 10_000, maxEntryBytes: 1024 * 1024, maxTotalBytes: 16 * 1024 * 1024 };

export const fuzz = asyncTarget(async (data) => {
  file.write(data);
  const stats = newOsvFeedStats();
  try {
    let rows = 0;
    for await (const row of readOsvFeed(file.path, LIMITS, stats)) {
      rows += 1;
      invariant(typeof row === 'object' && row !== null, () => 'a row that is not an object');
    }
    invariant(rows === stats.rows, () => `${rows} rows read, ${stats.rows} counted`);
  } catch (error) {
    expectOnly(error, DomainError);
  }
});
