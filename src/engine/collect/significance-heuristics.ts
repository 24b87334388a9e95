/**
 * The scores of `significant_terms`: how much more a term belongs to the foreground (the bucket's
 * docs) than to the background (the collection). Each heuristic reads four counts: docs of the
 * foreground holding the term, the foreground size, docs of the background holding it and the
 * background size. Only a positive score keeps a term.
 */
import { checkKeys, dslError, expectObject } from '../query/dsl-reader.ts';

/** The heuristic a `significant_terms` scores with, and its options. */
export type SignificanceHeuristic =
  | { kind: 'jlh' }
  | { kind: 'mutual_information' | 'chi_square'; includeNegatives: boolean; backgroundIsSuperset: boolean }
  | { kind: 'gnd'; backgroundIsSuperset: boolean }
  | { kind: 'percentage' };

/** The heuristic names an aggregation body may hold; `script_heuristic` is refused. */
export const HEURISTIC_NAMES = ['jlh', 'mutual_information', 'chi_square', 'gnd', 'percentage', 'script_heuristic'] as const;

function readFlag(options: Record<string, unknown>, key: string, heuristic: string, fallback: boolean): boolean {
  const value = options[key];
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw dslError(`[${heuristic}] [${key}] must be a boolean`);
  return value;
}

/** Reads the heuristic of a `significant_terms` body (JLH when none is named). */
export function parseSignificanceHeuristic(options: Record<string, unknown>): SignificanceHeuristic {
  const named = HEURISTIC_NAMES.filter((name) => options[name] !== undefined);
  if (named.length > 1) throw dslError(`[significant_terms] takes one significance heuristic, found [${named.join(', ')}]`);
  const name = named[0] ?? 'jlh';
  if (name === 'script_heuristic') throw dslError('[significant_terms] [script_heuristic] is not supported: scripts are not');
  const body = options[name] === undefined ? {} : expectObject(options[name], name);
  switch (name) {
    case 'jlh':
    case 'percentage':
      checkKeys(body, [], name);
      return { kind: name };
    case 'gnd':
      checkKeys(body, ['background_is_superset'], name);
      return { kind: name, backgroundIsSuperset: readFlag(body, 'background_is_superset', name, true) };
    case 'mutual_information':
    case 'chi_square':
      checkKeys(body, ['include_negatives', 'background_is_superset'], name);
      return {
        kind: name,
        includeNegatives: readFlag(body, 'include_negatives', name, false),
        backgroundIsSuperset: readFlag(body, 'background_is_superset', name, true),
      };
  }
}

/** The score of a term with `subsetDf` of `subsetSize` foreground docs and `supersetDf` of `supersetSize` background docs. */
export function significanceScore(heuristic: SignificanceHeuristic, subsetDf: number, subsetSize: number, supersetDf: number, supersetSize: number): number {
  switch (heuristic.kind) {
    case 'jlh':
      return jlhScore(subsetDf, subsetSize, supersetDf, supersetSize);
    case 'percentage':
      return supersetDf === 0 ? 0 : subsetDf / supersetDf;
    case 'gnd':
      return gndScore(subsetDf, subsetSize, supersetDf, supersetSize, heuristic.backgroundIsSuperset);
    case 'mutual_information':
    case 'chi_square':
      return contingencyScore(heuristic, subsetDf, subsetSize, supersetDf, supersetSize);
  }
}

/** JLH, the default: the absolute change of the term's probability times its relative change; 0 unless it grew. */
export function jlhScore(subsetDf: number, subsetSize: number, supersetDf: number, supersetSize: number): number {
  if (subsetSize === 0 || supersetSize === 0 || supersetDf === 0) return 0;
  const subsetProbability = subsetDf / subsetSize;
  const supersetProbability = supersetDf / supersetSize;
  const absoluteChange = subsetProbability - supersetProbability;
  if (absoluteChange <= 0) return 0;
  return absoluteChange * (subsetProbability / supersetProbability);
}

/**
 * The 2×2 table of docs by (holds the term, in the foreground), over the docs outside the
 * foreground: when the background includes the foreground, the foreground's counts are taken out
 * of it first.
 */
function contingency(subsetDf: number, subsetSize: number, supersetDf: number, supersetSize: number, backgroundIsSuperset: boolean) {
  const otherDf = backgroundIsSuperset ? supersetDf - subsetDf : supersetDf;
  const otherSize = backgroundIsSuperset ? supersetSize - subsetSize : supersetSize;
  const n11 = subsetDf;
  const n01 = subsetSize - subsetDf;
  const n10 = otherDf;
  const n00 = otherSize - otherDf;
  return { n11, n01, n10, n00, n: n11 + n01 + n10 + n00, inTerm: n11 + n10, outTerm: n01 + n00, inSubset: n11 + n01, outSubset: n10 + n00 };
}

/** Mutual information or chi-square of the term and the foreground; terms rarer in the foreground than outside it score nothing unless `include_negatives`. */
function contingencyScore(
  heuristic: { kind: 'mutual_information' | 'chi_square'; includeNegatives: boolean; backgroundIsSuperset: boolean },
  subsetDf: number,
  subsetSize: number,
  supersetDf: number,
  supersetSize: number,
): number {
  const t = contingency(subsetDf, subsetSize, supersetDf, supersetSize, heuristic.backgroundIsSuperset);
  if (t.n <= 0 || t.n11 < 0 || t.n10 < 0 || t.n01 < 0 || t.n00 < 0) return 0;
  if (!heuristic.includeNegatives && t.inSubset > 0 && t.outSubset > 0 && t.n11 / t.inSubset < t.n10 / t.outSubset) return 0;
  if (heuristic.kind === 'chi_square') {
    const denominator = t.inTerm * t.outTerm * t.inSubset * t.outSubset;
    if (denominator === 0) return 0;
    return (t.n * (t.n11 * t.n00 - t.n10 * t.n01) ** 2) / denominator;
  }
  const cell = (count: number, row: number, column: number): number => (count === 0 || row === 0 || column === 0 ? 0 : (count / t.n) * Math.log2((t.n * count) / (row * column)));
  return cell(t.n11, t.inTerm, t.inSubset) + cell(t.n01, t.outTerm, t.inSubset) + cell(t.n10, t.inTerm, t.outSubset) + cell(t.n00, t.outTerm, t.outSubset);
}

/** Google normalized distance between the term and the foreground, turned into a similarity in (0, 1]. */
function gndScore(subsetDf: number, subsetSize: number, supersetDf: number, supersetSize: number, backgroundIsSuperset: boolean): number {
  const both = subsetDf;
  if (both === 0) return 0;
  const withTerm = backgroundIsSuperset ? supersetDf : supersetDf + subsetDf;
  const total = backgroundIsSuperset ? supersetSize : supersetSize + subsetSize;
  const foreground = subsetSize;
  if (withTerm === foreground && foreground === both) return 1;
  const distance = (Math.max(Math.log(withTerm), Math.log(foreground)) - Math.log(both)) / (Math.log(total) - Math.min(Math.log(withTerm), Math.log(foreground)));
  return Number.isFinite(distance) ? Math.exp(-distance) : 0;
}
