/**
 * Dependency closure over upstream catalogs, the same walk for both formats: every hard
 * requirement of every selected package is satisfied by (1) a package already selected, else
 * (2) what the target distribution already publishes, else (3) the best catalog candidate of
 * the first alternative that has one (highest version; real packages before providers of a
 * virtual name). Selected names are never selected twice, so cycles end by themselves. Each
 * selected package records the requirement that pulled it in. Conditional (RPM `if`/`unless`)
 * requirements are decided once everything unconditional is selected.
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
  /** RPM `(A if B else C)` / `(A unless B else C)`: required only as its condition decides. */
  conditional?: Conditional<A>;
}

/**
 * A requirement that depends on what else gets installed. It is decided once the unconditional
 * closure is complete (libsolv, too, decides conditionals against the rest of the transaction):
 * `when` holds if every one of its requirements is met by a selected package or the target
 * distribution; then `then` is required, else `otherwise` (`negate` turns `if` into `unless`).
 */
export interface Conditional<A> {
  when: Requirement<A>[];
  negate: boolean;
  then: Requirement<A>[];
  otherwise: Requirement<A>[];
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
  /** The same without a promise when the look-ups are already loaded, else undefined. */
  candidatesNow?(alt: A): CatalogPackage[] | undefined;
  /** Whether the target distribution already publishes something satisfying `alt`. */
  presentInTarget(alt: A): Promise<boolean>;
  /** The same without a promise when the look-up is already loaded, else undefined. */
  presentInTargetNow?(alt: A): boolean | undefined;
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
  // Each selected package's requirements are read once: the prefetch of its level and the walk share them.
  const parsed = new Map<CatalogPackage, Requirement<A>[] | { error: unknown }>();
  const requirementsOf = (pkg: CatalogPackage): Requirement<A>[] => {
    let known = parsed.get(pkg);
    if (known === undefined) {
      try {
        known = pkg.format === root.format ? format.requirements(pkg) : [];
      } catch (error) {
        known = { error };
      }
      parsed.set(pkg, known);
    }
    if (!Array.isArray(known)) throw known.error;
    return known;
  };
  const present: Closure['present'] = [];
  const unsatisfiable: Unsatisfiable[] = [];
  const rootSelection: Selected = { pkg: root, requiredBy: null, relation: null, depth: 0 };
  chosen.set(root.name, rootSelection);
  // Selected packages by every name they answer to, so "already selected?" is a map look-up.
  const answering = new Map<string, CatalogPackage[]>();
  const select = (pkg: CatalogPackage) => {
    for (const name of format.namesOf(pkg)) {
      const answered = answering.get(name);
      if (answered) answered.push(pkg);
      else answering.set(name, [pkg]);
    }
  };
  select(root);
  const queue: Selected[] = [rootSelection];
  const deferred: Array<{ current: Selected; requirement: Requirement<A>; siblings: Requirement<A>[] }> = [];
  const selectedSatisfies = (alt: A): boolean => {
    const answered = answering.get(format.nameOf(alt));
    if (answered) for (let i = 0; i < answered.length; i++) if (format.satisfiedBy(alt, answered[i]!)) return true;
    return false;
  };
  // Loaded look-ups answer at once; a promise only when the name was not loaded yet.
  const presentInTarget = (alt: A): boolean | Promise<boolean> => format.presentInTargetNow?.(alt) ?? format.presentInTarget(alt);
  const met = async (requirement: Requirement<A>) =>
    requirement.alternatives.some(selectedSatisfies) || (await anyAsync(requirement.alternatives, presentInTarget));

  /** Meets one requirement of `current`; false once the closure is too large to go on. */
  const satisfy = async (current: Selected, requirement: Requirement<A>, siblings: Requirement<A>[]): Promise<boolean> => {
    if (requirement.conditional) {
      deferred.push({ current, requirement, siblings });
      return true;
    }
    if (requirement.alternatives.some(selectedSatisfies)) return true;
    for (const alt of requirement.alternatives) {
      const answer = presentInTarget(alt);
      if (answer === true || (answer !== false && (await answer))) {
        present.push({ requiredBy: current.pkg.name, relation: requirement.text });
        return true;
      }
    }
    let picked: CatalogPackage | null = null;
    for (const alt of requirement.alternatives) {
      // Another version of a name already selected cannot be installed beside it.
      const usable = (format.candidatesNow?.(alt) ?? (await format.candidates(alt))).filter((c) => !chosen.has(c.name));
      // A single candidate is picked whether or not it meets the siblings: no need to index them.
      picked = (usable.length > 1 ? usable.find((c) => meetsSiblings(c, requirement, siblings, format)) : undefined) ?? usable[0] ?? null;
      if (picked) break;
    }
    if (!picked) {
      unsatisfiable.push({ requiredBy: current.pkg.name, relation: requirement.text, reason: 'nothing in the catalogs or the target distribution satisfies it' });
      return true;
    }
    if (chosen.size >= MAX_SELECTED) {
      unsatisfiable.push({ requiredBy: current.pkg.name, relation: requirement.text, reason: `closure larger than ${MAX_SELECTED} packages` });
      return false;
    }
    const selection: Selected = { pkg: picked, requiredBy: current.pkg.name, relation: requirement.text, depth: current.depth + 1 };
    chosen.set(picked.name, selection);
    select(picked);
    queue.push(selection);
    return true;
  };

