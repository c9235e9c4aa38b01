/**
 * Writes a DocumentPlan as JSON text, piece by piece: the head's keys, then each section's array
 * filled from one pass over the packages (`batches()` is called once per section, so a
 * distribution is read again for each array instead of being held). A section with no items is
 * left out, as both formats prefer to an empty array.
 */
import type { DocumentPlan, SbomPackage } from './model.js';

/**
 * Text is yielded in pieces of about this size. A piece per batch (hundreds of packages, megabytes)
 * is allocated in V8's large-object space, which only a full collection frees: a 50,000-package
 * export then left a few hundred MiB of dead pieces resident between collections. Pieces below
 * V8's regular-object limit die young in the nursery instead.
 */
const PIECE = 32 * 1024;

export async function* documentText(plan: DocumentPlan, batches: () => AsyncIterable<readonly SbomPackage[]>): AsyncGenerator<string> {
  const head = JSON.stringify(plan.head);
  yield head.slice(0, -1);
  let empty = head === '{}';
  for (const section of plan.sections) {
    let opened = false;
    let pending: string[] = [];
    let pendingLength = 0;
    const open = () => {
      if (opened) return '';
      opened = true;
      const prefix = `${empty ? '' : ','}${JSON.stringify(section.key)}:[`;
      empty = false;
      return prefix;
    };
    let first = true;
    const add = (item: unknown) => {
      const text = `${open()}${first ? '' : ','}${JSON.stringify(item)}`;
      pending.push(text);
      pendingLength += text.length;
      first = false;
    };
    for (const item of plan.leading?.[section.key] ?? []) add(item);
    for await (const batch of batches()) {
      for (const pkg of batch) {
        for (const item of section.items(pkg)) add(item);
        if (pendingLength >= PIECE) {
          yield pending.join('');
          pending = [];
          pendingLength = 0;
        }
      }
    }
    if (pending.length) yield pending.join('');
    if (opened) yield ']';
  }
  yield '}';
}
