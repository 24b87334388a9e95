/** `GET /{collection}/_recovery`: the last recovery of each replica copy (src/node/recovery-service.ts). */
import type { FastifyInstance } from 'fastify';
import type { RecoveryService } from '../../node/recovery-service.ts';
import { CollectionParams, querySchema } from '../params.ts';

const NoQuery = querySchema({});

/** What the recovery route needs. */
export interface RecoveryRouteOptions {
  recoveries: RecoveryService;
}

/** The recovery route. */
export async function recoveryRoutes(instance: FastifyInstance, options: RecoveryRouteOptions): Promise<void> {
  instance.get<{ Params: { collection: string } }>(
    '/:collection/_recovery',
    { config: { role: 'monitor', collectionTarget: true }, schema: { params: CollectionParams, querystring: NoQuery } },
    async (request) => options.recoveries.collection(request.params.collection),
  );
}
