/**
 * In-flight request tracking shared by the node's resource services: every request runs through
 * `track`, which refuses new work with `node_closed` once the node is closing, and `close` lets the
 * node wait for the requests still running before it closes shards.
 */
import { NodeError } from './node-error.ts';

/** Counts the requests in flight and refuses new ones once closing; see the module comment. */
export class RequestTracker {
  private closing: Promise<void> | null = null;
  private inFlight = 0;
  private drained: (() => void) | null = null;

  /** Throws `node_closed` once `close` has been called. */
  refuseWhenClosing(): void {
    if (this.closing) throw new NodeError('node_closed', 'the node is shutting down');
  }

  /** Runs one request, counted as in flight until it settles; refused once closing. */
  async track<T>(operation: () => Promise<T>): Promise<T> {
    this.refuseWhenClosing();
    this.inFlight++;
    try {
      return await operation();
    } finally {
      this.inFlight--;
      if (this.inFlight === 0 && this.drained) this.drained();
    }
  }

  /** Refuses new requests from now on; resolves once every in-flight request has settled (idempotent). */
  close(): Promise<void> {
    this.closing ??= this.inFlight > 0 ? new Promise<void>((resolve) => (this.drained = resolve)) : Promise.resolve();
    return this.closing;
  }
}
