import { errorOf, requestHeaders } from './api';
import { sseParser } from './sse';

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

/** Sends the file to /upload/stream and reports each pipeline step as the service runs it. */
export async function streamUpload(file: File, distribution: string, onStep: (step: string, state: StepState) => void): Promise<UploadResult> {
  const form = new FormData();
  form.set('distribution', distribution);
  form.set('file', file);
  const response = await fetch('/upload/stream', { method: 'POST', credentials: 'same-origin', headers: requestHeaders('POST'), body: form });
  if (!response.ok || !response.body) throw await errorOf(response);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  const parse = sseParser();
  let result: UploadResult | null = null;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    for (const { event, data } of parse(value)) {
      if (event === 'step') {
        const d = data as { step: string; state: 'started' | 'finished'; status?: string; message?: string };
        onStep(d.step, { state: d.state, status: d.status, message: d.message });
      } else if (event === 'result' || event === 'error') {
        result = data as UploadResult;
      }
    }
  }
  if (!result) throw new Error('The upload stream ended without a result');
  return result;
}
