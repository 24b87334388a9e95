/**
 * History checker of the replication fault-injection suite: given every write a client sent (with
 * its answer, or none), the change-feed entries read and the document states observed, it says
 * which replication guarantees were broken. Pure functions over plain data, so that it can be
 * tested with hand-made histories.
 *
 * The model. Writes of one document are ordered by their shard `seq`. An acknowledged write has a
 * known seq, result and version; an indeterminate one (no answer, 5xx, timeout) may have happened
 * at any point after it was sent, or never, so per document the checker carries the set of states
 * that some choice of indeterminate writes could produce (each applied at most once), and prunes
 * it with each acknowledged answer (its result and `_version` must follow from the state before
 * it). An observed state must be one of the states possible at the end.
 */

/** The content of a document (flat fields only) and its `_version`, or null when it is absent. */
export type DocState = { version: number; source: Record<string, unknown> } | null;

/** What a write asked for: a full index, a partial update (`doc` merge, then `incr`), a delete. */
export type WriteRequest =
  | { kind: 'index'; source: Record<string, unknown> }
  | { kind: 'update'; doc?: Record<string, unknown>; incr?: { field: string; by: number } }
  | { kind: 'delete' };

/** A shard's answer to an acknowledged write; `seq` is the shard's operation seq (`_seq_no` + 1). */
export interface WriteAck {
  result: 'created' | 'updated' | 'deleted' | 'noop';
  seq: number;
  version: number;
  primaryTerm: number;
}

/** One write as the client saw it; times are the client's monotonic clock (ms). */
export interface WriteRecord {
  opId: string;
  docId: string;
  shard: number;
  request: WriteRequest;
  invokedAt: number;
  completedAt: number;
  /** `ok`: a 2xx answer with seq and version; `rejected`: certainly not applied; else indeterminate. */
  outcome: 'ok' | 'rejected' | 'indeterminate';
  ack?: WriteAck;
  /** The answer (status and error type) or the failure, for diagnostics. */
  answer: string;
}

/** One change-feed result: document, operation, version and the shard seq from its `rev`. */
export interface FeedEntry {
  id: string;
  shard: number;
  op: 'index' | 'update' | 'delete';
  version: number;
  seq: number;
}

/** Most possible states the checker follows for one document before it calls the history ambiguous. */
const MAX_POSSIBLE_STATES = 20_000;

/** A key-sorted JSON text, so that two sources compare equal whatever their key order. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function stateKey(state: DocState): string {
  return state === null ? 'absent' : `${state.version}:${canonical(state.source)}`;
}

/** A state as a short text, for messages. */
export function describeState(state: DocState): string {
  return state === null ? 'absent' : `v${state.version} ${canonical(state.source)}`;
}

/** What a write does to a state: the result it answers and the state after it ('missing': no change). */
export function applyWrite(state: DocState, request: WriteRequest): { result: WriteAck['result'] | 'missing'; state: DocState } {
  if (request.kind === 'index') {
    return { result: state === null ? 'created' : 'updated', state: { version: state === null ? 1 : state.version + 1, source: { ...request.source } } };
  }
  if (state === null) return { result: 'missing', state };
  if (request.kind === 'delete') return { result: 'deleted', state: null };
  const source: Record<string, unknown> = { ...state.source, ...request.doc };
  if (request.incr !== undefined) source[request.incr.field] = Number(source[request.incr.field] ?? 0) + request.incr.by;
  if (canonical(source) === canonical(state.source)) return { result: 'noop', state };
  return { result: 'updated', state: { version: state.version + 1, source } };
}

/** The version a write's record carries (a delete's record has the version after the delete). */
function versionAfter(state: DocState, request: WriteRequest, after: DocState): number {
  if (request.kind === 'delete') return state === null ? 0 : state.version + 1;
  return after?.version ?? 0;
}

/**
 * The possible states of one document, each with the minimal sets (bit masks over the document's
 * indeterminate writes) of writes already applied to reach it. A set that contains another set
 * reaching the same state is dropped: everything that can follow it can follow the smaller one.
 */
