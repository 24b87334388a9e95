/**
 * Helpers of the change-feed tests: typed results, one feed request, a consumer loop that pages
 * through the feed with a small limit, and a line reader for the streaming styles.
 */
import { request } from 'undici';
import { call } from './harness.ts';

/** One result of the feed. */
export interface ChangeResult {
  seq: string | null;
  id: string;
  op: 'index' | 'update' | 'delete';
  version: number;
  changes: Array<{ rev: string }>;
  deleted?: true;
  doc?: Record<string, unknown>;
}

/** The body of a normal or longpoll feed. */
export interface ChangesBody {
  results: ChangeResult[];
  last_seq: string;
  pending: number;
}

/** `GET /{collection}/_changes` with query parameters; fails unless the answer is 200. */
export async function changes(server: { url: string }, collection: string, params: Record<string, string | number> = {}): Promise<ChangesBody & { text: string }> {
  const query = new URLSearchParams(Object.entries(params).map(([key, value]) => [key, String(value)])).toString();
  const response = await call<ChangesBody>(server, 'GET', `/${collection}/_changes${query === '' ? '' : `?${query}`}`);
  if (response.status !== 200) throw new Error(`_changes answered ${response.status}: ${response.text}`);
  return { ...response.body, text: response.text };
}

/** Pages through the feed from `since` with `limit` until a page comes back empty. */
export async function readToEnd(server: { url: string }, collection: string, since: string, limit: number): Promise<{ results: ChangeResult[]; lastSeq: string }> {
  const results: ChangeResult[] = [];
  let cursor = since;
  for (;;) {
    const page = await changes(server, collection, { since: cursor, limit });
    results.push(...page.results);
    cursor = page.last_seq;
    if (page.results.length === 0) return { results, lastSeq: cursor };
  }
}

/** `id op version` of a result, for comparing sequences. */
export function summary(result: ChangeResult): string {
  return `${result.id} ${result.op} ${result.version}`;
}

/** An open streaming feed: its lines as they arrive. */
export interface LineStream {
  status: number;
  contentType: string;
  /** The next line (without its newline), or null at the end of the body. */
  nextLine(timeoutMs?: number): Promise<string | null>;
  /** Disconnects. */
  close(): void;
}

/** Opens a streaming feed (`continuous` or `eventsource`) and reads it line by line. */
export async function openLineStream(server: { url: string }, path: string, headers: Record<string, string> = {}): Promise<LineStream> {
  const controller = new AbortController();
  const response = await request(`${server.url}${path}`, { method: 'GET', signal: controller.signal, headers });
  const iterator = response.body[Symbol.asyncIterator]();
  let buffered = '';
  let ended = false;
  const nextLine = async (timeoutMs = 5000): Promise<string | null> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const newline = buffered.indexOf('\n');
      if (newline >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        return line;
      }
      if (ended) {
        const rest = buffered;
        buffered = '';
        return rest === '' ? null : rest;
      }
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no line within ${timeoutMs} ms`)), Math.max(1, deadline - Date.now()));
      });
      try {
        const chunk = await Promise.race([iterator.next(), timeout]);
        if (chunk.done) ended = true;
        else buffered += Buffer.from(chunk.value as Uint8Array).toString('utf8');
      } finally {
        clearTimeout(timer);
      }
    }
  };
  return {
    status: response.statusCode,
    contentType: String(response.headers['content-type'] ?? ''),
    nextLine,
    close: () => controller.abort(),
  };
}
