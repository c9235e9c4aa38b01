/**
 * Dependency closure over upstream catalogs, the same walk for both formats: every hard
 * requirement of every selected package is satisfied by (1) a package already selected, else
 * (2) what the target distribution already publishes, else (3) the best catalog candidate of
 * the first alternative that has one (highest version; real packages before providers of a
 * virtual name). Selected names are never selected twice, so cycles end by themselves. Each
 * selected package records the requirement that pulled it in.
 */
import type { CatalogEntry } from './catalog.js';

/** A catalog package, with where it came from. */
export interface CatalogPackage extends CatalogEntry {
  sourceId: string;
}

export interface Requirement<A> {
  /** As written upstream, e.g. `libfoo (>= 2) | libbar`. */
  text: string;
  alternatives: A[];
}

/** What the walk needs to know about one format; lookups may query the database. */
export interface ResolverFormat<A> {
  /** Hard requirements (Depends + Pre-Depends; Requires). Throws when they cannot be read. */
  requirements(pkg: CatalogPackage): Requirement<A>[];
  satisfiedBy(alt: A, pkg: CatalogPackage): boolean;
  /** The package or virtual name an alternative asks for. */
  nameOf(alt: A): string;
  /** Every name a package answers to: its own, its provides (and, RPM, its files). */
  namesOf(pkg: CatalogPackage): string[];
  /** Loads what the next level of the walk will look up, in a few queries instead of one per name. */
  prefetch?(names: string[]): Promise<void>;
  /** Catalog packages satisfying `alt`, best first. */
  candidates(alt: A): Promise<CatalogPackage[]>;
  /** Whether the target distribution already publishes something satisfying `alt`. */
  presentInTarget(alt: A): Promise<boolean>;
}

export interface Selected {
  pkg: CatalogPackage;
  /** null for the requested package. */
  requiredBy: string | null;
  relation: string | null;
  depth: number;
}

export interface Unsatisfiable {
  requiredBy: string;
  relation: string;
  reason: string;
}

export interface Closure {
  selected: Selected[];
  /** Requirements the target distribution already satisfies. */
  present: Array<{ requiredBy: string; relation: string }>;
  unsatisfiable: Unsatisfiable[];
}

/** Bounds the walk on hostile or enormous catalogs. */
const MAX_SELECTED = 20_000;

export async function resolveClosure<A>(root: CatalogPackage, format: ResolverFormat<A>): Promise<Closure> {
  const chosen = new Map<string, Selected>();
  const present: Closure['present'] = [];
  const unsatisfiable: Unsatisfiable[] = [];
  const rootSelection: Selected = { pkg: root, requiredBy: null, relation: null, depth: 0 };
  chosen.set(root.name, rootSelection);
  // Selected packages by every name they answer to, so "already selected?" is a map look-up.
  const answering = new Map<string, CatalogPackage[]>();
  const select = (pkg: CatalogPackage) => {
    for (const name of format.namesOf(pkg)) answering.set(name, [...(answering.get(name) ?? []), pkg]);
  };
  select(root);
  const queue: Selected[] = [rootSelection];
  let prefetchedUpTo = 0;
  for (let at = 0; at < queue.length; at += 1) {
    // Breadth first: when a level starts, the whole level is queued; load its look-ups at once.
    if (at >= prefetchedUpTo && format.prefetch) {
      await format.prefetch(queue.slice(at).flatMap((s) => requirementNames(s.pkg, root, format)));
      prefetchedUpTo = queue.length;
    }
    const current = queue[at]!;
    let requirements: Requirement<A>[];
    try {
      requirements = current.pkg.format === root.format ? format.requirements(current.pkg) : [];
    } catch (error) {
      unsatisfiable.push({ requiredBy: current.pkg.name, relation: '(unreadable)', reason: error instanceof Error ? error.message : String(error) });
      continue;
    }
    for (const requirement of requirements) {
      if (requirement.alternatives.some((alt) => (answering.get(format.nameOf(alt)) ?? []).some((pkg) => format.satisfiedBy(alt, pkg)))) continue;
      if (await anyAsync(requirement.alternatives, (alt) => format.presentInTarget(alt))) {
        present.push({ requiredBy: current.pkg.name, relation: requirement.text });
        continue;
      }
      let picked: CatalogPackage | null = null;
      for (const alt of requirement.alternatives) {
        // Another version of a name already selected cannot be installed beside it.
        const usable = (await format.candidates(alt)).filter((c) => !chosen.has(c.name));
        picked = usable.find((c) => meetsSiblings(c, requirement, requirements, format)) ?? usable[0] ?? null;
        if (picked) break;
      }
      if (!picked) {
        unsatisfiable.push({ requiredBy: current.pkg.name, relation: requirement.text, reason: 'nothing in the catalogs or the target distribution satisfies it' });
        continue;
      }
      if (chosen.size >= MAX_SELECTED) {
        unsatisfiable.push({ requiredBy: current.pkg.name, relation: requirement.text, reason: `closure larger than ${MAX_SELECTED} packages` });
        return { selected: [...chosen.values()], present, unsatisfiable };
      }
      const selection: Selected = { pkg: picked, requiredBy: current.pkg.name, relation: requirement.text, depth: current.depth + 1 };
      chosen.set(picked.name, selection);
      select(picked);
      queue.push(selection);
    }
  }
  return { selected: [...chosen.values()], present, unsatisfiable };
}

/**
 * Whether `candidate` also meets the package's other one-alternative requirements on its name,
 * so `foo (>= 2), foo (<< 3)` selects the highest 2.x rather than 3.0.
 */
function meetsSiblings<A>(candidate: CatalogPackage, current: Requirement<A>, all: Requirement<A>[], format: ResolverFormat<A>): boolean {
  return all.every((other) => {
    if (other === current || other.alternatives.length !== 1) return true;
    const alt = other.alternatives[0]!;
    return format.nameOf(alt) !== candidate.name || format.satisfiedBy(alt, candidate);
  });
}

function requirementNames<A>(pkg: CatalogPackage, root: CatalogPackage, format: ResolverFormat<A>): string[] {
  if (pkg.format !== root.format) return [];
  try {
    return format.requirements(pkg).flatMap((r) => r.alternatives.map((alt) => format.nameOf(alt)));
  } catch {
    return [];
  }
}

async function anyAsync<T>(items: T[], test: (item: T) => Promise<boolean>): Promise<boolean> {
  for (const item of items) if (await test(item)) return true;
  return false;
}
