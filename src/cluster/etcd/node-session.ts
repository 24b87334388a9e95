/**
 * One registered node's presence in etcd: a lease, its `nodes/<id>` record and its candidacy in
 * the master election, both bound to that lease and put in one transaction.
 *
 * Election, as etcd's own (Go `concurrency.Election`): campaign = create `election/master/<lease
 * id hex>` with the node id as value, on the node's lease; the master is the candidate whose key
 * was created first; resign = delete the key; observe = follow the lowest create revision, which
 * every node does through its catalog watch (`CatalogView.leader`). etcd3 1.1.2's `Campaign` and
 * `observe()` are not used: `observe()` can report the last of several candidates that appear
 * together, and a resigned campaign keeps a watch that outlives the client.
 *
 * Keepalive: one `keepaliveOnce` every third of the TTL. Only etcd decides that the lease is
 * gone (it answers TTL 0 or "lease not found"); then the node registers again with a new lease
 * and `startedAt`, and campaigns again. While etcd cannot be reached, the session keeps trying.
 */
import type { Logger } from 'pino';
import { EtcdLeaseInvalidError, type Etcd3, type Lease } from 'etcd3';
import type { NodeRecord } from '../catalog.ts';
import type { NodeRegistration } from '../coordinator.ts';
import type { EtcdLayout } from './etcd-layout.ts';

const RETRY_DELAY_MS = 1_000;

/** A node's registry record and election candidacy (see the module comment). */
export class NodeSession {
  private lease: Lease | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** This node's election key while it campaigns, else null. */
  candidateKey: string | null = null;
  /** When etcd last confirmed the lease (registration or keepalive), epoch millis; 0 before. */
  lastContactAt = 0;
  /** When the request etcd last confirmed was sent: the lease lives at least its TTL from then. */
  private confirmedSentAt = 0;

  constructor(
    private readonly client: Etcd3,
    private readonly layout: EtcdLayout,
    readonly registration: NodeRegistration,
    private readonly ttlSeconds: number,
    private readonly now: () => number,
    private readonly logger?: Logger,
  ) {}

  /** Grants a lease, then puts the node's record and its candidacy on it; resolves with the etcd revision. */
  async register(): Promise<number> {
    const lease = this.client.lease(this.ttlSeconds, { autoKeepAlive: false });
    const sentAt = Date.now();
    try {
      const leaseId = await lease.grant();
      const record: NodeRecord = { ...this.registration, roles: [...this.registration.roles], startedAt: this.now() };
      const candidateKey = `${this.layout.candidates}${BigInt(leaseId).toString(16)}`;
      const response = await this.client.kv.txn({
        compare: [{ key: Buffer.from(candidateKey), target: 'Create', result: 'Equal', create_revision: 0 }],
        success: [
          { request_put: { key: Buffer.from(this.layout.node(this.registration.id)), value: Buffer.from(JSON.stringify(record)), lease: leaseId } },
          { request_put: { key: Buffer.from(candidateKey), value: Buffer.from(this.registration.id), lease: leaseId } },
        ],
      });
      if (!response.succeeded) throw new Error(`election key ${candidateKey} already exists`);
      if (this.stopped) {
        await lease.revoke().catch(() => undefined);
        throw new Error('the node session was closed while registering');
      }
      this.lease = lease;
      this.lastContactAt = Date.now();
      this.confirmedSentAt = sentAt;
      this.candidateKey = candidateKey;
      this.schedule(() => this.keepAlive(lease), this.keepAliveInterval());
      return Number(response.header.revision);
    } catch (error) {
      lease.release();
      throw error;
    }
  }

  /** Leaves the election (master hands over), then revokes the lease (the node leaves the registry). */
  async revoke(): Promise<void> {
    this.stop();
    const lease = this.lease;
    const candidateKey = this.candidateKey;
    this.lease = null;
    this.candidateKey = null;
    const resigned = candidateKey === null ? null : this.client.kv.deleteRange({ key: Buffer.from(candidateKey) }).then(() => null, (error: unknown) => error);
    const resignError = await resigned;
    await lease?.revoke();
    if (resignError) throw resignError;
  }

  /** Stops heartbeating without telling etcd; the lease then expires. */
  abandon(): void {
    this.stop();
    this.lease?.release();
    this.lease = null;
    this.candidateKey = null;
  }

  /**
   * Null while etcd confirms the lease on time; else since when it has not (the first keepalive
   * that went unanswered), by which time the lease may have ended.
   */
  overdueSince(now: number): number | null {
    if (this.lastContactAt === 0) return null;
    const due = this.lastContactAt + 2 * this.keepAliveInterval();
    return now > due ? this.lastContactAt + this.keepAliveInterval() : null;
  }

  /**
   * Until when the lease certainly lives: etcd counts its TTL from a keepalive's arrival, which is
   * after it was sent; a tenth of the TTL is kept back for clocks that drift apart. 0 while no
   * lease is held.
   */
  validUntil(): number {
    if (this.lease === null || this.confirmedSentAt === 0) return 0;
    return this.confirmedSentAt + this.ttlSeconds * 900;
  }

  private keepAliveInterval(): number {
    return (this.ttlSeconds * 1000) / 3;
  }

  private async keepAlive(lease: Lease): Promise<void> {
    const sentAt = Date.now();
    try {
      await lease.keepaliveOnce({ deadline: Date.now() + this.keepAliveInterval() });
      this.lastContactAt = Date.now();
      this.confirmedSentAt = sentAt;
    } catch (error) {
      if (this.stopped || this.lease !== lease) return;
      if (error instanceof EtcdLeaseInvalidError) {
        this.logger?.warn({ nodeId: this.registration.id }, 'etcd ended the node lease; registering again');
        this.lease = null;
        this.candidateKey = null;
        this.reregister();
        return;
      }
      this.logger?.debug({ err: error, nodeId: this.registration.id }, 'node lease keepalive failed; retrying');
    }
    if (!this.stopped && this.lease === lease) this.schedule(() => this.keepAlive(lease), this.keepAliveInterval());
  }

  private reregister(): void {
    if (this.stopped) return;
    this.register().then(
      () => this.logger?.info({ nodeId: this.registration.id }, 'node registered again'),
      (error: unknown) => {
        this.logger?.warn({ err: error, nodeId: this.registration.id }, 'cannot register the node again; retrying');
        this.schedule(() => this.reregister(), RETRY_DELAY_MS);
      },
    );
  }

  private schedule(run: () => unknown, delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void run();
    }, delayMs);
  }

  private stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}
