/**
 * The trash admin service: listing, verifying, restoring and purging trash items (the routes of
 * src/api/routes/trash.ts), over the cluster-wide TrashService of src/trash. Each runs as a
 * tracked request. Moving things into the trash is the collection service's delete.
 */
import type { PurgeAllResponse, PurgeResponse, RestoreResponse, TrashService } from '../trash/trash-service.ts';
import type { TrashListView, VerifyView } from '../trash/trash-views.ts';
import type { RequestTracker } from './request-tracker.ts';

/** Trash operations of the node; see the module comment. */
export class TrashAdminService {
  constructor(
    private readonly trash: TrashService,
    private readonly requests: RequestTracker,
  ) {}

  /** `GET /_cluster/trash`. */
  list(): Promise<TrashListView> {
    return this.requests.track(() => this.trash.list());
  }

  /** `POST /_cluster/trash/{item_id}/_verify` (read-only). */
  verify(itemId: string): Promise<VerifyView> {
    return this.requests.track(() => this.trash.verify(itemId));
  }

  /** `POST /_cluster/trash/{item_id}/_restore` with the optional body `{"rename_to": ...}`. */
  restore(itemId: string, body: unknown): Promise<RestoreResponse> {
    return this.requests.track(() => this.trash.restore(itemId, body));
  }

  /** `DELETE /_cluster/trash/{item_id}`. */
  purge(itemId: string): Promise<PurgeResponse> {
    return this.requests.track(() => this.trash.purge(itemId));
  }

  /** `DELETE /_cluster/trash`. */
  empty(): Promise<PurgeAllResponse> {
    return this.requests.track(() => this.trash.purgeAll());
  }
}
