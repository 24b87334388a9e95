/**
 * The glue between the router and the internal shard API: `RemoteShardDirectory` gives the router
 * the live nodes (from the catalog's node registry) and one `RemoteShardHandle` per shard copy on
 * another node; `localShardLookup` finds the started local copy an internal call names.
 */
import type { NodeRecord } from '../catalog.ts';
import type { Coordinator } from '../coordinator.ts';
import type { LocalShards } from '../local-shards.ts';
import type { RemoteShards } from '../router.ts';
import type { ShardHandle } from '../shard-handle.ts';
import { RemoteShardHandle } from './remote-shard-handle.ts';
import type { RemoteTransport } from './remote-transport.ts';

/** See the module comment. */
export class RemoteShardDirectory implements RemoteShards {
  private readonly handles = new Map<string, RemoteShardHandle>();

  constructor(
    private readonly coordinator: Pick<Coordinator, 'catalog'>,
    private readonly transport: RemoteTransport,
  ) {}

  /** The registered node `nodeId`, or undefined when it is not in the registry. */
  node(nodeId: string): NodeRecord | undefined {
    const { nodes } = this.coordinator.catalog();
    return Object.hasOwn(nodes, nodeId) ? nodes[nodeId] : undefined;
  }

  /** The handle of copy `uuid` on `node`; a node that comes back at another address gets a new one. */
  handle(node: NodeRecord, uuid: string): ShardHandle {
    const key = `${uuid}@${node.id}`;
    const known = this.handles.get(key);
    if (known !== undefined && known.node.address === node.address) return known;
    const handle = new RemoteShardHandle(uuid, { id: node.id, address: node.address }, this.transport);
    this.handles.set(key, handle);
    return handle;
  }
}

/** The `lookup` of the internal shard route over this node's copies: started copies only. */
export function localShardLookup(shards: Pick<LocalShards, 'collections'>): (uuid: string) => ShardHandle | undefined {
  return (uuid) => {
    for (const hosted of shards.collections()) {
      for (const local of hosted.shards) {
        if (local?.uuid === uuid) return local.state === 'started' && local.handle !== null ? local.handle : undefined;
      }
    }
    return undefined;
  };
}
