/** One Server-Sent Event as /upload/stream writes them: `event: <name>` and one `data:` JSON line. */
export interface StreamEvent {
  event: string;
  data: unknown;
}

/**
 * Splits a text stream into events. Fed chunk by chunk (a chunk may end anywhere, even inside a
 * line); returns the events completed so far and keeps the rest for the next chunk.
 */
export function sseParser(): (chunk: string) => StreamEvent[] {
  let buffer = '';
  return (chunk) => {
    buffer += chunk.replace(/\r\n?/g, '\n');
    const events: StreamEvent[] = [];
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
      }
      if (data.length === 0) continue;
      const text = data.join('\n');
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // keep the text
      }
      events.push({ event, data: parsed });
    }
    return events;
  };
}
