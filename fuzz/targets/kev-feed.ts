/** CISA KEV catalogues (plain or gzipped JSON): readKevCatalog; rows are unique valid CVE ids. */
import { DomainError } from '../../src/domain/errors.js';
import { readKevCatalog } from '../../src/domain/security/feeds/kev.js';
import { asyncTarget, expectOnly, invariant, scratchFile } from '../lib/harness.js';

const file = scratchFile('kev.json');

export const fuzz = asyncTarget(async (data) => {
  file.write(data);
  try {
    const catalog = await readKevCatalog(file.path, 16 * 1024 * 1024);
    const ids = new Set(catalog.rows.map((row) => row.cve_id));
    invariant(ids.size === catalog.rows.length, () => 'the same CVE twice');
  } catch (error) {
    expectOnly(error, DomainError);
  }
});
