import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** Every file below `dir` (absolute paths); a missing folder has none. */
export async function listFilesRecursive(dir: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await listFilesRecursive(path)));
    else if (e.isFile()) out.push(path);
  }
  return out;
}
