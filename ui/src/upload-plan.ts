/**
 * A set of files dropped or chosen together, grouped into the uploads the service takes: each
 * .deb and .rpm alone; a source package as its .changes (or .dsc) with the files it names sent as
 * `files` parts (src/http/routes/upload.ts). The grouping reads the names a .changes or .dsc lists,
 * so a tarball is attached to the package that names it, not guessed from its file name.
 */
export interface PlannedUpload<F> {
  main: F;
  files: F[];
}

export interface UploadPlan<F> {
  uploads: Array<PlannedUpload<F>>;
  /** Files no .dsc or .changes names that are not packages themselves: not sent. */
  unclaimed: F[];
  /** Files a .dsc or .changes names that are not in the set: the service will refuse that upload. */
  missing: string[];
}

const BINARY = /\.(deb|udeb|ddeb|rpm)$/i;
const SOURCE_FIELDS = /^(Files|Checksums-Sha1|Checksums-Sha256):\s*$/i;

/** The file names a .dsc's or .changes' Files and Checksums-* fields list (the last word of each line). */
export function filesNamedIn(text: string): string[] {
  const names = new Set<string>();
  let inList = false;
  for (const line of text.split(/\r?\n/)) {
    if (SOURCE_FIELDS.test(line)) { inList = true; continue; }
    if (inList && /^[ \t]+\S/.test(line)) {
      const name = line.trim().split(/\s+/).at(-1)!;
      if (!name.includes('/')) names.add(name);
      continue;
    }
    inList = false;
  }
  return [...names];
}

/** Groups named files; `lists` gives the names each .changes/.dsc names (by its file name). */
export function groupUploads<F extends { name: string }>(files: readonly F[], lists: ReadonlyMap<string, readonly string[]>): UploadPlan<F> {
  const byName = new Map(files.map((f) => [f.name, f]));
  const claimed = new Set<string>();
  const uploads: Array<PlannedUpload<F>> = [];
  const missing: string[] = [];
  const claim = (main: F) => {
    claimed.add(main.name);
    const attached: F[] = [];
    for (const name of lists.get(main.name) ?? []) {
      const file = byName.get(name);
      if (!file) missing.push(name);
      else if (!claimed.has(name)) {
        claimed.add(name);
        attached.push(file);
      }
    }
    uploads.push({ main, files: attached });
  };
  // A .changes first: the .dsc it names goes with it rather than becoming an upload of its own.
  for (const f of files) if (/\.changes$/i.test(f.name)) claim(f);
  for (const f of files) if (/\.dsc$/i.test(f.name) && !claimed.has(f.name)) claim(f);
  for (const f of files) {
    if (BINARY.test(f.name) && !claimed.has(f.name)) {
      claimed.add(f.name);
      uploads.push({ main: f, files: [] });
    }
  }
  return { uploads, unclaimed: files.filter((f) => !claimed.has(f.name)), missing };
}

/** Reads the .changes and .dsc files of a browser file set and groups it. */
export async function planUploads(files: readonly File[]): Promise<UploadPlan<File>> {
  const lists = new Map<string, string[]>();
  for (const f of files) {
    // A .dsc or .changes is a few kB; anything larger under that name is not one.
    if (/\.(dsc|changes)$/i.test(f.name) && f.size < 1_000_000) lists.set(f.name, filesNamedIn(await f.text()));
  }
  return groupUploads(files, lists);
}
