/**
 * One catalog generation packed in memory for the dependency resolver's look-ups, as apt keeps
 * its binary cache of the Packages indexes beside them: the packages' text in one buffer outside
 * the JavaScript heap, and an index from every name a package answers to (its own, what it
 * provides) to the packages answering it. Answering a name costs a map look-up; a package's
 * fields are decoded only when the resolver first reads it.
 *
 * Built from the rows the catalog tables hold (a generation never changes once committed), so it
 * answers exactly what the database would.
 */
import type { CatalogEntry } from './catalog.js';

/** A catalog package as the catalog tables keep it: numbered in its generation, relations as JSON text. */
export type CatalogRecord = Omit<CatalogEntry, 'format' | 'relations'> & { seq: number; format: string; relations: string };

/** The text fields of a record, in the order they are packed. */
const TEXT_FIELDS = ['format', 'name', 'version', 'arch', 'location', 'sha256', 'summary', 'relations'] as const;
/** Offsets kept per record: where each field starts, and where the last one ends. */
const OFFSETS = TEXT_FIELDS.length + 1;
const NONE = -1;
/** No flags (the database's null) among providerFlags. */
const NO_FLAGS = -1;

/** The parts of a packed catalog: see the fields of PackedCatalog. */
interface PackedParts {
  blocks: Buffer[];
  blockOf: Uint32Array;
  starts: Uint32Array;
  sizes: Float64Array;
  nameIds: Map<string, number>;
  firstPackage: Int32Array;
  firstProvider: Int32Array;
  nextOfName: Int32Array;
  providerSeq: Int32Array;
  providerNext: Int32Array;
  providerVersion: Array<string | null>;
  providerFlags: Int32Array;
}

export class PackedCatalog {
  /** The packages' text, a record never split between two blocks. */
  private readonly blocks: Buffer[];
  /** The block holding record r. */
  private readonly blockOf: Uint32Array;
  /** Record r's field f spans blocks[blockOf[r]][starts[r*OFFSETS+f] .. starts[r*OFFSETS+f+1]). */
  private readonly starts: Uint32Array;
  private readonly sizes: Float64Array;
  /** Every name answered, numbered; by that number, the first package of the name and the first provider of it. */
  private readonly nameIds: Map<string, number>;
  private readonly firstPackage: Int32Array;
  private readonly firstProvider: Int32Array;
  /** By seq, the next package of the same name. */
  private readonly nextOfName: Int32Array;
  /** The provides, each the next one's of the same name: which package, and at what version and flags. */
  private readonly providerSeq: Int32Array;
  private readonly providerNext: Int32Array;
  private readonly providerVersion: Array<string | null>;
  private readonly providerFlags: Int32Array;
  /** Approximate memory held, buffers and index together. */
  readonly bytes: number;

  /** @internal built by PackedCatalogBuilder */
  constructor(parts: PackedParts, bytes: number) {
    ({
      blocks: this.blocks, blockOf: this.blockOf, starts: this.starts, sizes: this.sizes, nameIds: this.nameIds,
      firstPackage: this.firstPackage, firstProvider: this.firstProvider, nextOfName: this.nextOfName,
      providerSeq: this.providerSeq, providerNext: this.providerNext, providerVersion: this.providerVersion, providerFlags: this.providerFlags,
    } = parts);
    this.bytes = bytes;
  }

  get packages(): number {
    return this.sizes.length;
  }

  /**
   * Calls `byName` for each package named `name` and `provider` for each package providing it,
   * both in catalog order (the order the database's look-up answers them in).
   */
  visit(name: string, byName: (seq: number) => void, provider: (seq: number, version: string | null, flags: number | null) => void): void {
    const id = this.nameIds.get(name);
    if (id === undefined) return;
    for (let seq = this.firstPackage[id]!; seq !== NONE; seq = this.nextOfName[seq]!) byName(seq);
    for (let p = this.firstProvider[id]!; p !== NONE; p = this.providerNext[p]!) {
      const flags = this.providerFlags[p]!;
      provider(this.providerSeq[p]!, this.providerVersion[p]!, flags === NO_FLAGS ? null : flags);
    }
  }