class Possibilities {
  readonly byState = new Map<string, { state: DocState; masks: bigint[] }>();
  size = 0;

  /** Adds a way to reach `state`; false when a known way dominates it. */
  add(state: DocState, mask: bigint): boolean {
    const key = stateKey(state);
    const entry = this.byState.get(key) ?? { state, masks: [] };
    if (entry.masks.some((known) => (known & mask) === known)) return false;
    const kept = entry.masks.filter((known) => (mask & known) !== mask);
    this.size += kept.length + 1 - entry.masks.length;
    entry.masks = [...kept, mask];
    this.byState.set(key, entry);
    return true;
  }

  *all(): Generator<{ state: DocState; mask: bigint }> {
    for (const { state, masks } of this.byState.values()) for (const mask of masks) yield { state, mask };
  }
}

/** The writes of one document that the model uses: acknowledged ones by seq, and indeterminate ones. */
function writesOf(writes: readonly WriteRecord[]): { acked: WriteRecord[]; pending: WriteRecord[] } {
  const acked = writes.filter((write) => write.outcome === 'ok' && write.ack!.result !== 'noop').sort((left, right) => left.ack!.seq - right.ack!.seq);
  const pending = writes.filter((write) => write.outcome === 'indeterminate');
  return { acked, pending };
}

/**
 * The states one document may be in after its history, or a violation: an acknowledged answer
 * that no choice of indeterminate writes explains, or a history too ambiguous to follow.
 * Indeterminate writes asking for the same thing are interchangeable, and one sent later is
 * usable wherever an earlier one is not ruled out, so of such a group only the latest sent
 * unapplied one is tried.
 */
export function possibleStates(writes: readonly WriteRecord[]): { states: DocState[] } | { violation: string } {
  const { acked, pending } = writesOf(writes);
  // An indeterminate write comes after every acknowledged write that completed before it was sent.
  const earliestSlot = pending.map((write) => {
    let slot = 0;
    acked.forEach((ack, index) => {
      if (ack.completedAt < write.invokedAt) slot = Math.max(slot, index + 1);
    });
    return slot;
  });
  const sameRequest = pending.map((write) => canonical(write.request));
  let possibilities = new Possibilities();
  possibilities.add(null, 0n);
  for (let slot = 0; slot <= acked.length; slot++) {
    const next = slot < acked.length ? acked[slot]! : undefined;
    const eligible = pending
      .map((write, index) => ({ write, index, bit: 1n << BigInt(index) }))
      .filter(({ write, index }) => earliestSlot[index]! <= slot && (next === undefined || write.invokedAt < next.completedAt))
      .sort((left, right) => right.write.invokedAt - left.write.invokedAt);
    const queue = [...possibilities.all()];
    while (queue.length > 0 && eligible.length > 0) {
      const { state, mask } = queue.pop()!;
      const tried = new Set<string>();
      for (const { write, index, bit } of eligible) {
        if ((mask & bit) !== 0n || tried.has(sameRequest[index]!)) continue;
        tried.add(sameRequest[index]!);
        const effect = applyWrite(state, write.request);
        if (effect.result === 'missing' || effect.result === 'noop') continue;
        if (possibilities.add(effect.state, mask | bit)) queue.push({ state: effect.state, mask: mask | bit });
        if (possibilities.size > MAX_POSSIBLE_STATES) return { violation: `more than ${MAX_POSSIBLE_STATES} possible states: the history is too ambiguous to check` };
      }
    }
    if (next === undefined) break;
    const survivors = new Possibilities();
    for (const { state, mask } of possibilities.all()) {
      const effect = applyWrite(state, next.request);
      if (effect.result !== next.ack!.result) continue;
      if (versionAfter(state, next.request, effect.state) !== next.ack!.version) continue;
      survivors.add(effect.state, mask);
    }
    if (survivors.size === 0) {
      const before = [...possibilities.byState.values()].slice(0, 4).map((entry) => describeState(entry.state)).join(' | ');
      return {
        violation: `acknowledged ${next.opId} (${next.request.kind} → ${next.ack!.result} v${next.ack!.version} seq ${next.ack!.seq}) follows from no possible state; before it: ${before}`,
      };
    }
    possibilities = survivors;
  }
  return { states: [...possibilities.byState.values()].map((entry) => entry.state) };
}

