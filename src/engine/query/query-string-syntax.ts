/**
 * The syntax of `query_string` (and of the `q` parameter): the subset of Lucene's classic query
 * parser users type — clauses with `+`/`-`/`!`/`NOT` modifiers joined by `AND`/`&&`/`OR`/`||` or
 * whitespace, `field:` prefixes (with `*` patterns, `_exists_:field`), `( )` groups (also
 * `field:(a b)`), `"phrases"~slop`, `term~edits` fuzzy terms, wildcards `te?t*`, `/regexp/`, ranges
 * `[a TO b]`, `{a TO b}` (mixed and `*` ends) and `>=10`-style comparisons, `^boost` on any clause,
 * and `\` escapes. Operators are resolved as Lucene's `addClause` does (see `addClause`).
 * Malformed text is a `query_shard` error (400) naming the query; groups nest at most
 * MAX_QUERY_DEPTH levels. The parser reads each character once (no backtracking).
 */
import { EngineError } from '../errors.ts';
import { MAX_QUERY_DEPTH } from './query-limits.ts';

/** How a clause takes part in its boolean query. */
export type QsOccur = 'must' | 'should' | 'must_not';

/** A parsed clause; `field` null means the default fields. */
export type QsNode =
  | { kind: 'bool'; clauses: Array<{ occur: QsOccur; node: QsNode }>; boost: number }
  /** `raw` keeps its backslash escapes (wildcards need them); `fuzzy` is the text after `~`, null without. */
  | { kind: 'term'; field: string | null; raw: string; fuzzy: string | null; boost: number }
  | { kind: 'phrase'; field: string | null; text: string; slop: number | null; boost: number }
  | { kind: 'regexp'; field: string | null; pattern: string; boost: number }
  | { kind: 'range'; field: string | null; lower: string | null; upper: string | null; includeLower: boolean; includeUpper: boolean; boost: number }
  | { kind: 'exists'; field: string; boost: number };

/** Characters that end a bare term (unless escaped). */
const TERM_STOP = new Set([' ', '\t', '\n', '\r', '\u3000', '(', ')', ':', '^', '[', ']', '"', '{', '}', '~', '/', '!']);

type Conjunction = 'none' | 'and' | 'or';
type Modifier = 'none' | 'required' | 'prohibited';

/** Parses query_string text; null when it holds no clause. */
export function parseQueryStringSyntax(text: string, defaultOperator: 'and' | 'or'): QsNode | null {
  const parser = new QueryStringParser(text, defaultOperator);
  return parser.parseTop();
}

/** The query_shard error for text that does not parse. */
export function queryStringError(text: string, detail: string): EngineError {
  return new EngineError('query_shard', `Failed to parse query [${text.length > 256 ? `${text.slice(0, 256)}...` : text}]: ${detail}`);
}

class QueryStringParser {
  private position = 0;

  constructor(
    private readonly text: string,
    private readonly defaultOperator: 'and' | 'or',
  ) {}

  parseTop(): QsNode | null {
    const node = this.parseSequence(null, 0);
    this.skipSpace();
    if (this.position < this.text.length) this.fail(`unexpected [${this.text[this.position]}] at position ${this.position}`);
    return node;
  }

  private fail(detail: string): never {
    throw queryStringError(this.text, detail);
  }

  private skipSpace(): void {
    while (this.position < this.text.length && /\s/.test(this.text[this.position]!)) this.position++;
  }

  /** Whether `word` is at the position as a whole token (not the start of a longer term). */
  private atWord(word: string): boolean {
    if (!this.text.startsWith(word, this.position)) return false;
    const next = this.text[this.position + word.length];
    return next === undefined || /\s/.test(next) || next === '(' || next === ')' || next === '"' || (/^[A-Z]+$/.test(word) ? false : true);
  }

  private readConjunction(): Conjunction {
    for (const [word, conjunction] of [['AND', 'and'], ['&&', 'and'], ['OR', 'or'], ['||', 'or']] as const) {
      if (this.atWord(word)) {
        this.position += word.length;
        return conjunction;
      }
    }
    return 'none';
  }

  private readModifier(): Modifier {
    const char = this.text[this.position];
    if (char === '+') {
      this.position++;
      return 'required';
    }
    if (char === '-' || char === '!') {
      this.position++;
      return 'prohibited';
    }
    if (this.atWord('NOT')) {
      this.position += 3;
      return 'prohibited';
    }
    return 'none';
  }

