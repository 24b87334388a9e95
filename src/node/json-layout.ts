/**
 * Lays out a JSON text as `JSON.stringify(value, null, 2)` (`?pretty`) or `JSON.stringify(value)`
 * (one line: change feed results) would, but works on the text itself, so every number and
 * string keeps its literal (a `_source` integer beyond 2^53 is not rounded, `\u00e9` stays
 * escaped). The text must be valid JSON.
 */

const INDENT = '  ';

/** The text laid out with two-space indentation, each token unchanged. */
export function indentJson(text: string): string {
  return layout(text, true);
}

/** The text without whitespace between tokens (on one line), each token unchanged. */
export function compactJson(text: string): string {
  return layout(text, false);
}

function layout(text: string, indented: boolean): string {
  const newline = indented ? '\n' : '';
  const indent = indented ? INDENT : '';
  const out: string[] = [];
  let depth = 0;
  let index = 0;
  const length = text.length;
  while (index < length) {
    const char = text[index]!;
    if (char === ' ' || char === '\n' || char === '\r' || char === '\t') {
      index++;
      continue;
    }
    if (char === '"') {
      const end = stringEnd(text, index);
      out.push(text.slice(index, end));
      index = end;
      continue;
    }
    if (char === '{' || char === '[') {
      const next = skipSpace(text, index + 1);
      const close = char === '{' ? '}' : ']';
      if (text[next] === close) {
        out.push(char, close);
        index = next + 1;
        continue;
      }
      depth++;
      out.push(char, newline, indent.repeat(depth));
      index++;
      continue;
    }
    if (char === '}' || char === ']') {
      depth--;
      out.push(newline, indent.repeat(depth), char);
      index++;
      continue;
    }
    if (char === ',') {
      out.push(',', newline, indent.repeat(depth));
      index++;
      continue;
    }
    if (char === ':') {
      out.push(indented ? ': ' : ':');
      index++;
      continue;
    }
    const end = tokenEnd(text, index);
    out.push(text.slice(index, end));
    index = end;
  }
  return out.join('');
}

function skipSpace(text: string, index: number): number {
  while (index < text.length && (text[index] === ' ' || text[index] === '\n' || text[index] === '\r' || text[index] === '\t')) index++;
  return index;
}

/** One past the closing quote of the string starting at `start`. */
function stringEnd(text: string, start: number): number {
  let index = start + 1;
  while (index < text.length) {
    const char = text[index]!;
    if (char === '\\') index += 2;
    else if (char === '"') return index + 1;
    else index++;
  }
  return text.length;
}

/** One past the end of a number or literal. */
function tokenEnd(text: string, start: number): number {
  let index = start + 1;
  while (index < text.length && !' \n\r\t,:]}'.includes(text[index]!)) index++;
  return index;
}
