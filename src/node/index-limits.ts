/**
 * The per-collection search limits `index.max_result_window`, `index.max_docvalue_fields_search`
 * and `index.max_script_fields` of a search target: the smallest over the collections it
 * reads (the defaults for a collection that does not set them).
 */
import { COUNT_SETTINGS } from '../cluster/collection-settings.ts';
import { resolveCollections, type ResolveOptions } from './collections.ts';
import type { NodeContext } from './node-context.ts';

/** The limits a search of a target obeys. */
export interface SearchLimits {
  maxResultWindow: number;
  maxDocvalueFields: number;
  maxScriptFields: number;
}

/** Limits when the target names no collection (or cannot be resolved: that error comes later). */
export const DEFAULT_SEARCH_LIMITS: SearchLimits = {
  maxResultWindow: COUNT_SETTINGS.max_result_window.default,
  maxDocvalueFields: COUNT_SETTINGS.max_docvalue_fields_search.default,
  maxScriptFields: COUNT_SETTINGS.max_script_fields.default,
};

/** The search limits of `target`: the smallest of each over its collections. */
export function searchLimitsOf(context: NodeContext, target: string, options: ResolveOptions = {}): SearchLimits {
  let collections;
  try {
    collections = resolveCollections(context, target, options);
  } catch {
    return DEFAULT_SEARCH_LIMITS;
  }
  if (collections.length === 0) return DEFAULT_SEARCH_LIMITS;
  return {
    maxResultWindow: Math.min(...collections.map((hosted) => hosted.meta.settings.max_result_window ?? DEFAULT_SEARCH_LIMITS.maxResultWindow)),
    maxDocvalueFields: Math.min(...collections.map((hosted) => hosted.meta.settings.max_docvalue_fields_search ?? DEFAULT_SEARCH_LIMITS.maxDocvalueFields)),
    maxScriptFields: Math.min(...collections.map((hosted) => hosted.meta.settings.max_script_fields ?? DEFAULT_SEARCH_LIMITS.maxScriptFields)),
  };
}
