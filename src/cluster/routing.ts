/**
 * Document routing: which shard of a collection holds a document. The shard is
 * `murmur3(routing ?? _id) mod number_of_shards`, hashing the key's UTF-8 bytes with seed 0, so
 * every node and every client computes the same answer.
 */
import murmurhash from 'murmurhash';

/** Shard number (0-based) for a routing key (the `routing` parameter, else the document `_id`). */
export function shardFor(routingKey: string, numberOfShards: number): number {
  if (numberOfShards <= 1) return 0;
  return murmurhash.v3(routingKey, 0) % numberOfShards;
}