/** Groups writes by document id. */
export function byDocument(writes: readonly WriteRecord[]): Map<string, WriteRecord[]> {
  const grouped = new Map<string, WriteRecord[]>();
  for (const write of writes) {
    const list = grouped.get(write.docId) ?? [];
    list.push(write);
    grouped.set(write.docId, list);
  }
  return grouped;
}

/**
 * Every document's observed state must be one the history allows: the last acknowledged write's
 * effect, or that of indeterminate writes after it. `observed` must hold every id written.
 */
export function checkObservedStates(writes: readonly WriteRecord[], observed: ReadonlyMap<string, DocState>, where: string): string[] {
  const violations: string[] = [];
  for (const [docId, history] of byDocument(writes)) {
    if (!observed.has(docId)) {
      violations.push(`${where}: ${docId} was not read`);
      continue;
    }
    const possible = possibleStates(history);
    if ('violation' in possible) {
      violations.push(`${where}: ${docId}: ${possible.violation}`);
      continue;
    }
    const seen = observed.get(docId)!;
    if (!possible.states.some((state) => stateKey(state) === stateKey(seen))) {
      const allowed = possible.states.slice(0, 4).map(describeState).join(' | ');
      violations.push(`${where}: ${docId} is ${describeState(seen)}; the history allows only ${allowed}${possible.states.length > 4 ? ' | …' : ''}`);
    }
  }
  for (const docId of observed.keys()) {
    if (!writes.some((write) => write.docId === docId) && observed.get(docId) !== null) violations.push(`${where}: ${docId} exists but was never written`);
  }
  return violations;
}

/**
 * Checks of the acknowledged history alone: no two acknowledged writes share a shard seq, the seq
 * order of one document's acknowledged writes agrees with real time, and its versions only grow
 * unless a delete (acknowledged, or indeterminate and possible there) lies between.
 */
export function checkAcknowledged(writes: readonly WriteRecord[]): string[] {
  const violations: string[] = [];
  const bySeq = new Map<string, WriteRecord>();
  for (const write of writes) {
    if (write.outcome !== 'ok' || write.ack!.result === 'noop') continue;
    const key = `${write.shard}:${write.ack!.seq}`;
    const other = bySeq.get(key);
    if (other !== undefined) violations.push(`shard ${write.shard} seq ${write.ack!.seq} acknowledged twice: ${other.opId} (${other.docId}) and ${write.opId} (${write.docId})`);
    else bySeq.set(key, write);
  }
  for (const [docId, history] of byDocument(writes)) {
    const { acked, pending } = writesOf(history);
    let latestInvocation = -Infinity;
    let latestOp = '';
    for (const [index, write] of acked.entries()) {
      if (latestInvocation > write.completedAt) {
        violations.push(`${docId}: ${write.opId} (seq ${write.ack!.seq}) completed before ${latestOp} was sent, yet has a later seq`);
      }
      if (write.invokedAt > latestInvocation) [latestInvocation, latestOp] = [write.invokedAt, write.opId];
      const previous = acked[index - 1];
      if (previous === undefined || previous.ack!.result === 'deleted' || write.ack!.result === 'created') continue;
      if (write.ack!.version > previous.ack!.version) continue;
      const deleteBetween = pending.some((other) => other.request.kind === 'delete' && other.invokedAt < write.completedAt);
      if (!deleteBetween) violations.push(`${docId}: version went from ${previous.ack!.version} (${previous.opId}) to ${write.ack!.version} (${write.opId}) with no delete between`);
    }
  }
  return violations;
}

function feedOpOf(write: WriteRecord): FeedEntry['op'] {
  return write.request.kind === 'index' ? 'index' : write.request.kind === 'delete' ? 'delete' : 'update';
}

