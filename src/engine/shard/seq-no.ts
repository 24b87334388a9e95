/**
 * The one translation between a shard's operation sequence numbers and the `_seq_no` clients see.
 *
 * A shard numbers its operations from 1: 0 means "nothing yet" to the write-ahead log, epoch
 * checkpoints, the change feed and its cursors, and the copies of a shard compare these numbers.
 * OpenSearch numbers a shard's operations from 0, and its clients rely on that (`if_seq_no=0`
 * after the first write). So the `_seq_no` of a response is the operation's sequence number
 * minus one, and `if_seq_no` is turned back into one before it reaches a shard. The node's
 * document layer calls these two functions where it reads a request and renders a response
 * (src/node/documents.ts, src/node/search.ts), and the version-conflict reason quotes numbers
 * through them; nothing else adds or subtracts.
 */

/** The `_seq_no` clients see for an operation sequence number. */
export function documentSeqNo(operationSeq: number): number {
  return operationSeq - 1;
}

/** The operation sequence number an `if_seq_no` from a client stands for. */
export function operationSeq(documentSeqNo: number): number {
  return documentSeqNo + 1;
}
