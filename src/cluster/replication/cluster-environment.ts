/**
 * The replication environment of a node in an etcd cluster: catalog changes through the
 * coordinator, replication calls through the internal node API, primary copies through their
 * remote shard handles, and held files through the transport's downloads.
 */
import { CatalogError } from '../catalog-error.ts';
import type { Coordinator } from '../coordinator.ts';
import { recoveryFilePath } from '../remote/protocol.ts';
import { RemoteShardDirectory } from '../remote/remote-shards.ts';
import type { RemoteTransport } from '../remote/remote-transport.ts';
import type { ReplicationEnvironment } from './copy-roles.ts';

/** See the module comment. */
export function clusterReplication(coordinator: Coordinator, transport: RemoteTransport): ReplicationEnvironment {
  const directory = new RemoteShardDirectory(coordinator, transport);
  const registered = (nodeId: string): { id: string; address: string } => {
    const node = directory.node(nodeId);
    if (!node) throw new CatalogError('node_unavailable', `node [${nodeId}] is not in the cluster's registry`);
    return { id: node.id, address: node.address };
  };
  return {
    coordinator,
    peers: {
      call: async (nodeId, method, args, timeoutMs) => transport.callNode(registered(nodeId), method, args, { timeoutMs }),
    },
    remoteCopy: (nodeId, uuid) => {
      const node = directory.node(nodeId);
      return node ? directory.handle(node, uuid) : null;
    },
    fetchFile: (nodeId, uuid, hold, path, bytes, destination) => transport.download(registered(nodeId), recoveryFilePath(uuid, hold, path), bytes, destination),
  };
}
