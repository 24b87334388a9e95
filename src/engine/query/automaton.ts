/**
 * Finite automata for the `wildcard` and `regexp` queries. A pattern (regexp-syntax.ts) is a tree
 * of `PatternNode`s; it is compiled to a Thompson NFA (one start, one accepting state, epsilon
 * edges and code point range edges), then determinized by subset construction into a `Dfa` whose
 * transitions are disjoint code point intervals. Matching a term walks the DFA once: O(term
 * length · log transitions), whatever the pattern, so no input backtracks. Determinization is the
 * only costly step and it is bounded three ways — NFA states, DFA states (`max_determinized_states`)
 * and total work — each past its bound a `too_complex_to_determinize` error (400), as Lucene's
 * TooComplexToDeterminizeException.
 */
import { EngineError } from '../errors.ts';

/** Largest Unicode code point. */
export const MAX_CODE_POINT = 0x10ffff;

/** A pattern tree node; a `concat` without parts matches the empty string. */
export type PatternNode =
  | { kind: 'chars'; ranges: ReadonlyArray<readonly [number, number]> }
  | { kind: 'concat'; parts: PatternNode[] }
  | { kind: 'union'; parts: PatternNode[] }
  | { kind: 'repeat'; node: PatternNode; min: number; max: number }
  | { kind: 'nothing' };

/** Default bound on DFA states (ES `max_determinized_states`). */
export const DEFAULT_MAX_DETERMINIZED_STATES = 10_000;

/** Most NFA states a pattern may compile to (bounds repetitions such as `(a{1000}){1000}`). */
export const MAX_NFA_STATES = 100_000;

/** Most elementary steps determinization may take (interval checks plus closure visits). */
export const MAX_DETERMINIZE_WORK = 20_000_000;

/** The error for a pattern whose automaton would exceed a bound. */
export function tooComplex(nfaStates: number, nfaTransitions: number, maxStates: number): EngineError {
  return new EngineError(
    'too_complex_to_determinize',
    `Determinizing automaton with ${nfaStates} states and ${nfaTransitions} transitions would result in more than ${maxStates} states.`,
  );
}

/**
 * NFA under construction: per state, epsilon targets and flat (low, high, target) triples. Pattern
 * trees compile into it (Thompson's construction); other automata (Levenshtein's, fuzzy-automaton.ts)
 * add their states and edges directly, then `determinizeNfa`.
 */
export class Nfa {
  readonly epsilons: number[][] = [];
  readonly ranges: number[][] = [];
  transitions = 0;

  constructor(private readonly maxDeterminizedStates: number) {}

  /** Adds a state and returns its number; too_complex_to_determinize past MAX_NFA_STATES. */
  addState(): number {
    if (this.epsilons.length >= MAX_NFA_STATES) throw tooComplex(this.epsilons.length, this.transitions, this.maxDeterminizedStates);
    this.epsilons.push([]);
    this.ranges.push([]);
    return this.epsilons.length - 1;
  }

  /** Adds an edge that consumes nothing. */
  addEpsilon(from: number, to: number): void {
    this.epsilons[from]!.push(to);
    this.transitions++;
  }

  /** Adds an edge consuming one code point in [low, high]. */
  addRange(from: number, low: number, high: number, to: number): void {
    this.ranges[from]!.push(low, high, to);
    this.transitions++;
  }

  /** Compiles a node to a fragment with one entry and one exit state (iterative over concatenations). */
  compile(node: PatternNode): [number, number] {
    switch (node.kind) {
      case 'chars': {
        const start = this.addState();
        const end = this.addState();
        for (const [low, high] of node.ranges) this.addRange(start, low, high, end);
        return [start, end];
      }
      case 'nothing':
        return [this.addState(), this.addState()];
      case 'concat': {
        const start = this.addState();
        let end = start;
        for (const part of node.parts) {
          const [partStart, partEnd] = this.compile(part);
          this.addEpsilon(end, partStart);
          end = partEnd;
        }
        return [start, end];
      }
      case 'union': {
        const start = this.addState();
        const end = this.addState();
        for (const part of node.parts) {
          const [partStart, partEnd] = this.compile(part);
          this.addEpsilon(start, partStart);
          this.addEpsilon(partEnd, end);
        }
        return [start, end];
      }
      case 'repeat': {
        const start = this.addState();
        let end = start;
        for (let copy = 0; copy < node.min; copy++) {
          const [partStart, partEnd] = this.compile(node.node);
          this.addEpsilon(end, partStart);
          end = partEnd;
        }
        if (node.max === Infinity) {
          const loop = this.addState();
          const [partStart, partEnd] = this.compile(node.node);
          this.addEpsilon(end, loop);
          this.addEpsilon(loop, partStart);
          this.addEpsilon(partEnd, loop);
          return [start, loop];
        }
        const exit = this.addState();
        for (let copy = node.min; copy < node.max; copy++) {
          const [partStart, partEnd] = this.compile(node.node);
          this.addEpsilon(end, partStart);
          this.addEpsilon(end, exit);
          end = partEnd;
        }
        this.addEpsilon(end, exit);
        return [start, exit];
      }
    }
  }
}

