/**
 * A replica copy: reads and searches as any copy, but no client write (those go to the primary;
 * a node whose catalog is behind may still send one here, and must not fork the history), and
 * records from a primary only under the newest primary term this copy knows (fencing: a deposed
 * primary's records are refused). Records are applied one batch at a time, in arrival order.
 */
import { CatalogError } from '../catalog-error.ts';
import type { EngineError } from '../../engine/errors.ts';
import type { WriteOp, WriteResult } from '../../engine/shard/operations.ts';
import type { HistoryPosition, ReplicationRecord, ShardHandle } from '../shard-handle.ts';
import type { PreparedBatch, WriteBatchRequest } from '../write-batch.ts';
import { DelegatingShardHandle } from './delegating-handle.ts';
import type { ShardAddress } from './in-sync-rules.ts';

/** See the module comment. */
export class ReplicaCopy extends DelegatingShardHandle {
  private applying: Promise<unknown> = Promise.resolve();

  constructor(
    inner: ShardHandle,
    private readonly address: ShardAddress,
    /** The newest primary term this copy knows of (from its catalog, or from records). */
    private knownTerm: number,
  ) {
    super(inner);
  }

  /** Raises the known primary term (a catalog change seen here). */
  observeTerm(term: number): void {
    if (term > this.knownTerm) this.knownTerm = term;
  }

  /** Appends a primary's records (see the module comment). */
  applyFromPrimary(term: number, records: readonly ReplicationRecord[]): Promise<HistoryPosition> {
    if (term < this.knownTerm) {
      return Promise.reject(
        new CatalogError('shard_unavailable', `[${this.address.collection}][${this.address.shard}] records of primary term ${term} refused: the current primary term is ${this.knownTerm}`),
      );
    }
    this.knownTerm = term;
    const run = this.applying.then(() => this.inner.applyRecords(records));
    this.applying = run.catch(() => undefined);
    return run;
  }

  /** The copy's position, once the records in flight are applied. */
  async position(term: number): Promise<HistoryPosition> {
    this.observeTerm(term);
    await this.applying;
    return this.inner.historyPosition();
  }

  override write(_op: WriteOp): Promise<WriteResult> {
    return Promise.reject(this.notPrimary());
  }

  override writeBatch(_ops: readonly WriteOp[]): Promise<Array<WriteResult | EngineError>> {
    return Promise.reject(this.notPrimary());
  }

  override prepareBatch(_request: WriteBatchRequest): Promise<PreparedBatch> {
    return Promise.reject(this.notPrimary());
  }

  override writePrepared(_batch: number, _skip: readonly number[]): Promise<Array<WriteResult | EngineError | null>> {
    return Promise.reject(this.notPrimary());
  }

  private notPrimary(): CatalogError {
    return new CatalogError('shard_unavailable', `[${this.address.collection}][${this.address.shard}] the copy on this node is a replica; writes go to the primary`);
  }
}