  /** Clauses up to `)` or the end, combined as Lucene's QueryParser combines them. */
  private parseSequence(field: string | null, depth: number): QsNode | null {
    const clauses: Array<{ occur: QsOccur; node: QsNode }> = [];
    let first: QsNode | null = null;
    let count = 0;
    for (;;) {
      this.skipSpace();
      if (this.position >= this.text.length || this.text[this.position] === ')') break;
      const conjunction = count === 0 ? 'none' : this.readConjunction();
      if (count === 0 && this.readConjunction() !== 'none') this.fail(`an operator cannot start a query (position ${this.position})`);
      this.skipSpace();
      const modifier = this.readModifier();
      this.skipSpace();
      if (this.position >= this.text.length || this.text[this.position] === ')') this.fail('an operator or modifier must be followed by a clause');
      if (this.readConjunction() !== 'none') this.fail(`two operators in a row (position ${this.position})`);
      const node = this.parseClause(field, depth);
      if (count === 0 && modifier === 'none') first = node;
      this.addClause(clauses, conjunction, modifier, node);
      count++;
    }
    if (count === 1 && first !== null) return first;
    return clauses.length === 0 ? null : { kind: 'bool', clauses, boost: 1 };
  }

  /**
   * Lucene's rule: `AND` makes the previous clause required (unless prohibited); with default
   * operator AND, `OR` makes it optional; the new clause is prohibited by `-`/`NOT`, required by
   * `+` (or `AND`, or the AND default unless introduced by `OR`), else optional.
   */
  private addClause(clauses: Array<{ occur: QsOccur; node: QsNode }>, conjunction: Conjunction, modifier: Modifier, node: QsNode): void {
    const previous = clauses[clauses.length - 1];
    if (previous !== undefined && previous.occur !== 'must_not') {
      if (conjunction === 'and') previous.occur = 'must';
      else if (conjunction === 'or' && this.defaultOperator === 'and') previous.occur = 'should';
    }
    const prohibited = modifier === 'prohibited';
    const required =
      this.defaultOperator === 'or' ? modifier === 'required' || (conjunction === 'and' && !prohibited) : !prohibited && conjunction !== 'or';
    clauses.push({ occur: prohibited ? 'must_not' : required ? 'must' : 'should', node });
  }

  /** `[field:] (group | term | phrase | regexp | range) [^boost]`. */
  private parseClause(inherited: string | null, depth: number): QsNode {
    let field = inherited;
    const start = this.position;
    if (this.text[this.position] !== '(' && this.text[this.position] !== '"' && this.text[this.position] !== '/') {
      const raw = this.readRawTerm();
      if (this.text[this.position] === ':' && raw !== '') {
        this.position++;
        field = unescape(raw);
        this.skipSpace();
        if (field === '_exists_') {
          const target = this.readRawTerm();
          if (target === '') this.fail('[_exists_] requires a field name');
          return { kind: 'exists', field: unescape(target), boost: this.readBoost() };
        }
      } else {
        this.position = start;
      }
    }
    const char = this.text[this.position];
    if (char === undefined) this.fail(`a field name must be followed by a value (position ${this.position})`);
    if (char === '(') {
      if (depth >= MAX_QUERY_DEPTH) throw new EngineError('parsing', `[query_string] query is nested deeper than ${MAX_QUERY_DEPTH} levels`);
      this.position++;
      const group = this.parseSequence(field, depth + 1);
      if (this.text[this.position] !== ')') this.fail('missing [)]');
      this.position++;
      const boost = this.readBoost();
      const node: QsNode = group ?? { kind: 'bool', clauses: [], boost: 1 };
      return boost === 1 ? node : { kind: 'bool', clauses: [{ occur: 'must', node }], boost };
    }
    if (char === '"') return this.parsePhrase(field);
    if (char === '/') return this.parseRegexp(field);
    if (char === '[' || char === '{') return this.parseRange(field);
    const raw = this.readRawTerm();
    if (raw === '') this.fail(`unexpected [${char}] at position ${this.position}`);
    let fuzzy: string | null = null;
    let boost = 1;
    for (;;) {
      if (this.text[this.position] === '~' && fuzzy === null) {
        this.position++;
        fuzzy = this.readNumberText();
      } else if (this.text[this.position] === '^' && boost === 1) {
        boost = this.readBoost();
      } else {
        break;
      }
    }
    return { kind: 'term', field, raw, fuzzy, boost };
  }

