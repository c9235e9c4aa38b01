/**
 * Errors are values with a stable snake_case code. Domain code throws or returns these;
 * the HTTP layer maps them to a status in one place (src/http/errors.ts).
 */
export type DomainErrorKind =
  | 'invalid' // the input is malformed or breaks a rule: 400/422, an upload becomes `rejected`
  | 'not_found'
  | 'conflict'
  | 'forbidden'
  | 'unavailable' // a dependency (clamd, database) does not answer: 503
  | 'too_large';

export class DomainError extends Error {
  constructor(
    readonly kind: DomainErrorKind,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

/**
 * A decoder failed, not the input it was given (an external one that could not start or was
 * killed): the bytes may be fine, so nothing is judged on them; the caller answers 503 or tries
 * again later.
 */
export class DecoderFailure extends DomainError {
  constructor(message: string) {
    super('unavailable', 'decoder_failed', message);
    this.name = 'DecoderFailure';
  }
}

/** A package file that cannot be accepted: the upload answers `rejected` with this reason. */
export class PackageFormatError extends DomainError {
  constructor(code: string, message: string) {
    super('invalid', code, message);
    this.name = 'PackageFormatError';
  }
}
