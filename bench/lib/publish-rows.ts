/**
 * What bench/lib/apt-publish-ours.ts and rpm-publish-ours.ts both do with the service's context:
 * store a corpus as published rows, and time its publisher's full and add-one publishes.
 */
import type { PackageRow } from '../../src/adapters/db/packages.table.js';
import type { AppContext } from '../../src/services/context.js';

type InsertPackage = typeof import('../../src/adapters/db/packages.table.js').insertPackage;

/** Inserts `rows` (in index order, `seq` set) a page at a time, the distribution's generation following. */
export async function loadRows(ctx: AppContext, codename: string, rows: AsyncIterable<PackageRow>): Promise<number> {
  let loaded = 0;
  let page: PackageRow[] = [];
  const flush = async () => {
    const values = page;
    page = [];
    await ctx.db.transaction().execute(async (trx) => {
      await trx.insertInto('packages').values(values).execute();
      await trx.updateTable('distributions').set({ generation: loaded }).where('codename', '=', codename).execute();
    });
  };
  for await (const row of rows) {
    page.push(row);
    loaded += 1;
    if (page.length === 500) await flush();
  }
  if (page.length > 0) await flush();
  return loaded;
}

const time = async (fn: () => Promise<unknown>) => {
  const start = performance.now();
  await fn();
  return performance.now() - start;
};

/**
 * Two full publishes (what the publisher remembers forgotten before each), then one publish after
 * each extra row is inserted as admission inserts it; the milliseconds of each. The last `atRest`
 * extras are added once the previous publish's background work (by-hash clean-up, spare copies)
 * is done, as an upload into a repository at rest; the others back to back.
 */
export async function timePublishes(ctx: AppContext, codename: string, insertPackage: InsertPackage, extras: readonly PackageRow[], atRest = 0): Promise<{ full: number[]; add: number[]; addAtRest: number[] }> {
  const full: number[] = [];
  for (let k = 0; k < 2; k++) {
    ctx.repo.publisher.forget(codename);
    full.push(await time(() => ctx.repo.publisher.request(codename)));
  }
  const add: number[] = [];
  const addAtRest: number[] = [];
  for (const [i, extra] of extras.entries()) {
    const rested = i >= extras.length - atRest;
    if (rested) await ctx.repo.publisher.idle();
    (rested ? addAtRest : add).push(await time(async () => {
      await ctx.db.transaction().execute((trx) => insertPackage(trx, extra, []));
      await ctx.repo.publisher.request(codename);
    }));
  }
  await ctx.repo.publisher.idle();
  return { full, add, addAtRest };
}
