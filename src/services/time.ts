/** ISO 8601 with an explicit UTC offset, as every timestamp the API returns (DECISIONS §1). */
export function isoUtc(date: Date = new Date()): string {
  return date.toISOString().replace('Z', '+00:00');
}

/** Normalises a stored ISO timestamp to the `+00:00` form; null stays null. */
export function toApiTime(value: string | null | undefined): string | null {
  if (!value) return null;
  return isoUtc(new Date(value));
}