  /** A bare term with its escapes kept; stops at a syntax character. */
  private readRawTerm(): string {
    const { text } = this;
    const start = this.position;
    while (this.position < text.length) {
      const char = text[this.position]!;
      if (char === '\\') {
        if (this.position + 1 >= text.length) this.fail('a query cannot end with an escape character [\\]');
        this.position += 2;
        continue;
      }
      if (TERM_STOP.has(char)) break;
      this.position++;
    }
    return text.slice(start, this.position);
  }

  /** Digits and dots after `~` or `^` (may be empty). */
  private readNumberText(): string {
    const start = this.position;
    while (this.position < this.text.length && /[0-9.]/.test(this.text[this.position]!)) this.position++;
    return this.text.slice(start, this.position);
  }

  /** An optional `^boost` (a non-negative number). */
  private readBoost(): number {
    if (this.text[this.position] !== '^') return 1;
    this.position++;
    const text = this.readNumberText();
    const boost = Number(text);
    if (text === '' || !Number.isFinite(boost)) this.fail(`[^] must be followed by a number (position ${this.position})`);
    return boost;
  }

  /** Text up to the closing `close`, unescaping `\`; fails when it is missing. */
  private readDelimited(close: string, keepEscapes: boolean): string {
    const { text } = this;
    this.position++;
    let value = '';
    while (this.position < text.length && text[this.position] !== close) {
      if (text[this.position] === '\\' && this.position + 1 < text.length) {
        if (keepEscapes && text[this.position + 1] !== close) value += '\\';
        this.position++;
      }
      value += text[this.position];
      this.position++;
    }
    if (this.position >= text.length) this.fail(`missing closing [${close}]`);
    this.position++;
    return value;
  }

  private parsePhrase(field: string | null): QsNode {
    const text = this.readDelimited('"', false);
    let slop: number | null = null;
    let boost = 1;
    for (;;) {
      if (this.text[this.position] === '~' && slop === null) {
        this.position++;
        const number = Number(this.readNumberText());
        slop = Number.isFinite(number) ? Math.trunc(number) : 0;
      } else if (this.text[this.position] === '^' && boost === 1) {
        boost = this.readBoost();
      } else {
        break;
      }
    }
    return { kind: 'phrase', field, text, slop, boost };
  }

  private parseRegexp(field: string | null): QsNode {
    const pattern = this.readDelimited('/', true);
    return { kind: 'regexp', field, pattern, boost: this.readBoost() };
  }

  /** `[a TO b]`, `{a TO b}`, mixed brackets; `*` for an open end. */
  private parseRange(field: string | null): QsNode {
    const includeLower = this.text[this.position] === '[';
    this.position++;
    this.skipSpace();
    const lower = this.readRangeBound();
    this.skipSpace();
    if (!this.text.startsWith('TO', this.position)) this.fail('a range needs [TO] between its bounds');
    this.position += 2;
    this.skipSpace();
    const upper = this.readRangeBound();
    this.skipSpace();
    const close = this.text[this.position];
    if (close !== ']' && close !== '}') this.fail('a range must end with [ or }');
    this.position++;
    return { kind: 'range', field, lower, upper, includeLower, includeUpper: close === ']', boost: this.readBoost() };
  }

  private readRangeBound(): string | null {
    if (this.text[this.position] === '"') return this.readDelimited('"', false);
    const start = this.position;
    while (this.position < this.text.length && !/[\s\]}]/.test(this.text[this.position]!)) {
      if (this.text[this.position] === '\\') this.position++;
      this.position++;
    }
    const bound = unescape(this.text.slice(start, this.position));
    if (bound === '') this.fail('a range bound is missing');
    return bound === '*' ? null : bound;
  }
}

/** Text without its backslash escapes. */
export function unescape(raw: string): string {
  if (!raw.includes('\\')) return raw;
  let text = '';
  for (let index = 0; index < raw.length; index++) {
    if (raw[index] === '\\' && index + 1 < raw.length) index++;
    text += raw[index];
  }
  return text;
}

/** Whether a raw term holds an unescaped `*` or `?`. */
export function hasWildcard(raw: string): boolean {
  for (let index = 0; index < raw.length; index++) {
    const char = raw[index];
    if (char === '\\') index++;
    else if (char === '*' || char === '?') return true;
  }
  return false;
}
