/** The timing tree of ES `profile` output, shared by the query and aggregation profiles. */

/** One node of a profile, as ES renders it: nanoseconds per operation and the call counts. */
export interface ProfileTree {
  type: string;
  description: string;
  time_in_nanos: number;
  breakdown: Record<string, number>;
  children?: ProfileTree[];
}

/** Collects one node's timings (milliseconds internally) and call counts for its operations. */
export class ProfileNode<Operation extends string> {
  private readonly times = new Map<Operation, number>();
  private readonly counts = new Map<Operation, number>();
  readonly children: ProfileNode<Operation>[] = [];

  constructor(
    /** The class of what is profiled (an aggregator's is known once it is built). */
    public type: string,
    readonly description: string,
    private readonly operations: readonly Operation[],
  ) {}

  /** Adds one call of `operation` that started at `started` (`performance.now()`). */
  add(operation: Operation, started: number): void {
    this.times.set(operation, (this.times.get(operation) ?? 0) + performance.now() - started);
    this.counts.set(operation, (this.counts.get(operation) ?? 0) + 1);
  }

  /** The node and its children; a node's time is the sum of its breakdown, its children's included. */
  render(): ProfileTree {
    const breakdown: Record<string, number> = {};
    let total = 0;
    for (const operation of this.operations) {
      const nanos = Math.round((this.times.get(operation) ?? 0) * 1e6);
      breakdown[operation] = nanos;
      breakdown[`${operation}_count`] = this.counts.get(operation) ?? 0;
      total += nanos;
    }
    const profile: ProfileTree = { type: this.type, description: this.description, time_in_nanos: total, breakdown };
    if (this.children.length > 0) profile.children = this.children.map((child) => child.render());
    return profile;
  }
}
