/**
 * Writes a DocumentPlan as JSON text, piece by piece, from ONE pass over the packages: the head's
 * keys, then the first section's array batch by batch, while the text of every later section is
 * set aside in a spool (compressed by the service) and written after it. A distribution is read
 * once instead of once per array, and never held. A section with no items is left out, as both
 * formats prefer to an empty array.
 */
import type { DocumentPlan, DocumentSection, SbomPackage } from './model.js';

/**
 * Text is yielded in pieces of about this size. A piece per batch (hundreds of packages, megabytes)
 * is allocated in V8's large-object space, which only a full collection frees: a 50,000-package
 * export then left a few hundred MiB of dead pieces resident between collections. Pieces below
 * V8's regular-object limit die young in the nursery instead.
 */
const PIECE = 32 * 1024;

/** Where a later section's text waits, piece by piece, until the sections before it are written. */
export interface TextSpool {
  write(piece: string): void;
  /** The pieces written, in order, as text or UTF-8 bytes (called once, after the last write). */
  read(): Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>;
}

/** Pieces kept as they are (small documents, tests); the service passes a compressing spool. */
export function memorySpool(): TextSpool {
  const pieces: string[] = [];
  return {
    write: (piece) => void pieces.push(piece),
    *read() {
      for (let i = 0; i < pieces.length; i++) {
        yield pieces[i]!;
        pieces[i] = '';
      }
    },
  };
}

/** One section's items as comma-separated JSON text, cut into pieces of about PIECE characters. */
class SectionText {
  count = 0;
  private pending: string[] = [];
  private length = 0;

  constructor(readonly section: DocumentSection) {}

  add(item: unknown): void {
    const text = JSON.stringify(item);
    this.pending.push(this.count === 0 ? text : `,${text}`);
    this.length += text.length + 1;
    this.count++;
  }

  /** The text gathered, once there is a piece's worth of it (or whatever there is, when `all`). */
  take(all = false): string | null {
    if (this.pending.length === 0 || (!all && this.length < PIECE)) return null;
    const text = this.pending.join('');
    this.pending = [];
    this.length = 0;
    return text;
  }
}

export async function* documentText(
  plan: DocumentPlan,
  batches: () => AsyncIterable<readonly SbomPackage[]>,
  spool: () => TextSpool = memorySpool,
): AsyncGenerator<string | Uint8Array> {
  const head = JSON.stringify(plan.head);
  yield head.slice(0, -1);
  let empty = head === '{}';
  const prefix = (section: DocumentSection) => {
    const text = `${empty ? '' : ','}${JSON.stringify(section.key)}:[`;
    empty = false;
    return text;
  };
  const [first, ...rest] = plan.sections.map((section) => new SectionText(section));
  if (!first) {
    yield '}';
    return;
  }
  const later = rest.map((text) => ({ text, spool: spool() }));
  for (const s of [first, ...rest]) for (const item of plan.leading?.[s.section.key] ?? []) s.add(item);

  let opened = false;
  const open = () => {
    if (opened || first.count === 0) return '';
    opened = true;
    return prefix(first.section);
  };
  // A batch is turned into text before its pieces are yielded: the packages are not held while the
  // reader takes the text.
  const textOf = (batch: readonly SbomPackage[]): string[] => {
    const pieces: string[] = [];
    for (const pkg of batch) {
      for (const item of first.section.items(pkg)) first.add(item);
      for (const { text } of later) for (const item of text.section.items(pkg)) text.add(item);
      const piece = first.take();
      if (piece !== null) pieces.push(open() + piece);
      for (const { text, spool } of later) {
        const spooled = text.take();
        if (spooled !== null) spool.write(spooled);
      }
    }
    return pieces;
  };
  for await (const batch of batches()) {
    const pieces = textOf(batch);
    for (let i = 0; i < pieces.length; i++) {
      yield pieces[i]!;
      pieces[i] = '';
    }
  }
  const last = first.take(true);
  if (last !== null) yield open() + last;
  if (opened) yield ']';

  for (const { text, spool } of later) {
    const tail = text.take(true);
    if (tail !== null) spool.write(tail);
    if (text.count === 0) continue;
    yield prefix(text.section);
    for await (const piece of spool.read()) yield piece;
    yield ']';
  }
  yield '}';
}
