/**
 * `GET /_cat/segments[/{target}]`: every on-disk segment of the shard copies this node hosts, with
 * its live and deleted document counts and size, like Elasticsearch's `_cat/segments` (text table
 * or `format=json`, see cat-table.ts). Documents still in a shard's mutable layer are not in any
 * segment until the next epoch; a compaction shows as fewer segments with no deleted documents.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { matchesWildcard } from '../../cluster/names.ts';
import type { SegmentRow } from '../../node/segment-stats.ts';
import { CAT_QUERY, formatBytes, sendCat, type CatTable } from '../cat-table.ts';
import { querySchema } from '../params.ts';
import type { CompactionService } from '../../node/compaction-service.ts';

const SEGMENTS_TABLE: CatTable<SegmentRow> = {
  columns: [
    { name: 'index', description: 'collection name', numeric: false, value: (row) => row.collection },
    { name: 'shard', description: 'shard number', numeric: true, value: (row) => String(row.shard) },
    { name: 'prirep', description: 'primary (p) or replica (r)', numeric: false, value: (row) => (row.primary ? 'p' : 'r') },
    { name: 'node', description: 'name of the node holding the copy', numeric: false, value: (row) => row.nodeName },
    { name: 'id', description: 'id of the node holding the copy', numeric: false, value: (row) => row.nodeId },
    { name: 'shard.uuid', description: 'shard uuid', numeric: false, value: (row) => row.shardUuid },
    { name: 'segment', description: 'segment name', numeric: false, value: (row) => row.segment },
    { name: 'generation', description: 'segment number, higher is newer', numeric: true, value: (row) => String(row.generation) },
    { name: 'docs.count', description: 'live documents', numeric: true, value: (row) => String(row.docs) },
    { name: 'docs.deleted', description: 'deleted documents not yet purged by a merge', numeric: true, value: (row) => String(row.deletedDocs) },
    { name: 'size', description: 'size on disk', numeric: true, value: (row, bytes) => formatBytes(row.bytes, bytes) },
    { name: 'committed', description: 'segment is referenced by the shard manifest', numeric: false, value: () => 'true' },
    { name: 'searchable', description: 'segment is searched', numeric: false, value: () => 'true' },
  ],
  defaultColumns: ['index', 'shard', 'prirep', 'node', 'segment', 'generation', 'docs.count', 'docs.deleted', 'size', 'committed', 'searchable'],
  defaultSort: 'index,shard,generation',
};

const SegmentsQuery = querySchema(CAT_QUERY);

/** What the `_cat/segments` routes need: the compaction service. */
export interface CatSegmentsRouteOptions {
  compaction: CompactionService;
}

/** `_cat/segments` routes. */
export async function catSegmentsRoutes(instance: FastifyInstance, options: CatSegmentsRouteOptions): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { compaction } = options;

  app.get('/_cat/segments', { config: { role: 'monitor' }, schema: { querystring: SegmentsQuery } }, async (request, reply) =>
    sendCat(reply, SEGMENTS_TABLE, (await compaction.segments()).filter((row) => request.authScope.allowsCollection(row.collection)), request.query),
  );
  app.get(
    '/_cat/segments/:target',
    { config: { role: 'monitor' }, schema: { params: Type.Object({ target: Type.String({ minLength: 1 }) }), querystring: SegmentsQuery } },
    async (request, reply) => {
      const patterns = request.params.target.split(',').map((part) => part.trim()).filter((part) => part !== '');
      const all = patterns.some((pattern) => pattern === '_all');
      const rows = (await compaction.segments())
        .filter((row) => request.authScope.allowsCollection(row.collection))
        .filter((row) => all || patterns.some((pattern) => matchesWildcard(pattern, row.collection)));
      return sendCat(reply, SEGMENTS_TABLE, rows, request.query);
    },
  );
}
