/**
 * One rendered search hit, for the page of a search and for the hits of a `top_hits`
 * aggregation alike: meta fields as asked, `_source` under the collection's mapping options and
 * the request's filter, display sort values and highlights.
 */
import type { HostedCollection } from '../cluster/local-shards.ts';
import { displaySortValues } from '../engine/collect/sort-spec.ts';
import type { TopHitRenderer, TopHitsSpec } from '../engine/collect/top-hits.ts';
import type { Explanation } from '../engine/query/explain.ts';
import { highlight } from '../engine/query/highlight.ts';
import { documentSeqNo } from '../engine/shard/seq-no.ts';
import { RawJson } from './raw-json.ts';
import { COUNT_SETTINGS } from '../cluster/collection-settings.ts';
import { hitFieldValues, parseHitFields, type HitFieldsSpec } from './hit-fields.ts';
import { mappedSourceView, parseSourceFilter, responseSource, type SourceFilter } from './source-filter.ts';

/** One rendered hit. */
export interface SearchHit {
  _index: string;
  _id: string;
  _score: number | null;
  _version?: number;
  _seq_no?: number;
  _primary_term?: number;
  /** The stored text as sent (RawJson), or the filtered source. */
  _source?: Record<string, unknown> | RawJson;
  sort?: unknown[];
  highlight?: Record<string, string[]>;
  /** The named clauses the hit matches (named-queries.ts). */
  matched_queries?: string[] | Record<string, number>;
}

/** What a hit shows besides its id and score. */
export interface HitOptions {
  version: boolean;
  seqNoPrimaryTerm: boolean;
  source: SourceFilter;
  highlight: Record<string, unknown> | undefined;
  /** The search's query (highlighting marks its terms). */
  query: unknown;
  /** The request's `sort` (how sort values display). */
  sort: unknown;
}

/** A document's meta and source as the shard returned it. */
export interface HitDocument {
  id: string;
  version: number;
  seqNo: number;
  primaryTerm: number;
  source?: Record<string, unknown>;
  /** `source` as the stored JSON text, when the shard sent it. */
  sourceText?: string;
}

/** Renders one hit of a collection. */
export function renderSearchHit(collection: HostedCollection, document: HitDocument, score: number | null, sortValues: unknown[] | undefined, options: HitOptions): SearchHit {
  const rendered: SearchHit = { _index: collection.meta.name, _id: document.id, _score: score };
  if (options.version) rendered._version = document.version;
  if (options.seqNoPrimaryTerm) {
    rendered._seq_no = documentSeqNo(document.seqNo);
    rendered._primary_term = document.primaryTerm;
  }
  const source = responseSource(document, collection.meta.mapping._source, options.source);
  if (source !== undefined) rendered._source = source;
  if (sortValues !== undefined) rendered.sort = displaySortValues(sortValues, options.sort, collection.fields, exactJsonNumber);
  const visible = options.highlight && document.source !== undefined ? mappedSourceView(document.source, collection.meta.mapping._source) : undefined;
  if (options.highlight && visible) {
    const maxAnalyzedOffset = collection.meta.settings['highlight.max_analyzed_offset'] ?? COUNT_SETTINGS['highlight.max_analyzed_offset'].default;
    const fragments = highlight(visible, options.highlight, options.query, collection.fields, { maxAnalyzedOffset, collection: collection.meta.name, id: document.id });
    if (Object.keys(fragments).length > 0) rendered.highlight = fragments;
  }
  return rendered;
}

/** Renders `top_hits` hits like search hits, each with the collection it came from. */
export function topHitRenderer(collections: readonly HostedCollection[], query: unknown): TopHitRenderer {
  const byName = new Map(collections.map((collection) => [collection.meta.name, collection]));
  const parsed = new WeakMap<TopHitsSpec, { source: SourceFilter; hitFields: HitFieldsSpec }>();
  return (hit, spec) => {
    let known = parsed.get(spec);
    if (known === undefined) {
      const hitFields = parseHitFields(spec.hitFields, spec.source !== undefined);
      // As in a search, `stored_fields` without `_source` shows no source.
      const source = spec.source === undefined && hitFields.storedFields !== null ? false : spec.source;
      parsed.set(spec, (known = { source: parseSourceFilter({ source }), hitFields }));
    }
    const options: HitOptions = { version: spec.version, seqNoPrimaryTerm: spec.seqNoPrimaryTerm, source: known.source, highlight: spec.highlight, query, sort: spec.sortRequest };
    const collection = byName.get(hit.index)!;
    const rendered: SearchHit & { fields?: Record<string, unknown[]>; _explanation?: Explanation } = renderSearchHit(collection, hit, hit.score, hit.sort, options);
    if (known.hitFields.storedFields === 'none') delete (rendered as { _id?: string })._id;
    const fields = hitFieldValues(hit.source, known.hitFields, collection.fields, collection.meta.mapping);
    if (fields !== undefined) rendered.fields = fields;
    if (hit.explanation !== undefined) rendered._explanation = hit.explanation;
    return { ...rendered };
  };
}

/** A JSON integer written with all its digits (a long beyond ±(2^53 − 1) in sort values and bucket keys). */
export function exactJsonNumber(digits: string): RawJson {
  return new RawJson(digits);
}
