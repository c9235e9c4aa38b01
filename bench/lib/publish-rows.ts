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
 * each extra row is inserted as admission inserts it; the milliseconds of each.
 */
export async function timePublishes(ctx: AppContext, codename: string, insertPackage: InsertPackage, extras: readonly PackageRow[]): Promise<{ full: number[]; add: number[] }> {
  const full: number[] = [];
  for (let k = 0; k < 2; k++) {
    ctx.repo.publisher.forget(codename);
    full.push(await time(() => ctx.repo.publisher.request(codename)));
  }
  const add: number[] = [];
  for (const extra of extras) {
    add.push(await time(async () => {
      await ctx.db.transaction().execute((trx) => insertPackage(trx, extra, []));
      await ctx.repo.publisher.request(codename);
    }));
  }
  await ctx.repo.publisher.idle();
  return { full, add };
}