/** Options of `compilePattern`. */
export interface AutomatonLimits {
  /** Most DFA states (ES `max_determinized_states`). */
  maxDeterminizedStates?: number;
}

/** A deterministic automaton over code points; transitions of a state are sorted, disjoint intervals. */
export class Dfa {
  constructor(
    private readonly accepting: Uint8Array,
    private readonly lows: readonly Int32Array[],
    private readonly highs: readonly Int32Array[],
    private readonly targets: readonly Int32Array[],
    /** False when no string matches (the start state cannot reach an accepting one). */
    readonly matchesAnything: boolean,
  ) {}

  /** Number of (live) states. */
  get stateCount(): number {
    return this.accepting.length;
  }

  /** Whether the whole `text` is accepted; stops at the first code point leaving the automaton. */
  matches(text: string): boolean {
    if (!this.matchesAnything) return false;
    let state = 0;
    for (let index = 0; index < text.length; index++) {
      const codePoint = text.codePointAt(index)!;
      if (codePoint > 0xffff) index++;
      state = this.step(state, codePoint);
      if (state < 0) return false;
    }
    return this.accepting[state] === 1;
  }

  /**
   * Where a scan of the sorted term dictionary should go after `term` was rejected: the smallest
   * string above `term` that the automaton may accept or extend (a seek target: the terms between
   * cannot match); null when no term above can match; undefined when `term` or the target leaves
   * the Basic Multilingual Plane (code point and UTF-16 orders differ there: read on instead).
   */
  nextCandidate(term: string): string | null | undefined {
    if (!this.matchesAnything) return null;
    const states = [0];
    let read = 0;
    for (; read < term.length; read++) {
      const unit = term.charCodeAt(read);
      if (unit >= 0xd800 && unit <= 0xdfff) return undefined;
      const next = this.step(states[read]!, unit);
      if (next < 0) break;
      states.push(next);
    }
    if (read === term.length) {
      const label = this.labelAbove(states[read]!, -1);
      return label < 0 ? this.backtrack(term, states, read - 1) : label >= 0xd800 ? undefined : term + String.fromCharCode(label);
    }
    return this.backtrack(term, states, read);
  }

  /** The smallest `prefix + c` with c above `term[position]` that a state on the path can read, trying shorter prefixes in turn. */
  private backtrack(term: string, states: readonly number[], from: number): string | null | undefined {
    for (let position = from; position >= 0; position--) {
      const label = this.labelAbove(states[position]!, term.charCodeAt(position));
      if (label >= 0xd800) return undefined;
      if (label >= 0) return term.slice(0, position) + String.fromCharCode(label);
    }
    return null;
  }

  /** The smallest code point above `after` that `state` has a transition for, or -1. */
  private labelAbove(state: number, after: number): number {
    const lows = this.lows[state]!;
    const highs = this.highs[state]!;
    for (let edge = 0; edge < lows.length; edge++) if (highs[edge]! > after) return Math.max(lows[edge]!, after + 1);
    return -1;
  }

  /** The state after `codePoint` from `state`, or -1. */
  private step(state: number, codePoint: number): number {
    const lows = this.lows[state]!;
    let low = 0;
    let high = lows.length - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      if (lows[middle]! <= codePoint) low = middle + 1;
      else high = middle - 1;
    }
    if (high < 0 || this.highs[state]![high]! < codePoint) return -1;
    return this.targets[state]![high]!;
  }

  /** The text every accepted string starts with (for seeking the term dictionary). */
  literalPrefix(): string {
    if (!this.matchesAnything) return '';
    let prefix = '';
    const visited = new Set<number>();
    let state = 0;
    while (this.accepting[state] === 0 && !visited.has(state)) {
      visited.add(state);
      const lows = this.lows[state]!;
      if (lows.length !== 1 || lows[0] !== this.highs[state]![0]) break;
      prefix += String.fromCodePoint(lows[0]!);
      state = this.targets[state]![0]!;
    }
    return prefix;
  }
}

/** Compiles a pattern tree to a DFA, or throws `too_complex_to_determinize` past a bound. */
export function compilePattern(node: PatternNode, limits: AutomatonLimits = {}): Dfa {
  const maxStates = limits.maxDeterminizedStates ?? DEFAULT_MAX_DETERMINIZED_STATES;
  const nfa = new Nfa(maxStates);
  const [start, accept] = nfa.compile(node);
  return determinize(nfa, start, accept, maxStates);
}

/** Determinizes an NFA built state by state (one start, one accepting state), within the same bounds as patterns. */
export function determinizeNfa(nfa: Nfa, start: number, accept: number, limits: AutomatonLimits = {}): Dfa {
  return determinize(nfa, start, accept, limits.maxDeterminizedStates ?? DEFAULT_MAX_DETERMINIZED_STATES);
}