  record(seq: number): CatalogRecord {
    const at = seq * OFFSETS;
    const block = this.blocks[this.blockOf[seq]!]!;
    const field = (f: number) => block.toString('utf8', this.starts[at + f], this.starts[at + f + 1]);
    return {
      seq, format: field(0), name: field(1), version: field(2), arch: field(3), location: field(4),
      size: this.sizes[seq]!, sha256: field(5), summary: field(6), relations: field(7),
    };
  }
}

/**
 * Packs a generation fed package by package in seq order (0, 1, 2…, as a sync numbers them),
 * each package's provides rows after it or all of them at the end, in any order. `bytes` tells
 * the caller what it would hold, so a build over its memory budget can stop early.
 */
export class PackedCatalogBuilder {
  private readonly blocks: Buffer[] = [];
  private block: Buffer = Buffer.alloc(0);
  /** Bytes used of the current block, and of the blocks before it. */
  private used = 0;
  private usedBefore = 0;
  private readonly blockOf = new NumberList(Uint32Array);
  private readonly starts = new NumberList(Uint32Array);
  private readonly sizes = new NumberList(Float64Array);
  private readonly nameIds = new Map<string, number>();
  private readonly firstPackage = new NumberList(Int32Array);
  private readonly lastPackage = new NumberList(Int32Array);
  private readonly firstProvider = new NumberList(Int32Array);
  private readonly lastProvider = new NumberList(Int32Array);
  private readonly nextOfName = new NumberList(Int32Array);
  private readonly providerSeq = new NumberList(Int32Array);
  private readonly providerNext = new NumberList(Int32Array);
  private readonly providerVersion: Array<string | null> = [];
  private readonly providerFlags = new NumberList(Int32Array);

  get packages(): number {
    return this.sizes.length;
  }

  /** What the finished catalog would hold: its text, its offsets and links, ~60 bytes a name and 8 a provided version. */
  get bytes(): number {
    return this.usedBefore + this.block.length + this.starts.length * 4 + this.packages * 16 + this.providerSeq.length * 20 + this.nameIds.size * 68;
  }

  addPackage(record: CatalogRecord): void {
    const r = record;
    this.add(r.seq, r.format, r.name, r.version, r.arch, r.location, Number(r.size), r.sha256, r.summary, r.relations);
  }

  /** addPackage with the record's fields as arguments (a sync packs what it writes without an object per package). */
  add(seq: number, format: string, name: string, version: string, arch: string, location: string, size: number, sha256: string, summary: string, relations: string): void {
    if (seq !== this.packages) throw new Error(`catalog package ${seq} out of order (expected ${this.packages})`);
    this.reserve(
      Buffer.byteLength(format) + Buffer.byteLength(name) + Buffer.byteLength(version) + Buffer.byteLength(arch) + Buffer.byteLength(location)
      + Buffer.byteLength(sha256) + Buffer.byteLength(summary) + Buffer.byteLength(relations),
    );
    this.blockOf.push(this.blocks.length - 1);
    this.starts.push(this.used);
    // In TEXT_FIELDS order.
    this.field(format);
    const nameStart = this.used;
    this.field(name);
    const nameEnd = this.used;
    this.field(version);
    this.field(arch);
    this.field(location);
    this.field(sha256);
    this.field(summary);
    this.field(relations);
    this.sizes.push(size);
    this.nextOfName.push(NONE);
    const id = this.nameIdOf(name, nameStart, nameEnd);
    const last = this.lastPackage.at(id);
    if (last === NONE) this.firstPackage.set(id, seq);
    else this.nextOfName.set(last, seq);
    this.lastPackage.set(id, seq);
  }

