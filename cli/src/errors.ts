import { EXIT, type ExitCode } from './exit-codes.js';

/** A failure the user can act on: its message is printed as is, and the command exits with `exitCode`. */
export class CliError extends Error {
  constructor(message: string, readonly exitCode: ExitCode = EXIT.error) {
    super(message);
  }
}

export class UsageError extends CliError {}

/** An answer >= 400 from the service, with its `{detail, code}` body. */
export class ApiError extends CliError {
  constructor(readonly status: number, readonly code: string, readonly detail: string, readonly body: unknown) {
    super(ApiError.describe(status, code, detail));
  }

  private static describe(status: number, code: string, detail: string): string {
    if (status === 401) return `not authenticated (${detail}): run "tollgate login" or set TOLLGATE_TOKEN`;
    if (status === 403) return `permission denied: ${detail}`;
    return `${detail} (HTTP ${status}, ${code})`;
  }
}
