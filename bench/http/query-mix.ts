/**
 * The fixed query mix of the HTTP suite (the same list drives the server and the in-process
 * shard): match, bool with a date range filter, phrase, sort by a field, terms aggregation and
 * date histogram, equally often, in a seeded order.
 */
import { readNdjsonBatches } from '../corpora/ndjson.ts';
import { Prng } from '../corpora/prng.ts';
import type { QuerySet } from '../query-set.ts';

/** The kinds of query in the mix, in report order. */
export const MIX_KINDS = ['match', 'bool_range', 'phrase', 'sort', 'terms_agg', 'date_histogram'] as const;

/** One kind of query in the mix. */
export type MixKind = (typeof MIX_KINDS)[number];

/** The two collections of the HTTP suite. */
export type BenchCollection = 'emails' | 'cities';

/** One `_search` request of the mix. */
export interface MixQuery {
  kind: MixKind;
  collection: BenchCollection;
  body: Record<string, unknown>;
}

/** Values drawn from the loaded corpora so that filters and sorts select real documents. */
export interface MixSamples {
  /** Epoch millis of e-mails spread over the corpus. */
  emailDates: number[];
  /** Country codes of cities, as often as they occur. */
  countries: string[];
}

const DAY_MS = 24 * 3600 * 1000;
const SAMPLE_EVERY = 50;

/** Reads every 50th e-mail date and city country from the corpora being loaded. */
export async function collectSamples(emailPath: string, emails: number, cityPath: string, cities: number): Promise<MixSamples> {
  const samples: MixSamples = { emailDates: [], countries: [] };
  let position = 0;
  for await (const batch of readNdjsonBatches(emailPath, 1000, emails)) {
    for (const line of batch) {
      if (position++ % SAMPLE_EVERY === 0) samples.emailDates.push(Date.parse((JSON.parse(line) as { source: { date: string } }).source.date));
    }
  }
  position = 0;
  for await (const batch of readNdjsonBatches(cityPath, 1000, cities)) {
    for (const line of batch) {
      if (position++ % SAMPLE_EVERY === 0) samples.countries.push((JSON.parse(line) as { source: { country: string } }).source.country);
    }
  }
  return samples;
}

function pickFrom<T>(items: readonly T[], prng: Prng): T {
  return items[prng.below(items.length)] as T;
}

function mixQuery(kind: MixKind, querySet: QuerySet, samples: MixSamples, prng: Prng): MixQuery {
  const commonTerm = (): string => pickFrom(querySet.common, prng).join(' ');
  switch (kind) {
    case 'match':
      return { kind, collection: 'emails', body: { query: { match: { body: pickFrom(querySet.or, prng).join(' ') } }, size: 10 } };
    case 'bool_range': {
      const center = pickFrom(samples.emailDates, prng);
      const range = { gte: new Date(center - 30 * DAY_MS).toISOString(), lt: new Date(center + 30 * DAY_MS).toISOString() };
      return {
        kind,
        collection: 'emails',
        body: { query: { bool: { must: [{ match: { body: commonTerm() } }], filter: [{ range: { date: range } }] } }, size: 10 },
      };
    }
    case 'phrase':
      return { kind, collection: 'emails', body: { query: { match_phrase: { body: pickFrom(querySet.phrase, prng).join(' ') } }, size: 10 } };
    case 'sort':
      return {
        kind,
        collection: 'cities',
        body: { query: { term: { country: pickFrom(samples.countries, prng) } }, sort: [{ population: { order: 'desc' } }], size: 10 },
      };
    case 'terms_agg':
      return {
        kind,
        collection: 'emails',
        body: { query: { match: { body: commonTerm() } }, size: 0, aggs: { senders: { terms: { field: 'from', size: 10 } } } },
      };
    case 'date_histogram':
      return {
        kind,
        collection: 'emails',
        body: {
          query: { match: { body: commonTerm() } },
          size: 0,
          aggs: { per_month: { date_histogram: { field: 'date', calendar_interval: 'month' } } },
        },
      };
  }
}

/** Builds `perKind` queries of every kind, shuffled with a fixed seed. */
export function buildQueryMix(querySet: QuerySet, samples: MixSamples, perKind = 200): MixQuery[] {
  const prng = new Prng(0xb0a7);
  const queries: MixQuery[] = [];
  for (const kind of MIX_KINDS) {
    for (let index = 0; index < perKind; index++) queries.push(mixQuery(kind, querySet, samples, prng));
  }
  return prng.shuffle(queries);
}