  /** One name package `seq` answers to besides its own (a Provides, or an RPM file path). */
  addProvided(seq: number, name: string, version: string | null, flags: number | null): void {
    if (seq < 0 || seq >= this.packages) throw new Error(`provides row of unknown catalog package ${seq}`);
    const index = this.providerSeq.length;
    this.providerSeq.push(seq);
    this.providerNext.push(NONE);
    this.providerVersion.push(version === null ? null : detached(version));
    this.providerFlags.push(flags ?? NO_FLAGS);
    const id = this.nameIdOf(name);
    const last = this.lastProvider.at(id);
    if (last === NONE) {
      this.firstProvider.set(id, index);
      this.lastProvider.set(id, index);
    } else if (this.providerSeq.at(last) <= seq) {
      this.providerNext.set(last, index);
      this.lastProvider.set(id, index);
    } else {
      // Providers of a name stay in catalog order whatever order their rows came in.
      this.insertProvider(id, index, seq);
    }
  }

  finish(): PackedCatalog {
    const bytes = this.bytes;
    return new PackedCatalog({
      blocks: this.blocks, blockOf: this.blockOf.done(), starts: this.starts.done(), sizes: this.sizes.done(), nameIds: this.nameIds,
      firstPackage: this.firstPackage.done(), firstProvider: this.firstProvider.done(), nextOfName: this.nextOfName.done(),
      providerSeq: this.providerSeq.done(), providerNext: this.providerNext.done(), providerVersion: this.providerVersion,
      providerFlags: this.providerFlags.done(),
    }, bytes);
  }

  private field(value: string): void {
    this.used += this.block.write(value, this.used, 'utf8');
    this.starts.push(this.used);
  }

  /** The number of `name`, given one if new; `start`, `end`: where its bytes are in the current block, if they are. */
  private nameIdOf(name: string, start?: number, end?: number): number {
    let id = this.nameIds.get(name);
    if (id === undefined) {
      id = this.nameIds.size;
      this.nameIds.set(start === undefined ? detached(name) : this.block.toString('utf8', start, end), id);
      this.firstPackage.push(NONE);
      this.lastPackage.push(NONE);
      this.firstProvider.push(NONE);
      this.lastProvider.push(NONE);
    }
    return id;
  }

  private insertProvider(id: number, index: number, seq: number): void {
    const first = this.firstProvider.at(id);
    if (this.providerSeq.at(first) > seq) {
      this.providerNext.set(index, first);
      this.firstProvider.set(id, index);
      return;
    }
    let before = first;
    while (this.providerNext.at(before) !== NONE && this.providerSeq.at(this.providerNext.at(before)) <= seq) before = this.providerNext.at(before);
    this.providerNext.set(index, this.providerNext.at(before));
    this.providerNext.set(before, index);
  }

  /** Makes room for a record of `bytes` in the current block, or starts a new one. */
  private reserve(bytes: number): void {
    if (this.used + bytes <= this.block.length) return;
    this.usedBefore += this.used;
    // Each block is its own allocation: growing one buffer meant copying it, and a moment holding both.
    this.block = Buffer.allocUnsafeSlow(Math.max(BLOCK_BYTES, bytes));
    this.blocks.push(this.block);
    this.used = 0;
  }
}

const BLOCK_BYTES = 1 << 20;

/**
 * A copy of `text` sharing no memory with a larger string. A sync's names and versions are cut
 * out of the index text it parses; kept as they are, the index held them would keep each
 * chunk of that text alive (the whole Packages file: ~100 MiB more resident after a sync).
 */
const detached = (text: string): string => Buffer.from(text, 'utf8').toString('utf8');

type NumberArray = Int32Array | Uint32Array | Float64Array;

/** A typed array that grows as values are pushed: no JavaScript array of numbers on the heap while packing. */
class NumberList<A extends NumberArray> {
  private values: A;
  length = 0;

  constructor(private readonly kind: { new (length: number): A }) {
    this.values = new kind(1024);
  }

  push(value: number): void {
    if (this.length === this.values.length) {
      const grown = new this.kind(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.length++] = value;
  }

  at(index: number): number {
    return this.values[index]!;
  }

  set(index: number, value: number): void {
    this.values[index] = value;
  }

  /** The values, trimmed to their length (a copy: the spare room is freed with the list). */
  done(): A {
    return this.values.slice(0, this.length) as A;
  }
}
