/**
 * The fixed query set of the engine suite, derived deterministically (seeded PRNG) from the
 * e-mail corpus' `body` field and cached beside the corpus.
 *
 * Only words of ASCII letters are used, so that Trove's standard analyzer, FTS5's `unicode61`
 * tokenizer and MiniSearch's default tokenizer all see the same terms.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { benchDataPath, readNdjsonBatches } from './corpora/ndjson.ts';
import { Prng } from './corpora/prng.ts';

/** The query classes of the engine suite, in report order. */
export const QUERY_CLASSES = ['common', 'rare', 'and', 'or', 'phrase'] as const;

/** One query class. */
export type QueryClass = (typeof QUERY_CLASSES)[number];

/** Queries per class: each query is its terms, lower-cased (phrase terms in text order). */
export type QuerySet = Record<QueryClass, string[][]>;

/** Queries wanted per class. */
export const QUERIES_PER_CLASS = 200;

const QUERY_SET_VERSION = 1;
const RARE_MIN_DF = 2;
const RARE_MAX_DF = 10;
const SAMPLED_DOCS = 3 * QUERIES_PER_CLASS;
const WORD = /^[a-z]{2,24}$/;
const RAW_WORD = /^[A-Za-z]{2,24}$/;
/** Splits like Unicode word boundaries do, roughly: `.`, `:`, `_` and `'` join letters. */
const SEPARATORS = /[^\p{L}\p{N}'._:]+/u;
const EDGE_JOINERS = /^['._:]+|['._:]+$/g;

/**
 * Distinct words of a body, as the df count sees them. Tokens joined by `.`, `:`, `_` or `'`
 * (`www.example.com`, `we'll`) are one token for a word-boundary analyzer but several for FTS5,
 * so they are skipped: a query term never depends on that difference.
 */
function distinctWords(body: string): Set<string> {
  const words = new Set<string>();
  for (const token of body.toLowerCase().split(SEPARATORS)) {
    const word = token.replace(EDGE_JOINERS, '');
    if (WORD.test(word)) words.add(word);
  }
  return words;
}

/** Picks `count` distinct items from `items` (fewer if there are not enough). */
function pick<T>(items: readonly T[], count: number, prng: Prng): T[] {
  return prng.shuffle(items.slice()).slice(0, count);
}

/** A run of 2-3 whitespace-separated plain words of the body, or null if none was found. */
function phraseOf(body: string, prng: Prng): string[] | null {
  const tokens = body.split(/\s+/);
  const length = 2 + prng.below(2);
  for (let attempt = 0; attempt < 20; attempt++) {
    const start = prng.below(Math.max(1, tokens.length - length + 1));
    const run = tokens.slice(start, start + length);
    if (run.length === length && run.every((token) => RAW_WORD.test(token))) {
      return run.map((token) => token.toLowerCase());
    }
  }
  return null;
}

/** Derives the query set from the first `docs` documents of an e-mail corpus file. */
export async function deriveQuerySet(corpusPath: string, docs: number): Promise<QuerySet> {
  const prng = new Prng(0x51ee7);
  const sampledAt = new Set<number>();
  while (sampledAt.size < Math.min(SAMPLED_DOCS, docs)) sampledAt.add(prng.below(docs));
  const documentFrequency = new Map<string, number>();
  const sampledBodies: string[] = [];
  let position = 0;
  for await (const batch of readNdjsonBatches(corpusPath, 1000, docs)) {
    for (const line of batch) {
      const body = (JSON.parse(line) as { source: { body: string } }).source.body;
      for (const word of distinctWords(body)) {
        documentFrequency.set(word, (documentFrequency.get(word) ?? 0) + 1);
      }
      if (sampledAt.has(position)) sampledBodies.push(body);
      position++;
    }
  }
  const byDf = [...documentFrequency.entries()].sort((left, right) => right[1] - left[1] || (left[0] < right[0] ? -1 : 1));
  const common = byDf.slice(0, QUERIES_PER_CLASS).map(([word]) => [word]);
  const rareWords = byDf.filter(([, df]) => df >= RARE_MIN_DF && df <= RARE_MAX_DF).map(([word]) => word);
  const rare = pick(rareWords, QUERIES_PER_CLASS, prng).map((word) => [word]);
  const termsFromDocument = (body: string): string[] | null => {
    const words = [...distinctWords(body)].filter((word) => (documentFrequency.get(word) ?? 0) >= RARE_MIN_DF);
    const chosen = pick(words, 2 + prng.below(2), prng);
    return chosen.length >= 2 ? chosen : null;
  };
  const and: string[][] = [];
  const or: string[][] = [];
  const phrase: string[][] = [];
  const seenPhrases = new Set<string>();
  for (const body of prng.shuffle(sampledBodies)) {
    const andTerms = and.length < QUERIES_PER_CLASS ? termsFromDocument(body) : null;
    if (andTerms) and.push(andTerms);
    const orTerms = or.length < QUERIES_PER_CLASS ? termsFromDocument(body) : null;
    if (orTerms) or.push(orTerms);
    const words = phrase.length < QUERIES_PER_CLASS ? phraseOf(body, prng) : null;
    if (words && !seenPhrases.has(words.join(' '))) {
      seenPhrases.add(words.join(' '));
      phrase.push(words);
    }
  }
  return { common: prng.shuffle(common), rare, and, or, phrase };
}

/** Path of the cached query set for the first `docs` documents of the corpus (derived if missing). */
export async function querySetFile(corpusPath: string, docs: number): Promise<string> {
  const corpusName = path.basename(corpusPath, '.ndjson');
  const target = benchDataPath(`queries-v${QUERY_SET_VERSION}-${corpusName}-${docs}.json`);
  if (!existsSync(target)) writeFileSync(target, JSON.stringify(await deriveQuerySet(corpusPath, docs)));
  return target;
}

/** Reads a cached query set. */
export function readQuerySet(filePath: string): QuerySet {
  return JSON.parse(readFileSync(filePath, 'utf8')) as QuerySet;
}
