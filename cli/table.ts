/** Aligned plain-text tables, the way the Kafka tools print them: a header row, columns two spaces apart. */

export type Cell = string | number | boolean | null | undefined;

export interface Column<Row> {
  header: string;
  value: (row: Row) => Cell;
  /** Default: right for a column of numbers, left otherwise. */
  align?: 'left' | 'right';
}

const GAP = '  ';
/** Shown for a missing value (null, undefined). */
export const EMPTY_CELL = '-';

/** The table as lines joined by `\n` (no trailing newline); trailing spaces are trimmed. */
export const renderTable = <Row>(columns: readonly Column<Row>[], rows: readonly Row[]): string => {
  const raw = rows.map((row) => columns.map((c) => c.value(row)));
  const cells = raw.map((values) => values.map(cellText));
  const aligns = columns.map((column, i) => column.align ?? (isNumericColumn(raw, i) ? 'right' : 'left'));
  const widths = columns.map((column, i) =>
    Math.max(displayWidth(column.header), ...cells.map((r) => displayWidth(r[i] ?? ''))),
  );
  const line = (texts: readonly string[]): string =>
    texts
      .map((text, i) => pad(text, widths[i] ?? 0, aligns[i] ?? 'left'))
      .join(GAP)
      .trimEnd();
  return [line(columns.map((c) => c.header)), ...cells.map((r) => line(r))].join('\n');
};

/** `Name: value` pairs on one line, for a header above a table (kafka-topics --describe style). */
export const renderFields = (fields: readonly (readonly [string, Cell])[]): string =>
  fields.map(([name, value]) => `${name}: ${cellText(value)}`).join(GAP);

export const cellText = (value: Cell): string =>
  value === null || value === undefined ? EMPTY_CELL : escapeControls(String(value));

const isNumericColumn = (rows: readonly Cell[][], i: number): boolean => {
  const values = rows.map((r) => r[i]).filter((v) => v !== null && v !== undefined);
  return values.length > 0 && values.every((v) => typeof v === 'number');
};

const pad = (text: string, width: number, align: 'left' | 'right'): string => {
  const fill = ' '.repeat(Math.max(0, width - displayWidth(text)));
  return align === 'right' ? fill + text : text + fill;
};

// A cell must stay on its line: control characters are shown as escapes.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/g;
const escapeControls = (text: string): string => text.replace(CONTROL, (c) => JSON.stringify(c).slice(1, -1));

const COMBINING = /\p{M}/u;
const WIDE =
  /[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{1f300}-\u{1f64f}\u{1f900}-\u{1f9ff}\u{20000}-\u{3fffd}]/u;

/** Columns a string takes in a terminal: combining marks take none, East Asian wide characters two. */
export const displayWidth = (text: string): number => {
  let width = 0;
  for (const ch of text) width += COMBINING.test(ch) ? 0 : WIDE.test(ch) ? 2 : 1;
  return width;
};
