/**
 * Parses a JSON text without losing a number: a number literal that a float would not print back
 * the same way (beyond 2^53, `1.0`, `1e400`, more than 17 digits) becomes a RawJson of its
 * literal; every other value is what `JSON.parse` gives. Objects are plain, keys are own keys
 * (`__proto__` included) and a repeated key keeps its last value, as `JSON.parse` does.
 *
 * Used where a stored `_source` must be cut (source filtering, mapping includes/excludes) and
 * then written back into a response: the kept numbers keep their literals. The text must be
 * valid JSON (stored sources are); nesting is bounded by the mapping's depth limit.
 */
import { setKey } from '../engine/mapping/json-value.ts';
import { RawJson } from './raw-json.ts';

/** The value of a valid JSON text, numbers that a float would change kept as RawJson. */
export function parseLossless(text: string): unknown {
  return new Parser(text).value();
}

class Parser {
  private at = 0;

  constructor(private readonly text: string) {}

  value(): unknown {
    this.space();
    if (this.at >= this.text.length) throw new SyntaxError('unexpected end of JSON text');
    const code = this.text.charCodeAt(this.at);
    if (code === 0x7b) return this.object();
    if (code === 0x5b) return this.array();
    if (code === 0x22) return this.string();
    if (code === 0x74) return this.literal('true', true);
    if (code === 0x66) return this.literal('false', false);
    if (code === 0x6e) return this.literal('null', null);
    return this.number();
  }

  private object(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    this.at++;
    this.space();
    if (this.text.charCodeAt(this.at) === 0x7d) {
      this.at++;
      return out;
    }
    for (;;) {
      this.space();
      const key = this.string();
      this.space();
      this.at++; // the colon
      setKey(out, key, this.value());
      this.space();
      if (this.text.charCodeAt(this.at++) === 0x7d) return out;
    }
  }

  private array(): unknown[] {
    const out: unknown[] = [];
    this.at++;
    this.space();
    if (this.text.charCodeAt(this.at) === 0x5d) {
      this.at++;
      return out;
    }
    for (;;) {
      out.push(this.value());
      this.space();
      if (this.text.charCodeAt(this.at++) === 0x5d) return out;
    }
  }

  private string(): string {
    const start = this.at;
    let escaped = false;
    let index = start + 1;
    for (;;) {
      if (index >= this.text.length) throw new SyntaxError('unterminated string in JSON text');
      const code = this.text.charCodeAt(index);
      if (code === 0x22) break;
      if (code === 0x5c) {
        escaped = true;
        index++;
      }
      index++;
    }
    this.at = index + 1;
    return escaped ? (JSON.parse(this.text.slice(start, this.at)) as string) : this.text.slice(start + 1, index);
  }

  private literal<T>(word: string, value: T): T {
    this.at += word.length;
    return value;
  }

  private number(): number | RawJson {
    const start = this.at;
    let index = start;
    for (;;) {
      const code = this.text.charCodeAt(index);
      // digits, '+', '-', '.', 'e', 'E'
      if ((code >= 0x30 && code <= 0x39) || code === 0x2b || code === 0x2d || code === 0x2e || code === 0x65 || code === 0x45) index++;
      else break;
    }
    this.at = index;
    const literal = this.text.slice(start, index);
    const value = Number(literal);
    return JSON.stringify(value) === literal ? value : new RawJson(literal);
  }

  private space(): void {
    for (;;) {
      const code = this.text.charCodeAt(this.at);
      if (code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09) this.at++;
      else return;
    }
  }
}
