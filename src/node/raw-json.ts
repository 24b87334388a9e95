/**
 * JSON text that a response carries as it is: a document's `_source` as the client sent it (and,
 * on a filtered source, each number literal whose value a float would not print the same way).
 * Node 20 has no `JSON.rawJSON`, so `stringifyWithRawJson` serialises the response with a
 * placeholder string for each raw value, a random nonce chosen per call followed by the value's
 * position, and then puts the texts in their place. A placeholder cannot be confused with user
 * data: the nonce is drawn after the data is fixed, and `"` inside a user string is escaped.
 *
 * Raw values exist only between a renderer and the response edge; anything that serialises one
 * elsewhere (a log line, an internal call) gets its parsed value from `toJSON`.
 */
import { randomBytes } from 'node:crypto';
import { setKey } from '../engine/mapping/json-value.ts';

/** The serialisation in progress: texts in order of appearance, and its nonce (drawn at the first raw value). */
let active: { texts: string[]; nonce: string } | null = null;

/** A JSON text written into a response as it is. */
export class RawJson {
  /** `text` must be one valid JSON value. */
  constructor(readonly text: string) {}

  /** Within `stringifyWithRawJson`: a placeholder; elsewhere: the parsed value. */
  toJSON(): unknown {
    if (active === null) return JSON.parse(this.text);
    if (active.nonce === '') active.nonce = randomBytes(12).toString('base64url');
    active.texts.push(this.text);
    return `${active.nonce}${active.texts.length - 1}`;
  }
}

/** `JSON.stringify(value, null, indent)`, with every RawJson written as its text. */
export function stringifyWithRawJson(value: unknown, indent?: number): string {
  const outer = active;
  const state = { texts: [] as string[], nonce: '' };
  active = state;
  let out: string;
  try {
    out = JSON.stringify(value, null, indent);
  } finally {
    active = outer;
  }
  if (state.texts.length === 0) return out;
  const parts = out.split(`"${state.nonce}`);
  let joined = parts[0]!;
  for (let index = 1; index < parts.length; index++) {
    const part = parts[index]!;
    const quote = part.indexOf('"');
    joined += state.texts[Number(part.slice(0, quote))]! + part.slice(quote + 1);
  }
  return joined;
}

/** The value with every RawJson in it replaced by its parsed value, for code that works on plain JSON values (writes). */
export function plainJson(value: unknown): unknown {
  if (value instanceof RawJson) return JSON.parse(value.text);
  if (Array.isArray(value)) return value.map(plainJson);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) setKey(out, key, plainJson((value as Record<string, unknown>)[key]));
  return out;
}
