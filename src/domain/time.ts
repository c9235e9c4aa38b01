/** ISO 8601 with an explicit UTC offset, as every timestamp the API returns (`…+00:00`), to the millisecond. */
export function isoUtc(date: Date = new Date()): string {
  return date.toISOString().replace('Z', '+00:00');
}

/** The same to the second (`2026-11-21T10:00:00+00:00`): decision expiries and deadlines people read. */
export function isoUtcSeconds(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, '+00:00');
}

/** Normalises a stored ISO timestamp to the `+00:00` form; null stays null. */
export function toApiTime(value: string | null | undefined): string | null {
  if (!value) return null;
  return isoUtc(new Date(value));
}
