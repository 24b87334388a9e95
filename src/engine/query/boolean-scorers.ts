/**
 * Scorers combining sub-scorers: conjunction (leapfrog, cheapest first), disjunction (with
 * minimum-should-match), dis_max, required-with-exclusion and required-with-optional.
 * Compound scores are summed in clause order so every execution path yields the same floats.
 */
import { alignConjunction } from './leapfrog.ts';
import { NO_MORE_DOCS } from '../segment/leaf-reader.ts';
import { Scorer } from './scorer.ts';

/** Smallest window end over scorers that still have docs. */
function shallowAdvanceAll(scorers: readonly Scorer[], target: number): number {
  let end = NO_MORE_DOCS;
  for (let i = 0; i < scorers.length; i++) {
    const scorer = scorers[i]!;
    if (scorer.doc === NO_MORE_DOCS) continue;
    const blockEnd = scorer.shallowAdvance(scorer.doc > target ? scorer.doc : target);
    if (blockEnd < end) end = blockEnd;
  }
  return end;
}

/** Sum of the bounds of scorers that still have docs. */
function sumMaxScores(scorers: readonly Scorer[], upTo: number): number {
  let sum = 0;
  for (let i = 0; i < scorers.length; i++) {
    const scorer = scorers[i]!;
    if (scorer.doc !== NO_MORE_DOCS) sum += scorer.maxScore(upTo);
  }
  return sum;
}

/** Docs matching every clause; the cheapest clause leads and the others leapfrog to it. */
export class ConjunctionScorer extends Scorer {
  private readonly byCost: Scorer[];

  constructor(private readonly clauses: Scorer[]) {
    super();
    this.byCost = [...clauses].sort((left, right) => left.cost() - right.cost());
  }

  nextDoc(): number {
    return this.align(this.byCost[0]!.nextDoc());
  }

  advance(target: number): number {
    return this.align(this.byCost[0]!.advance(target));
  }

  private align(candidate: number): number {
    return (this.doc = alignConjunction(this.byCost, candidate));
  }

  score(): number {
    let sum = 0;
    const clauses = this.clauses;
    for (let i = 0; i < clauses.length; i++) sum += clauses[i]!.score();
    return sum;
  }

  cost(): number {
    return this.byCost[0]!.cost();
  }

  override shallowAdvance(target: number): number {
    return shallowAdvanceAll(this.clauses, target);
  }

  maxScore(upTo: number): number {
    return sumMaxScores(this.clauses, upTo);
  }
}

/** Docs matching at least `minimumShouldMatch` (>= 1) clauses; score is the sum of matching clauses. */
export class DisjunctionScorer extends Scorer {
  private readonly totalCost: number;

  constructor(
    protected readonly clauses: Scorer[],
    private readonly minimumShouldMatch = 1,
  ) {
    super();
    let cost = 0;
    for (const clause of clauses) cost += clause.cost();
    this.totalCost = cost;
  }

  nextDoc(): number {
    return this.moveTo(this.doc + 1);
  }

  advance(target: number): number {
    return this.moveTo(target);
  }

  private moveTo(firstTarget: number): number {
    const clauses = this.clauses;
    let target = firstTarget;
    for (;;) {
      let min = NO_MORE_DOCS;
      for (let i = 0; i < clauses.length; i++) {
        const clause = clauses[i]!;
        let doc = clause.doc;
        if (doc < target) doc = doc === target - 1 ? clause.nextDoc() : clause.advance(target);
        if (doc < min) min = doc;
      }
      if (min === NO_MORE_DOCS || this.minimumShouldMatch <= 1) return (this.doc = min);
      let matching = 0;
      for (let i = 0; i < clauses.length; i++) if (clauses[i]!.doc === min) matching++;
      if (matching >= this.minimumShouldMatch) return (this.doc = min);
      target = min + 1;
    }
  }

  score(): number {
    let sum = 0;
    const clauses = this.clauses;
    const doc = this.doc;
    for (let i = 0; i < clauses.length; i++) {
      const clause = clauses[i]!;
      if (clause.doc === doc) sum += clause.score();
    }
    return sum;
  }

  cost(): number {
    return this.totalCost;
  }

  override shallowAdvance(target: number): number {
    return shallowAdvanceAll(this.clauses, target);
  }

  maxScore(upTo: number): number {
    return sumMaxScores(this.clauses, upTo);
  }
}

/** Disjunction scored as max + tieBreaker · (sum − max) of the matching clauses. */
export class DisMaxScorer extends DisjunctionScorer {
  constructor(
    clauses: Scorer[],
    private readonly tieBreaker: number,
  ) {
    super(clauses, 1);
  }

  override score(): number {
    let sum = 0;
    let max = 0;
    const clauses = this.clauses;
    const doc = this.doc;
    for (let i = 0; i < clauses.length; i++) {
      const clause = clauses[i]!;
      if (clause.doc !== doc) continue;
      const score = clause.score();
      sum += score;
      if (score > max) max = score;
    }
    return max + this.tieBreaker * (sum - max);
  }

  override maxScore(upTo: number): number {
    let sum = 0;
    let max = 0;
    for (const clause of this.clauses) {
      if (clause.doc === NO_MORE_DOCS) continue;
      const bound = clause.maxScore(upTo);
      sum += bound;
      if (bound > max) max = bound;
    }
    return (1 - this.tieBreaker) * max + this.tieBreaker * sum;
  }
}

/** Docs of `required` that `excluded` does not match. */
export class ReqExclScorer extends Scorer {
  constructor(
    private readonly required: Scorer,
    private readonly excluded: Scorer,
  ) {
    super();
  }

  nextDoc(): number {
    return this.confirm(this.required.nextDoc());
  }

  advance(target: number): number {
    return this.confirm(this.required.advance(target));
  }

  private confirm(candidate: number): number {
    let doc = candidate;
    while (doc !== NO_MORE_DOCS) {
      let excludedDoc = this.excluded.doc;
      if (excludedDoc < doc) excludedDoc = this.excluded.advance(doc);
      if (excludedDoc !== doc) break;
      doc = this.required.nextDoc();
    }
    return (this.doc = doc);
  }

  score(): number {
    return this.required.score();
  }

  cost(): number {
    return this.required.cost();
  }

  override shallowAdvance(target: number): number {
    return this.required.shallowAdvance(target);
  }

  maxScore(upTo: number): number {
    return this.required.maxScore(upTo);
  }
}

/** Docs of `required`; `optional` adds its score where it also matches. */
export class ReqOptScorer extends Scorer {
  private readonly both: Scorer[];

  constructor(
    private readonly required: Scorer,
    private readonly optional: Scorer,
  ) {
    super();
    this.both = [required, optional];
  }

  nextDoc(): number {
    return (this.doc = this.required.nextDoc());
  }

  advance(target: number): number {
    return (this.doc = this.required.advance(target));
  }

  score(): number {
    const doc = this.doc;
    const requiredScore = this.required.score();
    let optionalDoc = this.optional.doc;
    if (optionalDoc < doc) optionalDoc = this.optional.advance(doc);
    return optionalDoc === doc ? requiredScore + this.optional.score() : requiredScore;
  }

  cost(): number {
    return this.required.cost();
  }

  override shallowAdvance(target: number): number {
    return shallowAdvanceAll(this.both, target);
  }

  maxScore(upTo: number): number {
    return this.required.maxScore(upTo) + (this.optional.doc === NO_MORE_DOCS ? 0 : this.optional.maxScore(upTo));
  }
}
