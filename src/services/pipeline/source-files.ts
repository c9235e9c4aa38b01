/**
 * A source upload's files checked against the control file that names them: every file the
 * .dsc (or .changes) lists must have been sent, with the size and checksums it states. A
 * .changes upload is turned into its .dsc upload here, so the later steps (provenance's `sha256`
 * field included) see the .dsc as the package file.
 */
import { readLocalText } from '../../adapters/storage/local-file.js';
import { isChangesText, parseChanges, type NamedSourceFile } from '../../domain/deb/dsc.js';
import { PackageFormatError } from '../../domain/errors.js';
import type { DebInspected } from '../../domain/package.js';
import type { SourceUploadFile, UploadState } from '../../domain/pipeline/types.js';

/** Why an upload's files do not match what a control file names: the 422 code and message. */
export interface SourceFileProblem {
  code: 'source_file_missing' | 'source_checksum_mismatch' | 'bad_source_control' | 'changes_with_binaries';
  message: string;
}

/** Matches the files named against those received (by the name each was sent under). */
export function checkNamedFiles(named: readonly NamedSourceFile[], received: readonly SourceUploadFile[], what: string): SourceFileProblem | null {
  const byName = new Map(received.map((f) => [f.name, f]));
  const missing = named.filter((f) => !byName.has(f.name)).map((f) => f.name);
  if (missing.length) return { code: 'source_file_missing', message: `the ${what} names ${missing.join(', ')}, not sent (send each as a \`files\` part under its name)` };
  for (const f of named) {
    const got = byName.get(f.name)!.facts;
    const wrong = got.size !== f.size ? `size ${got.size}, the ${what} says ${f.size}`
      : got.sha256 !== f.sha256 ? `SHA-256 ${got.sha256}, the ${what} says ${f.sha256}`
        : f.sha1 && got.sha1 !== f.sha1 ? `SHA-1 ${got.sha1}, the ${what} says ${f.sha1}`
          : f.md5 && got.md5 !== f.md5 ? `MD5 ${got.md5}, the ${what} says ${f.md5}`
            : null;
    if (wrong) return { code: 'source_checksum_mismatch', message: `${f.name} does not match the ${what}: ${wrong}` };
  }
  return null;
}

/**
 * When the package file is a .changes: checks the files it names and makes its .dsc the package
 * file (`state.path`, `state.file`). Returns a problem, or null (also when it is not a .changes).
 */
export async function resolveChanges(state: UploadState): Promise<SourceFileProblem | null> {
  const text = await readLocalText(state.path, 1024 * 1024).catch(() => null);
  if (text === null || !isChangesText(text)) return null;
  let named: NamedSourceFile[];
  try {
    named = parseChanges(text).files;
  } catch (error) {
    if (error instanceof PackageFormatError) return { code: 'bad_source_control', message: error.message };
    throw error;
  }
  const binaries = named.filter((f) => /\.(u|d)?deb$/.test(f.name));
  if (binaries.length) return { code: 'changes_with_binaries', message: `the .changes names binary packages (${binaries.map((f) => f.name).join(', ')}): upload each .deb on its own` };
  // The build record is not part of the source package: checked when sent, not required.
  const received = state.sourceFiles ?? [];
  const required = named.filter((f) => !f.name.endsWith('.buildinfo') || received.some((r) => r.name === f.name));
  const problem = checkNamedFiles(required, received, '.changes');
  if (problem) return problem;
  const dscs = named.filter((f) => f.name.endsWith('.dsc'));
  if (dscs.length !== 1) return { code: 'bad_source_control', message: `the .changes must name one .dsc (it names ${dscs.length})` };
  const dsc = received.find((f) => f.name === dscs[0]!.name)!;
  state.path = dsc.path;
  state.file = dsc.facts;
  state.sourceFiles = received.filter((f) => f !== dsc);
  return null;
}

/** Checks the files a .dsc names against the upload's and records their facts in the package's metadata. */
export function attachSourceFiles(state: UploadState, pkg: DebInspected): SourceFileProblem | null {
  const source = pkg.metadata.source!;
  const received = state.sourceFiles ?? [];
  const named: NamedSourceFile[] = source.files.map((f) => ({ name: f.name, size: f.size, md5: f.md5 || null, sha1: f.sha1 || null, sha256: f.sha256 }));
  const problem = checkNamedFiles(named, received, '.dsc');
  if (problem) return problem;
  const byName = new Map(received.map((f) => [f.name, f]));
  source.files = source.files.map((f) => ({ name: f.name, ...byName.get(f.name)!.facts }));
  return null;
}
