/**
 * The NCSA combined log format, as nginx (`log_format combined`) and Apache (`%h %l %u %t \"%r\"
 * %>s %b \"%{Referer}i\" \"%{User-agent}i\"`) write it:
 *
 *   203.0.113.7 - alice [25/Nov/2026:10:00:00 +0100] "GET /repo/apt/pool/... HTTP/1.1" 200 1234 "-" "Debian APT-HTTP/1.3 (2.6.1)"
 *
 * Pure parsing, no I/O. The common log format (no referer and user agent) and trailing fields
 * added by custom formats are accepted. Inside quoted fields, Apache escapes `"` as `\"`, nginx
 * as `\x22`; both, and `\\`, are undone.
 */

export interface AccessLogEntry {
  remote: string;
  user: string | null;
  time: Date;
  /** Null when the request line is not `METHOD TARGET PROTOCOL` (garbage sent to the server). */
  method: string | null;
  target: string | null;
  protocol: string | null;
  request: string;
  status: number;
  bytes: number | null;
  referer: string | null;
  userAgent: string | null;
}

const MONTHS: Readonly<Record<string, number>> = {
  Jan: 0, Feb: 1, Mar: 2, Apr: 3, May: 4, Jun: 5, Jul: 6, Aug: 7, Sep: 8, Oct: 9, Nov: 10, Dec: 11,
};
const TIME = /^(\d{2})\/([A-Z][a-z]{2})\/(\d{4}):(\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2})$/;

/** `10/Oct/2000:13:55:36 -0700` → the instant; null when malformed. */
export function parseLogTime(text: string): Date | null {
  const m = TIME.exec(text);
  if (!m) return null;
  const month = MONTHS[m[2]!];
  if (month === undefined) return null;
  const [day, year, hour, minute, second] = [m[1], m[3], m[4], m[5], m[6]].map(Number) as [number, number, number, number, number];
  if (day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return null;
  const offsetMinutes = (m[7] === '-' ? -1 : 1) * (Number(m[8]) * 60 + Number(m[9]));
  return new Date(Date.UTC(year, month, day, hour, minute, second) - offsetMinutes * 60_000);
}

/** Reads the quoted field starting at `at` (which must be `"`); returns its unescaped text and the index after the closing quote. */
function quoted(line: string, at: number): { value: string; end: number } | null {
  if (line[at] !== '"') return null;
  let value = '';
  for (let i = at + 1; i < line.length; i++) {
    const c = line[i]!;
    if (c === '"') return { value, end: i + 1 };
    if (c !== '\\') {
      value += c;
      continue;
    }
    const next = line[i + 1];
    if (next === '"' || next === '\\') {
      value += next;
      i++;
    } else if (next === 'x' && /^[0-9a-fA-F]{2}$/.test(line.slice(i + 2, i + 4))) {
      value += String.fromCharCode(parseInt(line.slice(i + 2, i + 4), 16));
      i += 3;
    } else {
      value += c;
    }
  }
  return null;
}

/** The next space-separated token from `at`; null at the end of the line. */
function token(line: string, at: number): { value: string; end: number } | null {
  if (at >= line.length) return null;
  const space = line.indexOf(' ', at);
  const end = space === -1 ? line.length : space;
  return end > at ? { value: line.slice(at, end), end } : null;
}

const dash = (value: string): string | null => (value === '-' || value === '' ? null : value);

/** One log line → its fields, or null when the line is not in the combined or common format. */
export function parseCombinedLine(raw: string): AccessLogEntry | null {
  const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
  const remote = token(line, 0);
  const ident = remote && token(line, remote.end + 1);
  const user = ident && token(line, ident.end + 1);
  if (!user || line[user.end + 1] !== '[') return null;
  const close = line.indexOf(']', user.end + 2);
  if (close === -1) return null;
  const time = parseLogTime(line.slice(user.end + 2, close));
  if (!time || line[close + 1] !== ' ') return null;
  const request = quoted(line, close + 2);
  if (!request || line[request.end] !== ' ') return null;
  const status = token(line, request.end + 1);
  if (!status || !/^\d{3}$/.test(status.value)) return null;
  const bytes = token(line, status.end + 1);
  if (!bytes || !/^(\d+|-)$/.test(bytes.value)) return null;
  let referer: string | null = null;
  let userAgent: string | null = null;
  if (bytes.end < line.length) {
    const ref = line[bytes.end] === ' ' ? quoted(line, bytes.end + 1) : null;
    const agent = ref && line[ref.end] === ' ' ? quoted(line, ref.end + 1) : null;
    if (!ref || !agent) return null;
    referer = dash(ref.value);
    userAgent = dash(agent.value);
  }
  const parts = request.value.split(' ');
  const wellFormed = parts.length === 3 && /^[A-Z]+$/.test(parts[0]!) && parts[1] !== '' && /^HTTP\/\d(\.\d)?$/.test(parts[2]!);
  return {
    remote: remote!.value,
    user: dash(user.value),
    time,
    method: wellFormed ? parts[0]! : null,
    target: wellFormed ? parts[1]! : null,
    protocol: wellFormed ? parts[2]! : null,
    request: request.value,
    status: Number(status.value),
    bytes: bytes.value === '-' ? null : Number(bytes.value),
    referer,
    userAgent,
  };
}
