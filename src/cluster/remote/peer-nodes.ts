/**
 * The other nodes of the cluster as this node reaches them for node-level work (the internal node
 * API of protocol.ts): the cluster-wide trash, compaction rows, and `_node/{id}` read or set
 * through any node. Peers come from the catalog's node registry, so a node that left (its lease
 * ended) is no longer one; a registered node that does not answer fails its own call with
 * `node_unavailable` and never the others'.
 */
import type { NodeRecord } from '../catalog.ts';
import { CatalogError } from '../catalog-error.ts';
import type { Coordinator } from '../coordinator.ts';
import type { RemoteNodeMethod } from './protocol.ts';
import type { RemoteTransport } from './remote-transport.ts';

/** Timeout of a node call: a node that is paused or cut off fails its row after this long. */
export const NODE_CALL_TIMEOUT_MS = 10_000;

/** Another node of the cluster, reached through the internal node API. */
export class PeerNode {
  constructor(
    readonly record: NodeRecord,
    private readonly transport: RemoteTransport,
  ) {}

  /** The node's id. */
  get nodeId(): string {
    return this.record.id;
  }

  /** The node's name. */
  get nodeName(): string {
    return this.record.name;
  }

  /** Calls `method` on the node with JSON arguments; resolves with its JSON answer. */
  call(method: RemoteNodeMethod, args: unknown[] = [], timeoutMs = NODE_CALL_TIMEOUT_MS): Promise<unknown> {
    return this.transport.callNode({ id: this.record.id, address: this.record.address }, method, args, { timeoutMs });
  }
}

/** The registered nodes other than this one; see the module comment. */
export class PeerDirectory {
  constructor(
    private readonly coordinator: Pick<Coordinator, 'listNodes'>,
    private readonly transport: RemoteTransport,
    private readonly selfId: string,
  ) {}

  /** Every registered node but this one, sorted by id. */
  peers(): PeerNode[] {
    return this.coordinator
      .listNodes()
      .filter((record) => record.id !== this.selfId)
      .map((record) => new PeerNode(record, this.transport));
  }

  /** The registered node with this id or name (ids first), or undefined; this node included. */
  record(idOrName: string): NodeRecord | undefined {
    const nodes = this.coordinator.listNodes();
    return nodes.find((node) => node.id === idOrName) ?? nodes.find((node) => node.name === idOrName);
  }

  /** The peer with this id or name; `node_not_found` when no registered node has it. */
  peer(idOrName: string): PeerNode {
    const record = this.record(idOrName);
    if (!record) throw new CatalogError('node_not_found', `no node [${idOrName}] in the cluster's registry`);
    return new PeerNode(record, this.transport);
  }
}
