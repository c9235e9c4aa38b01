import type { Command } from 'commander';
import { ApiClient } from './client.js';
import { resolveConnection, type GlobalOptions } from './config.js';
import { CliError } from './errors.js';
import type { ExitCode } from './exit-codes.js';
import { Output } from './output.js';

/** What every command's action receives: the global options, the output, and a lazily built client. */
export interface Runtime {
  options: GlobalOptions;
  out: Output;
  client(): Promise<ApiClient>;
}

/**
 * Adapts an action returning an exit code to commander: the global options are read, errors the
 * user can act on are printed as one line on stderr, anything else as its message with exit 1.
 */
export function runs<A extends unknown[]>(action: (rt: Runtime, ...args: A) => Promise<ExitCode>) {
  return async (...args: unknown[]): Promise<void> => {
    const command = args[args.length - 1] as Command;
    const options = command.optsWithGlobals() as GlobalOptions;
    const out = new Output(options.json === true);
    // The promise is kept, not the client: files uploaded side by side ask for it at once.
    let client: Promise<ApiClient> | null = null;
    const rt: Runtime = {
      options,
      out,
      client: () => (client ??= resolveConnection(options).then((connection) => new ApiClient(connection))),
    };
    try {
      process.exitCode = await action(rt, ...(args.slice(0, -1) as A));
    } catch (error) {
      out.error(error instanceof Error ? error.message : String(error));
      process.exitCode = error instanceof CliError ? error.exitCode : 1;
    }
  };
}

/** Path segments are user text: encode them (versions carry `+`, `~` and `:`). */
export const seg = (value: string) => encodeURIComponent(value);

export function positiveInteger(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new CliError(`not a positive integer: ${value}`);
  return n;
}
