import { distributionPublishState, highestIndexedSeq } from '../../src/adapters/db/distributions.table.js';
import type { Db } from '../../src/adapters/db/index.js';

/** The fingerprint of a distribution's index as the publisher reads it: the triggers' totals and the highest `seq`. */
export async function indexFingerprint(db: Db, codename: string): Promise<{ count: number; sum: number; max: number; mod: number }> {
  const { count, sum, mod } = await distributionPublishState(db, codename);
  return { count, sum, max: await highestIndexedSeq(db, codename), mod };
}
