/**
 * `_analyze`: the tokens an analyzer makes of a text, in Elasticsearch's shape. The analyzer is
 * named (`standard`, `english`, `whitespace`, `keyword`: Trove's four) or is the analyzer of a
 * collection's `field`; custom chains (`tokenizer`, `filter`, `char_filter`, `normalizer`) are
 * refused rather than ignored. An array of texts is analyzed as one multi-valued field: positions
 * continue with a gap of 100 and offsets with a gap of 1, as Elasticsearch does. A call producing
 * more tokens than the collection's `index.analyze.max_token_count` (10000 by default, and
 * without a collection) is refused with Elasticsearch's message.
 */
import { COUNT_SETTINGS } from '../cluster/collection-settings.ts';
import { analyze } from '../engine/analysis/analyzer.ts';
import { EngineError } from '../engine/errors.ts';
import type { AnalyzerName } from '../engine/mapping/mapping.ts';
import type { NodeContext } from './node-context.ts';

/** One token of the response. */
export interface AnalyzeToken {
  token: string;
  start_offset: number;
  end_offset: number;
  type: string;
  position: number;
}

const ANALYZERS: readonly AnalyzerName[] = ['standard', 'english', 'whitespace', 'keyword'];
const BODY_KEYS = new Set(['analyzer', 'text', 'field', 'tokenizer', 'filter', 'char_filter', 'normalizer', 'explain', 'attributes']);
const POSITION_GAP = 100;
const OFFSET_GAP = 1;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The analyzer a request names, directly or through a collection's field. */
function analyzerOf(context: NodeContext, collection: string | undefined, body: Record<string, unknown>): AnalyzerName {
  if (body.analyzer !== undefined) {
    if (typeof body.analyzer !== 'string' || !(ANALYZERS as readonly string[]).includes(body.analyzer)) {
      throw new EngineError('illegal_argument', `failed to find global analyzer [${String(body.analyzer)}]; Trove has [${ANALYZERS.join(', ')}]`);
    }
    return body.analyzer as AnalyzerName;
  }
  if (body.field !== undefined) {
    if (typeof body.field !== 'string') throw new EngineError('parsing', '[field] must be a string');
    if (collection === undefined) throw new EngineError('illegal_argument', 'analysis by [field] needs a collection: use /{collection}/_analyze');
    const field = context.router.collection(collection).fields.get(body.field);
    if (field === undefined) return 'standard';
    return field.analyzer;
  }
  return 'standard';
}

/** The collection's `index.analyze.max_token_count`, or its default without a collection. */
function maxTokenCount(context: NodeContext, collection: string | undefined): number {
  const fallback = COUNT_SETTINGS['analyze.max_token_count'].default;
  if (collection === undefined) return fallback;
  return context.router.collection(collection).meta.settings['analyze.max_token_count'] ?? fallback;
}

/** The token type Elasticsearch reports: `<NUM>` / `<ALPHANUM>` for word analyzers, `word` for the others. */
function tokenType(analyzer: AnalyzerName, term: string): string {
  if (analyzer === 'whitespace' || analyzer === 'keyword') return 'word';
  return /^[0-9]+$/.test(term) ? '<NUM>' : '<ALPHANUM>';
}

/** `GET|POST [/{collection}]/_analyze` with the ES body `{analyzer?, field?, text}`. */
export function analyzeText(context: NodeContext, collection: string | undefined, body: unknown): { tokens: AnalyzeToken[] } {
  if (!isPlainObject(body)) throw new EngineError('parsing', 'the analyze body must be a JSON object');
  for (const key of Object.keys(body)) {
    if (!BODY_KEYS.has(key)) throw new EngineError('parsing', `unknown field [${key}] of an analyze request`);
  }
  for (const key of ['tokenizer', 'filter', 'char_filter', 'normalizer'] as const) {
    if (body[key] !== undefined) throw new EngineError('illegal_argument', `[${key}] is not supported: Trove analyzes with a named analyzer or a field's analyzer`);
  }
  if (body.explain === true) throw new EngineError('illegal_argument', '[explain] is not supported');
  const texts = typeof body.text === 'string' ? [body.text] : body.text;
  if (!Array.isArray(texts) || texts.length === 0 || !texts.every((text) => typeof text === 'string')) {
    throw new EngineError('action_request_validation', 'Validation Failed: 1: text is missing;');
  }
  const analyzer = analyzerOf(context, collection, body);
  const maxTokens = maxTokenCount(context, collection);
  const tokens: AnalyzeToken[] = [];
  let positionBase = 0;
  let offsetBase = 0;
  for (const text of texts as string[]) {
    const analyzed = analyze(analyzer, text);
    if (tokens.length + analyzed.length > maxTokens) {
      throw new EngineError(
        'illegal_argument',
        `The number of tokens produced by calling _analyze has exceeded the allowed maximum of [${maxTokens}]. This limit can be set by changing the [index.analyze.max_token_count] index level setting.`,
      );
    }
    for (const token of analyzed) {
      tokens.push({
        token: token.term,
        start_offset: offsetBase + token.startOffset,
        end_offset: offsetBase + token.endOffset,
        type: tokenType(analyzer, token.term),
        position: positionBase + token.position,
      });
    }
    const last = analyzed[analyzed.length - 1];
    positionBase += (last ? last.position + 1 : 0) + POSITION_GAP;
    offsetBase += text.length + OFFSET_GAP;
  }
  return { tokens };
}
