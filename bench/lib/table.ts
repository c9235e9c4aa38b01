/** Plain-text and markdown tables for benchmark output. */

/** Rows of cells (first row: header) as an aligned plain-text table. */
export function textTable(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows
    .map((r, i) => {
      const line = r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ');
      return i === 0 ? `${line}\n${widths.map((w) => '-'.repeat(w)).join('  ')}` : line;
    })
    .join('\n');
}

/** Rows of cells (first row: header) as a GitHub markdown table. */
export function markdownTable(rows: readonly (readonly string[])[]): string {
  const line = (r: readonly string[]) => `| ${r.join(' | ')} |`;
  const align = rows[0]!.map((_, c) => (c === 0 ? '---' : '---:'));
  return [line(rows[0]!), line(align), ...rows.slice(1).map(line)].join('\n');
}
