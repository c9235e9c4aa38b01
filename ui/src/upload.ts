import { streamPost } from './stream';

export const STEPS = ['format', 'provenance', 'antivirus', 'cve', 'signature', 'dependencies'] as const;

export interface StepState {
  state: 'waiting' | 'started' | 'finished';
  status?: string;
  message?: string;
}

export interface UploadResult {
  http_status: number;
  status: string;
  name?: string | null;
  version?: string | null;
  distribution?: string;
  detail?: string;
  code?: string;
  reasons?: string[];
}

/**
 * Sends the file (with a source package's other files as `files` parts) to /upload/stream and
 * reports each pipeline step as the service runs it.
 */
export function streamUpload(file: File, distribution: string, onStep: (step: string, state: StepState) => void, sourceFiles: readonly File[] = []): Promise<UploadResult> {
  const form = new FormData();
  form.set('distribution', distribution);
  form.set('file', file);
  for (const part of sourceFiles) form.append('files', part, part.name);
  return streamPost<UploadResult>('/upload/stream', form, ({ event, data }) => {
    if (event !== 'step') return;
    const d = data as { step: string; state: 'started' | 'finished'; status?: string; message?: string };
    onStep(d.step, { state: d.state, status: d.status, message: d.message });
  });
}
