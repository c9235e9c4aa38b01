/**
 * RPM dependencies: rich (boolean) dependency strings, EVR splitting and range overlap. Input
 * lines: a dependency, two EVRs, and two flag bytes. parseRichDependency answers null for what
 * it cannot read; it must never throw, and rangesOverlap must not depend on the argument order.
 */
import { formatDependency, rangesOverlap } from '../../src/domain/rpm/relations.js';
import { parseRichDependency, type RichDep } from '../../src/domain/rpm/rich.js';
import { SENSE_MASK } from '../../src/domain/rpm/tags.js';
import { formatEvr, parseEvr } from '../../src/domain/rpm/vercmp.js';
import { invariant, splitParts, syncTarget } from '../lib/harness.js';

function names(dep: RichDep, out: string[] = []): string[] {
  if (dep.op === 'simple') out.push(dep.name);
  else for (const arg of dep.args) names(arg, out);
  return out;
}

export const fuzz = syncTarget((data) => {
  const [depBytes = Buffer.alloc(0), evrA = Buffer.alloc(0), evrB = Buffer.alloc(0), flagBytes = Buffer.alloc(0)] = splitParts(data, 0x0a, 4);
  const dep = depBytes.toString('utf8');
  const parsed = parseRichDependency(dep);
  if (parsed !== null) {
    for (const name of names(parsed)) invariant(name !== '' && !/\s/.test(name), () => `rich dependency ${JSON.stringify(dep)} gave the name ${JSON.stringify(name)}`);
  }
  const a = evrA.toString('utf8');
  const b = evrB.toString('utf8');
  const split = parseEvr(a);
  const joined = formatEvr(split);
  invariant(JSON.stringify(parseEvr(joined)) === JSON.stringify(split) || split.release === '', () => `${JSON.stringify(a)} splits differently once formatted`);
  const fa = (flagBytes[0] ?? 0) & SENSE_MASK;
  const fb = (flagBytes[1] ?? 0) & SENSE_MASK;
  const forward = rangesOverlap({ flags: fa, evr: a }, { flags: fb, evr: b });
  const backward = rangesOverlap({ flags: fb, evr: b }, { flags: fa, evr: a });
  invariant(forward === backward, () => `overlap of ${formatDependency({ name: 'x', flags: fa, evr: a })} and ${formatDependency({ name: 'x', flags: fb, evr: b })} depends on the order`);
});
