/**
 * Streams piped one into the next, settled once the last one has finished: what
 * `stream.pipeline` does for a chain that ends in a writer, without the AbortController that
 * `pipeline` makes for every chain and aborts when it ends. That abort builds an AbortError (a
 * DOMException with its stack) each time: ~2 % of the event loop in a burst of tiny uploads, where
 * every upload reads its control.tar through such a chain (docs/benchmarks-journal.md, twelfth
 * session).
 *
 * Node streams and streamx ones (tar-stream) alike: only `pipe`, `destroy` and their events are used.
 */

/** A chain's streams: Node's, or streamx ones, which are typed as Node's. */
type ChainReader = NodeJS.ReadableStream & { destroy(error?: Error): unknown };
type ChainSink = NodeJS.WritableStream & { destroy(error?: Error): unknown };

/** The error a link that closed before its end is reported with (as `pipeline` says it). */
export class PrematureCloseError extends Error {
  readonly code = 'ERR_STREAM_PREMATURE_CLOSE';
  constructor() {
    super('Premature close');
  }
}

/**
 * Pipes `links[0]` into `links[1]` and so on; resolves once the last one has emitted `finish`.
 * The first error of any link (or a link closed before its end) destroys every link with it and
 * rejects: nothing is left reading or writing.
 */
export function chainStreams(...links: [ChainReader, ...ChainReader[], ChainSink]): Promise<void> {
  const last = links[links.length - 1]!;
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      const reason = error instanceof Error ? error : new Error(String(error));
      for (const link of links) link.destroy(reason);
      reject(reason);
    };
    // Every link closes once the chain is done: the error (and its stack) only when it is not.
    const closedEarly = () => {
      if (!settled) fail(new PrematureCloseError());
    };
    links.forEach((link, i) => {
      link.on('error', fail);
      if (link === last) {
        link.on('finish', () => {
          if (settled) return;
          settled = true;
          resolve();
        });
        link.on('close', closedEarly);
        return;
      }
      // A reader is done once it has ended; closed before that, what it held never arrived.
      let ended = false;
      link.on('end', () => { ended = true; });
      link.on('close', () => { if (!ended) closedEarly(); });
      (link as ChainReader).pipe(links[i + 1] as ChainSink);
    });
  });
}