/**
 * The change feed read from the start of the collection: no entry twice, no two entries for one
 * shard seq, each acknowledged write exactly once (same id, op and version), entries that match
 * no acknowledged write no more than the indeterminate writes of that document and kind, and per
 * document seqs rising and versions rising by one (back to 1 after a delete).
 */
export function checkFeed(writes: readonly WriteRecord[], entries: readonly FeedEntry[]): string[] {
  const violations: string[] = [];
  const bySeq = new Map<string, FeedEntry>();
  for (const entry of entries) {
    const key = `${entry.shard}:${entry.seq}`;
    const other = bySeq.get(key);
    if (other === undefined) bySeq.set(key, entry);
    else if (canonical(other) === canonical(entry)) violations.push(`feed: entry ${entry.id} shard ${entry.shard} seq ${entry.seq} read twice`);
    else violations.push(`feed: two contents for shard ${entry.shard} seq ${entry.seq}: ${canonical(other)} and ${canonical(entry)}`);
  }
  const matched = new Set<string>();
  for (const write of writes) {
    if (write.outcome !== 'ok' || write.ack!.result === 'noop') continue;
    const key = `${write.shard}:${write.ack!.seq}`;
    const entry = bySeq.get(key);
    if (entry === undefined) {
      violations.push(`feed: acknowledged ${write.opId} (${write.docId} v${write.ack!.version}, shard ${write.shard} seq ${write.ack!.seq}) is missing`);
      continue;
    }
    matched.add(key);
    if (entry.id !== write.docId || entry.version !== write.ack!.version || entry.op !== feedOpOf(write)) {
      violations.push(`feed: shard ${write.shard} seq ${write.ack!.seq} holds ${canonical(entry)}, acknowledged as ${write.opId} ${feedOpOf(write)} ${write.docId} v${write.ack!.version}`);
    }
  }
  const unmatched = new Map<string, number>();
  for (const [key, entry] of bySeq) {
    if (matched.has(key)) continue;
    const kind = `${entry.id}/${entry.op}`;
    unmatched.set(kind, (unmatched.get(kind) ?? 0) + 1);
  }
  for (const [kind, count] of unmatched) {
    const [docId, op] = kind.split('/');
    const possible = writes.filter((write) => write.docId === docId && write.outcome === 'indeterminate' && feedOpOf(write) === op).length;
    if (count > possible) violations.push(`feed: ${count} ${op} entries of ${docId} match no write (${possible} indeterminate ${op} writes could explain them)`);
  }
  const last = new Map<string, FeedEntry>();
  for (const entry of entries) {
    const previous = last.get(entry.id);
    last.set(entry.id, entry);
    const expected = previous === undefined || previous.op === 'delete' ? 1 : previous.version + 1;
    if (previous !== undefined && entry.seq <= previous.seq) violations.push(`feed: ${entry.id} seq ${entry.seq} after seq ${previous.seq}`);
    if (entry.version !== expected || (expected === 1 && entry.op !== 'index')) {
      violations.push(`feed: ${entry.id} ${entry.op} v${entry.version} (seq ${entry.seq}) after ${previous === undefined ? 'nothing' : `${previous.op} v${previous.version}`}`);
    }
  }
  return violations;
}

/** The feed's last entry of each document must agree with its final state (read after the feed caught up). */
export function checkFeedAgainstStates(entries: readonly FeedEntry[], observed: ReadonlyMap<string, DocState>): string[] {
  const last = new Map<string, FeedEntry>();
  for (const entry of entries) last.set(entry.id, entry);
  const violations: string[] = [];
  for (const [docId, state] of observed) {
    const entry = last.get(docId);
    const fromFeed = entry === undefined || entry.op === 'delete' ? 'absent' : `v${entry.version}`;
    const actual = state === null ? 'absent' : `v${state.version}`;
    if (fromFeed !== actual) violations.push(`feed: ${docId} ends ${fromFeed} in the feed but is ${actual}`);
  }
  return violations;
}
