/**
 * The trash of another node, reached through the internal node API (`trash.*` methods): the
 * cluster-wide trash service (trash-service.ts) talks to it exactly as to `LocalNodeTrash`. Every
 * argument and answer is plain JSON data; a node that does not answer fails with
 * `node_unavailable`, which the service reports for that node while the others' answers stand.
 */
import type { PeerNode } from '../cluster/remote/peer-nodes.ts';
import type { NodeItemVerification, NodeTrash, NodeTrashListing } from './node-trash.ts';
import type { PurgedItem, TrashIntent } from './trash-store.ts';

/** See the module comment. */
export class RemoteNodeTrash implements NodeTrash {
  constructor(private readonly peer: PeerNode) {}

  /** The node's id. */
  get nodeId(): string {
    return this.peer.nodeId;
  }

  /** The node's name. */
  get nodeName(): string {
    return this.peer.nodeName;
  }

  async list(): Promise<NodeTrashListing> {
    return (await this.peer.call('trash.list')) as NodeTrashListing;
  }

  async prepareDelete(intent: TrashIntent): Promise<void> {
    await this.peer.call('trash.prepareDelete', [intent]);
  }

  async abortDelete(itemId: string): Promise<void> {
    await this.peer.call('trash.abortDelete', [itemId]);
  }

  async finishDelete(itemId: string, revision: number): Promise<void> {
    await this.peer.call('trash.finishDelete', [itemId, revision]);
  }

  async verify(itemId: string): Promise<NodeItemVerification | null> {
    return ((await this.peer.call('trash.verify', [itemId])) ?? null) as NodeItemVerification | null;
  }

  async prepareRestore(itemId: string): Promise<void> {
    await this.peer.call('trash.prepareRestore', [itemId]);
  }

  async abortRestore(itemId: string): Promise<void> {
    await this.peer.call('trash.abortRestore', [itemId]);
  }

  async finishRestore(itemId: string): Promise<void> {
    await this.peer.call('trash.finishRestore', [itemId]);
  }

  async purge(itemId: string): Promise<PurgedItem | null> {
    return ((await this.peer.call('trash.purge', [itemId])) ?? null) as PurgedItem | null;
  }
}
