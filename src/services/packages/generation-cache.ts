/**
 * Values derived from the whole packages table (a listing's total, the review queue's order),
 * computed once per catalog generation (migration 0015) and kept in this process.
 *
 * Each look-up first reads the generation (one primary-key read), then computes on a miss: the
 * value therefore reflects at least every change up to the generation it is kept under, and a
 * change committed on any replica raises the generation, so the next look-up anywhere recomputes.
 * Concurrent misses for one key share one computation. A read that saw an older generation than
 * the one kept (it raced a newer reader) computes without keeping.
 */
import { readCatalogGeneration } from '../../adapters/db/catalog-generation.table.js';
import type { Db } from '../../adapters/db/index.js';

/**
 * Listing pages of more rows than this are not kept, only computed: the default page (100) and
 * smaller ones are what is read again and again, and a kept page of 1,000 search results would
 * hold a few MB (64 of them, a few hundred).
 */
const KEPT_PAGE_ROWS = 100;

export class GenerationCache {
  private generation = -1;
  /** Insertion order is use order: the first key is the least recently used. */
  private readonly entries = new Map<string, Promise<unknown>>();

  /** `limit` bounds the distinct keys kept (search texts are the caller's choice). */
  constructor(private readonly db: Db, private readonly limit = 500) {}

  async get<T>(key: string, compute: () => Promise<T>): Promise<T> {
    const generation = await readCatalogGeneration(this.db);
    if (generation < this.generation) return compute();
    if (generation > this.generation) {
      this.entries.clear();
      this.generation = generation;
    }
    const kept = this.entries.get(key);
    if (kept) {
      this.entries.delete(key);
      this.entries.set(key, kept);
      return kept as Promise<T>;
    }
    const value = compute();
    this.entries.set(key, value);
    // A failed computation is not kept: the next look-up tries again.
    value.catch(() => {
      if (this.entries.get(key) === value) this.entries.delete(key);
    });
    if (this.entries.size > this.limit) this.entries.delete(this.entries.keys().next().value!);
    return value;
  }

  /** One page of the listing `key`: kept as `get` keeps it when it has at most KEPT_PAGE_ROWS rows, else computed each time. */
  page<T>(key: string, paging: { page: number; perPage: number }, compute: () => Promise<T>): Promise<T> {
    return paging.perPage <= KEPT_PAGE_ROWS ? this.get(`${key}:${paging.page}:${paging.perPage}`, compute) : compute();
  }
}
