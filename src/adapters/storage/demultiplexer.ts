/**
 * Splits one stream of batches into several, read in step: each batch of the source is read
 * once, and its items are handed to the streams they are routed to (an item may go to several,
 * as an `Architecture: all` package goes to every architecture's index). A stream may run at most
 * one batch ahead of the slowest, so the source is never buffered beyond two batches, however
 * large it is.
 */
export class Demultiplexer<T, U> {
  private readonly source: AsyncIterator<readonly T[]>;
  private readonly rounds = new Map<number, Promise<Map<string, U[]> | null>>();
  /** The next round each stream will ask for; Infinity once it stopped reading. */
  private readonly positions: Map<string, number>;
  private waiting: Array<() => void> = [];

  constructor(
    source: AsyncIterable<readonly T[]>,
    keys: readonly string[],
    private readonly route: (item: T) => readonly string[],
    private readonly map: (item: T, key: string) => U,
  ) {
    this.source = source[Symbol.asyncIterator]();
    this.positions = new Map(keys.map((k) => [k, 0]));
  }

  /** The items routed to `key`, batch by batch (a batch may be empty). Each key is read once. */
  stream(key: string): AsyncIterable<U[]> {
    if (!this.positions.has(key)) throw new Error(`unknown stream ${key}`);
    return { [Symbol.asyncIterator]: () => this.iterate(key) };
  }

  private async *iterate(key: string): AsyncGenerator<U[]> {
    try {
      for (let round = 0; ; round++) {
        while (round > this.slowest() + 1) await new Promise<void>((resolve) => this.waiting.push(resolve));
        const batch = await this.round(round);
        this.advance(key, round + 1);
        if (!batch) return;
        yield batch.get(key) ?? [];
      }
    } finally {
      // A stream that stops (done, or its reader failed) must not hold the others back.
      this.advance(key, Infinity);
    }
  }

  /** The reader of `key` is gone (it may never have started, its writer having failed first). */
  close(key: string): void {
    this.advance(key, Infinity);
  }

  private slowest(): number {
    let min = Infinity;
    for (const p of this.positions.values()) min = Math.min(min, p);
    return min;
  }

  /** Rounds are asked for in order, so the source is read in order. */
  private round(n: number): Promise<Map<string, U[]> | null> {
    let round = this.rounds.get(n);
    if (!round) {
      round = this.source.next().then((r) => (r.done ? null : this.split(r.value)));
      this.rounds.set(n, round);
    }
    return round;
  }

  private split(items: readonly T[]): Map<string, U[]> {
    const out = new Map<string, U[]>();
    for (const item of items) {
      const keys = this.route(item);
      if (keys.length === 0) continue;
      for (const key of keys) {
        let list = out.get(key);
        if (!list) out.set(key, (list = []));
        list.push(this.map(item, key));
      }
    }
    return out;
  }

  private advance(key: string, position: number): void {
    this.positions.set(key, position);
    const slowest = this.slowest();
    for (const n of this.rounds.keys()) if (n < slowest) this.rounds.delete(n);
    const waiting = this.waiting;
    this.waiting = [];
    for (const wake of waiting) wake();
  }
}
