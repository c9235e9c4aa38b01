import { acceptedArchitectures } from '../../domain/distributions.js';
import { knownPrefix } from '../../domain/known-bytes.js';
import { PackageFormatError } from '../../domain/errors.js';
import { rejectUpload, type PipelineStep, type StepResult, type UploadState } from '../../domain/pipeline/types.js';
import { handlerFor, sniffFormat } from '../formats/index.js';
import type { PipelineDeps } from './deps.js';
import { looksLikeSourceControl } from '../../domain/deb/dsc.js';
import { isSourcePackage } from '../formats/deb-source.js';
import { attachSourceFiles, resolveChanges } from './source-files.js';

const result = (status: StepResult['status'], message: string, value: string): StepResult => ({ name: 'format', status, message, value });

function reject(state: UploadState, code: string, message: string): StepResult {
  rejectUpload(state, code, message);
  return result('failed', message, 'invalid');
}

/** Step 1: the file is a well-formed package of the distribution's format and architecture. */
export const formatStep = (deps: Pick<PipelineDeps, 'files' | 'deferDebPayload'>): PipelineStep => ({
  name: 'format',
  async run(state) {
    const known = state.head ? { size: state.file.size, head: state.head } : undefined;
    const head = knownPrefix(known, 64) ?? await deps.files.readHead(state.path, 64);
    // A source package: a .dsc (or a .changes naming one) with its files, filed under the deb format.
    const isSource = !sniffFormat(head) && looksLikeSourceControl(head);
    const format = isSource ? 'deb' : sniffFormat(head);
    if (!format) return reject(state, 'unknown_format', 'the file is neither a .deb (ar archive), an .rpm, nor a source package\'s .dsc or .changes');
    if (format !== state.distribution.format) {
      return reject(state, 'wrong_format', `a .${format} package cannot go into ${state.distribution.codename} (a .${state.distribution.format} distribution)`);
    }
    if (isSource) {
      const problem = await resolveChanges(state);
      if (problem) return reject(state, problem.code, problem.message);
    }
    try {
      state.pkg = await handlerFor(format).inspect(state.path, { deferPayload: deps.deferDebPayload === true, ...(known ? { known } : {}) });
    } catch (error) {
      if (error instanceof PackageFormatError) return reject(state, error.code, error.message);
      throw error;
    }
    if (state.pkg.format === 'deb' && isSourcePackage(state.pkg)) {
      const problem = attachSourceFiles(state, state.pkg);
      if (problem) return reject(state, problem.code, problem.message);
      const count = state.pkg.metadata.source!.files.length;
      return result('passed', `${state.pkg.name} ${state.pkg.version} is a valid source package (.dsc and ${count} file(s) matching its checksums)`, 'valid');
    }
    const { arch } = state.pkg;
    const accepted = acceptedArchitectures(state.distribution);
    if (!accepted.includes(arch)) {
      return reject(state, 'wrong_architecture', `architecture ${arch} is not accepted in ${state.distribution.codename} (${accepted.join(', ')})`);
    }
    return result('passed', `${state.pkg.name} ${state.pkg.version} (${arch}) is a valid .${format}`, 'valid');
  },
});
