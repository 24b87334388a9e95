/** Plain-text tables for the bench output. */

/** Renders rows under a header, columns padded to their widest cell (first column left-aligned). */
export function renderTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((cell, column) =>
    Math.max(cell.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  const rule = widths.map((width) => '-'.repeat(width)).join('  ');
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** `met` / `MISSED` / `n/a` for a target check. */
export function verdict(met: boolean | null): string {
  if (met === null) return 'n/a';
  return met ? 'met' : 'MISSED';
}
