/** Manual compaction over HTTP: `POST /{collection}/_compact`, then poll `GET /_jobs/{id}` to the end. */
import type { Dispatcher } from 'undici';

const POLL_MS = 200;
const TIMEOUT_MS = 600_000;

/** Compaction response fields the bench reads. */
interface CompactResponse {
  nodes?: Array<{ job_id?: string; status?: string; error?: { reason?: string } }>;
}

/** Job fields the bench reads. */
interface JobResponse {
  state?: string;
  error?: { reason?: string } | string;
}

async function getJson<T>(dispatcher: Dispatcher, method: 'GET' | 'POST', path: string): Promise<{ status: number; body: T }> {
  const response = await dispatcher.request({ method, path });
  const text = await response.body.text();
  return { status: response.statusCode, body: (text ? JSON.parse(text) : {}) as T };
}

/**
 * Compacts a collection and waits for every job to finish. Resolves with the elapsed ms, or
 * rejects with the server's reason when compaction is unavailable or a job fails.
 */
export async function compactCollection(dispatcher: Dispatcher, collection: string): Promise<number> {
  const started = performance.now();
  const answer = await getJson<CompactResponse>(dispatcher, 'POST', `/${collection}/_compact`);
  if (answer.status !== 200) throw new Error(`POST /${collection}/_compact answered ${answer.status}`);
  for (const node of answer.body.nodes ?? []) {
    if (node.status === 'failed' || !node.job_id) throw new Error(`compaction failed: ${node.error?.reason ?? 'no job id'}`);
    for (;;) {
      const job = await getJson<JobResponse>(dispatcher, 'GET', `/_jobs/${encodeURIComponent(node.job_id)}`);
      if (job.status !== 200) throw new Error(`GET /_jobs/${node.job_id} answered ${job.status}`);
      if (job.body.state === 'done') break;
      if (job.body.state === 'failed') throw new Error(`compaction job failed: ${JSON.stringify(job.body.error)}`);
      if (performance.now() - started > TIMEOUT_MS) throw new Error('compaction did not finish in time');
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }
  return performance.now() - started;
}
