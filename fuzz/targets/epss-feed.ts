/** EPSS CSV files (plain or gzipped): readEpssCsv to the end; every row kept is a CVE with two probabilities. */
import { DomainError } from '../../src/domain/errors.js';
import { newEpssStats, readEpssCsv } from '../../src/domain/security/feeds/epss.js';
import { asyncTarget, expectOnly, invariant, scratchFile } from '../lib/harness.js';

const file = scratchFile('epss.csv');

export const fuzz = asyncTarget(async (data) => {
  file.write(data);
  try {
    for await (const row of readEpssCsv(file.path, { maxBytes: 16 * 1024 * 1024 }, newEpssStats())) {
      invariant(/^CVE-\d{4}-\d{4,}$/.test(row.cve) && row.epss >= 0 && row.epss <= 1 && row.percentile >= 0 && row.percentile <= 1, () => `kept ${JSON.stringify(row)}`);
    }
  } catch (error) {
    expectOnly(error, DomainError);
  }
});
