/**
 * `_msearch`: several searches in one request. Each runs as its own `_search` (same parsing,
 * lanes and rendering), at most `maxConcurrent` at a time, and fails on its own: the response
 * lists, in request order, each search's response or its error.
 */
import type { SearchResponse } from './search.ts';
import type { SearchParams } from './search-body.ts';

/** One search of an `_msearch`: its target, body and parameters (header and URL merged). */
export interface MultiSearchItem {
  /** The collections the header or URL names (narrowed to the caller's scope); null only for a point-in-time search that names none. */
  target: string | null;
  body: unknown;
  params: SearchParams;
}

/** One entry of the response: the search response, or the error the API renders with its error table. */
export type MultiSearchOutcome = { response: SearchResponse } | { error: unknown };

/** The node's `_msearch` result before rendering. */
export interface MultiSearchResult {
  took: number;
  outcomes: MultiSearchOutcome[];
}

/** Searches `_msearch` runs at once when the request does not say (`max_concurrent_searches`). */
export const DEFAULT_MAX_CONCURRENT_SEARCHES = 8;

/** Runs every item through `runOne`, at most `maxConcurrent` at a time; never rejects for one item's failure. */
export async function multiSearch(
  items: readonly MultiSearchItem[],
  runOne: (item: MultiSearchItem) => Promise<SearchResponse>,
  maxConcurrent = DEFAULT_MAX_CONCURRENT_SEARCHES,
): Promise<MultiSearchResult> {
  const started = performance.now();
  const outcomes: MultiSearchOutcome[] = new Array(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const position = next++;
      try {
        outcomes[position] = { response: await runOne(items[position]!) };
      } catch (error) {
        outcomes[position] = { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(maxConcurrent, items.length)) }, worker));
  return { took: Math.round(performance.now() - started), outcomes };
}