  let at = 0;
  let prefetchedUpTo = 0;
  while (at < queue.length || deferred.length > 0) {
    if (at >= queue.length) {
      // The unconditional closure is complete: decide the conditionals met so far, which may select more.
      for (const { current, requirement, siblings } of deferred.splice(0)) {
        const cond = requirement.conditional!;
        const holds = (await everyAsync(cond.when, met)) !== cond.negate;
        for (const branch of holds ? cond.then : cond.otherwise) {
          if (!(await satisfy(current, branch, siblings))) return { selected: [...chosen.values()], present, unsatisfiable };
        }
      }
      continue;
    }
    // Breadth first: when a level starts, the whole level is queued; load its look-ups at once.
    if (at >= prefetchedUpTo && format.prefetch) {
      const names: string[] = [];
      for (let i = at; i < queue.length; i++) requirementNames(queue[i]!.pkg, requirementsOf, format, names);
      await format.prefetch(names);
      prefetchedUpTo = queue.length;
    }
    const current = queue[at]!;
    at += 1;
    let requirements: Requirement<A>[];
    try {
      requirements = requirementsOf(current.pkg);
    } catch (error) {
      unsatisfiable.push({ requiredBy: current.pkg.name, relation: '(unreadable)', reason: error instanceof Error ? error.message : String(error) });
      continue;
    }
    for (let i = 0; i < requirements.length; i++) {
      const requirement = requirements[i]!;
      // Most requirements are met by a package already selected: that is decided here, without a promise.
      if (!requirement.conditional && requirement.alternatives.some(selectedSatisfies)) continue;
      if (!(await satisfy(current, requirement, requirements))) return { selected: [...chosen.values()], present, unsatisfiable };
    }
  }
  return { selected: [...chosen.values()], present, unsatisfiable };
}

/**
 * Whether `candidate` also meets the package's other one-alternative requirements on its name,
 * so `foo (>= 2), foo (<< 3)` selects the highest 2.x rather than 3.0.
 */
function meetsSiblings<A>(candidate: CatalogPackage, current: Requirement<A>, all: Requirement<A>[], format: ResolverFormat<A>): boolean {
  const others = singleAlternativesByName(all, format).get(candidate.name);
  if (others === undefined) return true;
  for (let i = 0; i < others.length; i++) {
    const other = others[i]!;
    if (other !== current && !format.satisfiedBy(other.alternatives[0]!, candidate)) return false;
  }
  return true;
}

/**
 * A package's one-alternative requirements by the name they ask for, made once per requirement
 * list: a metapackage's siblings were otherwise walked again for every candidate of each of its
 * hundreds of requirements (kde-full: ~49,000 checks for one resolution).
 */
const singleAlternatives = new WeakMap<Requirement<unknown>[], Map<string, Requirement<unknown>[]>>();

function singleAlternativesByName<A>(all: Requirement<A>[], format: ResolverFormat<A>): Map<string, Requirement<A>[]> {
  let byName = singleAlternatives.get(all) as Map<string, Requirement<A>[]> | undefined;
  if (byName === undefined) {
    byName = new Map();
    for (let i = 0; i < all.length; i++) {
      const requirement = all[i]!;
      if (requirement.alternatives.length !== 1) continue;
      const name = format.nameOf(requirement.alternatives[0]!);
      const list = byName.get(name);
      if (list) list.push(requirement);
      else byName.set(name, [requirement]);
    }
    singleAlternatives.set(all, byName as Map<string, Requirement<unknown>[]>);
  }
  return byName;
}

/** Appends to `names` every name the package's requirements ask for (none when they cannot be read). */
function requirementNames<A>(pkg: CatalogPackage, requirementsOf: (pkg: CatalogPackage) => Requirement<A>[], format: ResolverFormat<A>, names: string[]): void {
  let requirements: Requirement<A>[];
  try {
    requirements = requirementsOf(pkg);
  } catch {
    return;
  }
  for (let i = 0; i < requirements.length; i++) {
    const alternatives = requirements[i]!.alternatives;
    for (let j = 0; j < alternatives.length; j++) names.push(format.nameOf(alternatives[j]!));
  }
}

/** Whether any item passes `test`, in order, stopping at the first (a test answering at once costs no promise). */
async function anyAsync<T>(items: T[], test: (item: T) => boolean | Promise<boolean>): Promise<boolean> {
  for (const item of items) {
    const passed = test(item);
    if (passed === true || (passed !== false && (await passed))) return true;
  }
  return false;
}

async function everyAsync<T>(items: T[], test: (item: T) => Promise<boolean>): Promise<boolean> {
  for (const item of items) if (!(await test(item))) return false;
  return true;
}
