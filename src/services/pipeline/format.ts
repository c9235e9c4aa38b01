import { acceptedArchitectures } from '../../domain/distributions.js';
import { PackageFormatError } from '../../domain/errors.js';
import { rejectUpload, type PipelineStep, type StepResult, type UploadState } from '../../domain/pipeline/types.js';
import { handlerFor, sniffFormat } from '../formats/index.js';
import type { PipelineDeps } from './deps.js';

const result = (status: StepResult['status'], message: string, value: string): StepResult => ({ name: 'format', status, message, value });

function reject(state: UploadState, code: string, message: string): StepResult {
  rejectUpload(state, code, message);
  return result('failed', message, 'invalid');
}

/** Step 1: the file is a well-formed package of the distribution's format and architecture. */
export const formatStep = (deps: Pick<PipelineDeps, 'files'>): PipelineStep => ({
  name: 'format',
  async run(state) {
    const format = sniffFormat(await deps.files.readHead(state.path, 16));
    if (!format) return reject(state, 'unknown_format', 'the file is neither a .deb (ar archive) nor an .rpm');
    if (format !== state.distribution.format) {
      return reject(state, 'wrong_format', `a .${format} package cannot go into ${state.distribution.codename} (a .${state.distribution.format} distribution)`);
    }
    try {
      state.pkg = await handlerFor(format).inspect(state.path);
    } catch (error) {
      if (error instanceof PackageFormatError) return reject(state, error.code, error.message);
      throw error;
    }
    const { arch } = state.pkg;
    const accepted = acceptedArchitectures(state.distribution);
    if (!accepted.includes(arch)) {
      return reject(state, 'wrong_architecture', `architecture ${arch} is not accepted in ${state.distribution.codename} (${accepted.join(', ')})`);
    }
    return result('passed', `${state.pkg.name} ${state.pkg.version} (${arch}) is a valid .${format}`, 'valid');
  },
});
