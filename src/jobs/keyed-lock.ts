/** First-come, first-served exclusive locks by key (one compaction pass per shard at a time). */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<void>>();

  /** Waits until every earlier holder of `key` released it; resolves with the release function. */
  async acquire(key: string): Promise<() => void> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => held);
    this.tails.set(key, tail);
    await previous;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    };
  }

  /** True while someone holds or waits for `key`. */
  isBusy(key: string): boolean {
    return this.tails.has(key);
  }
}
