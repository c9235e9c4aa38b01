import { errorOf, requestHeaders } from './api';
import { sseParser, type StreamEvent } from './sse';

/**
 * POSTs and reads the answer as Server-Sent Events (EventSource cannot POST): each event to
 * `onEvent` as it arrives; resolves with the last `result` or `error` event's data.
 */
export async function streamPost<T>(path: string, body: FormData | object | undefined, onEvent: (event: StreamEvent) => void): Promise<T> {
  const headers = requestHeaders('POST', { accept: 'text/event-stream' });
  let payload: BodyInit | undefined;
  if (body instanceof FormData) payload = body;
  else if (body !== undefined) {
    payload = JSON.stringify(body);
    headers['content-type'] = 'application/json';
  }
  const response = await fetch(path, { method: 'POST', credentials: 'same-origin', headers, body: payload });
  if (!response.ok || !response.body) throw await errorOf(response);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  const parse = sseParser();
  let last: T | null = null;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    for (const event of parse(value)) {
      if (event.event === 'result' || event.event === 'error') last = event.data as T;
      else onEvent(event);
    }
  }
  if (last === null) throw new Error('The stream ended without a result');
  return last;
}