/** Subset construction; states unreachable to acceptance are dropped at the end. */
function determinize(nfa: Nfa, start: number, accept: number, maxStates: number): Dfa {
  const marks = new Int32Array(nfa.epsilons.length);
  let generation = 0;
  let work = 0;
  const charge = (amount: number): void => {
    work += amount;
    if (work > MAX_DETERMINIZE_WORK) throw tooComplex(nfa.epsilons.length, nfa.transitions, maxStates);
  };
  /** Epsilon closure of `seeds`, sorted. */
  const closure = (seeds: Iterable<number>): number[] => {
    generation++;
    const members: number[] = [];
    const stack: number[] = [];
    for (const seed of seeds) {
      if (marks[seed] === generation) continue;
      marks[seed] = generation;
      stack.push(seed);
    }
    while (stack.length > 0) {
      const state = stack.pop()!;
      members.push(state);
      for (const next of nfa.epsilons[state]!) {
        if (marks[next] === generation) continue;
        marks[next] = generation;
        stack.push(next);
      }
    }
    charge(members.length);
    // Only states with range edges (and the accepting state) distinguish subsets.
    return members.filter((state) => state === accept || nfa.ranges[state]!.length > 0).sort((left, right) => left - right);
  };

  const ids = new Map<string, number>();
  const subsets: number[][] = [];
  const intern = (members: number[]): number => {
    const key = members.join(',');
    let id = ids.get(key);
    if (id === undefined) {
      id = subsets.length;
      if (id >= maxStates) throw tooComplex(nfa.epsilons.length, nfa.transitions, maxStates);
      ids.set(key, id);
      subsets.push(members);
    }
    return id;
  };
  intern(closure([start]));

  const lows: number[][] = [];
  const highs: number[][] = [];
  const targets: number[][] = [];
  for (let id = 0; id < subsets.length; id++) {
    const edges: number[] = [];
    for (const state of subsets[id]!) for (const value of nfa.ranges[state]!) edges.push(value);
    const points = new Set<number>();
    for (let edge = 0; edge < edges.length; edge += 3) {
      points.add(edges[edge]!);
      points.add(edges[edge + 1]! + 1);
    }
    const sorted = [...points].sort((left, right) => left - right);
    charge(sorted.length * (edges.length / 3 + 1));
    const stateLows: number[] = [];
    const stateHighs: number[] = [];
    const stateTargets: number[] = [];
    for (let index = 0; index + 1 < sorted.length; index++) {
      const low = sorted[index]!;
      const high = sorted[index + 1]! - 1;
      const seeds: number[] = [];
      for (let edge = 0; edge < edges.length; edge += 3) {
        if (edges[edge]! <= low && edges[edge + 1]! >= high) seeds.push(edges[edge + 2]!);
      }
      if (seeds.length === 0) continue;
      const target = intern(closure(seeds));
      const last = stateTargets.length - 1;
      if (last >= 0 && stateTargets[last] === target && stateHighs[last] === low - 1) stateHighs[last] = high;
      else {
        stateLows.push(low);
        stateHighs.push(high);
        stateTargets.push(target);
      }
    }
    lows.push(stateLows);
    highs.push(stateHighs);
    targets.push(stateTargets);
  }
  return pruneDead(
    subsets.map((members) => members.includes(accept)),
    lows,
    highs,
    targets,
  );
}

/** Drops states that cannot reach acceptance and renumbers the rest (the start stays 0). */
function pruneDead(accepting: boolean[], lows: number[][], highs: number[][], targets: number[][]): Dfa {
  const count = accepting.length;
  const incoming: number[][] = Array.from({ length: count }, () => []);
  for (let state = 0; state < count; state++) for (const target of targets[state]!) incoming[target]!.push(state);
  const live = new Uint8Array(count);
  const pending: number[] = [];
  for (let state = 0; state < count; state++) {
    if (accepting[state]) {
      live[state] = 1;
      pending.push(state);
    }
  }
  while (pending.length > 0) {
    for (const source of incoming[pending.pop()!]!) {
      if (live[source] === 0) {
        live[source] = 1;
        pending.push(source);
      }
    }
  }
  if (live[0] === 0) return new Dfa(new Uint8Array(1), [new Int32Array(0)], [new Int32Array(0)], [new Int32Array(0)], false);
  const renumbered = new Int32Array(count).fill(-1);
  let next = 0;
  for (let state = 0; state < count; state++) if (live[state] === 1) renumbered[state] = next++;
  const keptAccepting = new Uint8Array(next);
  const keptLows: Int32Array[] = [];
  const keptHighs: Int32Array[] = [];
  const keptTargets: Int32Array[] = [];
  for (let state = 0; state < count; state++) {
    if (live[state] === 0) continue;
    keptAccepting[renumbered[state]!] = accepting[state] ? 1 : 0;
    const edgeLows: number[] = [];
    const edgeHighs: number[] = [];
    const edgeTargets: number[] = [];
    targets[state]!.forEach((target, edge) => {
      if (live[target] === 0) return;
      edgeLows.push(lows[state]![edge]!);
      edgeHighs.push(highs[state]![edge]!);
      edgeTargets.push(renumbered[target]!);
    });
    keptLows.push(Int32Array.from(edgeLows));
    keptHighs.push(Int32Array.from(edgeHighs));
    keptTargets.push(Int32Array.from(edgeTargets));
  }
  return new Dfa(keptAccepting, keptLows, keptHighs, keptTargets, true);
}
