import { describe, expect, it } from 'vitest';
import { sseParser } from './sse';

const STREAM = 'event: step\ndata: {"step":"format","state":"started"}\n\nevent: step\ndata: {"step":"format","state":"finished","status":"passed"}\n\n: comment\n\nevent: result\ndata: {"http_status":201,"status":"published"}\n\n';

describe('the upload stream parser', () => {
  it('reads every event whatever the chunking, even a chunk ending inside a line', () => {
    for (const size of [1, 3, 7, 40, STREAM.length]) {
      const parse = sseParser();
      const events = [];
      for (let i = 0; i < STREAM.length; i += size) events.push(...parse(STREAM.slice(i, i + size)));
      expect(events, `chunks of ${size}`).toEqual([
        { event: 'step', data: { step: 'format', state: 'started' } },
        { event: 'step', data: { step: 'format', state: 'finished', status: 'passed' } },
        { event: 'result', data: { http_status: 201, status: 'published' } },
      ]);
    }
  });

  it('accepts CRLF line ends and keeps a non-JSON payload as text', () => {
    expect(sseParser()('data: hello\r\n\r\n')).toEqual([{ event: 'message', data: 'hello' }]);
  });
});
