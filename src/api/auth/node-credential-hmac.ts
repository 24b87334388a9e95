/**
 * The node credential of cluster-internal calls, derived from the secret every node of a cluster
 * shares (`Coordinator.internalSecret()`, base64url):
 *
 *     Authorization: TroveNode <nodeId>.<unixSeconds>.<base64url(HMAC-SHA256(key, "trove-node/1\n<nodeId>\n<unixSeconds>"))>
 *
 * where `key` is the decoded secret. A token is accepted while its time is within `maxSkewMs`
 * (default 60 s) of the verifier's clock, either way. There is no nonce: a token captured on the
 * network can be replayed by its captor until it expires (at most `2 × maxSkewMs` after it was
 * made), but never later, and it does not bind the request body. Nonces would need every node to
 * remember each token seen within the window; the protection against a network attacker inside
 * the window is transport encryption between nodes, not this header. Nodes must keep their clocks
 * within `maxSkewMs` of each other (NTP); a node whose clock is off is refused like a stranger.
 *
 * A caller makes one token per second and reuses it (`NodeCredentialSigner`), so the header costs
 * nothing per request; a verify costs one HMAC and a constant-time comparison.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { NodeCredentialVerifier } from './node-credential.ts';

/** The Authorization scheme of node-to-node calls. */
export const NODE_CREDENTIAL_SCHEME = 'TroveNode';

/** How far a token's time may be from the verifier's clock, by default. */
export const NODE_CREDENTIAL_MAX_SKEW_MS = 60_000;

/** Node ids are base64url in practice; anything without a dot or whitespace is accepted. */
const NODE_ID = /^[^.\s]{1,256}$/;
const SECONDS = /^\d{1,12}$/;

/** The HMAC key of a cluster secret (base64url); an empty secret is a configuration error. */
function keyOf(secret: string): Buffer {
  const key = Buffer.from(secret, 'base64url');
  if (key.length === 0) throw new Error('the cluster-internal secret is empty');
  return key;
}

function mac(key: Buffer, nodeId: string, seconds: string): string {
  return createHmac('sha256', key).update(`trove-node/1\n${nodeId}\n${seconds}`).digest('base64url');
}

/** The token (without the scheme) that `nodeId` presents at `nowMs`. */
export function nodeCredentialToken(secret: string, nodeId: string, nowMs = Date.now()): string {
  if (!NODE_ID.test(nodeId)) throw new Error(`node id [${nodeId}] cannot be put in a node credential`);
  const seconds = String(Math.floor(nowMs / 1000));
  return `${nodeId}.${seconds}.${mac(keyOf(secret), nodeId, seconds)}`;
}

/** The whole `Authorization` header value of a call from `nodeId` at `nowMs`. */
export function nodeCredentialHeader(secret: string, nodeId: string, nowMs = Date.now()): string {
  return `${NODE_CREDENTIAL_SCHEME} ${nodeCredentialToken(secret, nodeId, nowMs)}`;
}

/** Makes the header of this node's calls, once per second of its clock. */
export class NodeCredentialSigner {
  private second = -1;
  private value = '';

  constructor(
    private readonly secret: string,
    readonly nodeId: string,
    private readonly now: () => number = Date.now,
  ) {
    nodeCredentialToken(secret, nodeId);
  }

  /** The `Authorization` header value for a call made now. */
  header(): string {
    const nowMs = this.now();
    const second = Math.floor(nowMs / 1000);
    if (second !== this.second) {
      this.value = nodeCredentialHeader(this.secret, this.nodeId, nowMs);
      this.second = second;
    }
    return this.value;
  }
}

/** Options of `HmacNodeCredentialVerifier`. */
export interface HmacVerifierOptions {
  /** How far a token's time may be from this clock (default `NODE_CREDENTIAL_MAX_SKEW_MS`). */
  maxSkewMs?: number;
  /** Clock, epoch millis (tests pin it). */
  now?: () => number;
}

/** Verifies node credentials made with the same cluster secret (see the module comment). */
export class HmacNodeCredentialVerifier implements NodeCredentialVerifier {
  readonly scheme = NODE_CREDENTIAL_SCHEME;
  private readonly key: Buffer;
  private readonly maxSkewMs: number;
  private readonly now: () => number;

  constructor(secret: string, options: HmacVerifierOptions = {}) {
    this.key = keyOf(secret);
    this.maxSkewMs = options.maxSkewMs ?? NODE_CREDENTIAL_MAX_SKEW_MS;
    this.now = options.now ?? Date.now;
  }

  /** The calling node's id, or null for a malformed, forged or expired token. */
  verify(token: string): string | null {
    const parts = token.split('.');
    if (parts.length !== 3) return null;
    const [nodeId, seconds, presented] = parts as [string, string, string];
    if (!NODE_ID.test(nodeId) || !SECONDS.test(seconds)) return null;
    const madeAt = Number(seconds) * 1000;
    const now = this.now();
    // The token was made within [madeAt, madeAt + 999] on the caller's clock.
    if (now < madeAt - this.maxSkewMs || now > madeAt + 999 + this.maxSkewMs) return null;
    const expected = Buffer.from(mac(this.key, nodeId, seconds));
    const given = Buffer.from(presented);
    // The length of a MAC is public; only its content is compared in constant time.
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    return nodeId;
  }
}
