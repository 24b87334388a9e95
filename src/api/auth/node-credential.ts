/**
 * The hook for cluster-internal calls: nodes of one cluster will call each other with a
 * credential of their own rather than a user's API key. Whoever sets up node-to-node transport
 * passes a verifier to the security plugin; requests whose Authorization scheme is the verifier's
 * are checked by it and, when valid, act with the `admin` role on every namespace. Without a
 * verifier that scheme is refused like any unknown one.
 */

/** Checks the cluster-internal credential presented as `Authorization: <scheme> <token>`. */
export interface NodeCredentialVerifier {
  /** Authorization scheme of internal calls, compared case-insensitively (e.g. `TroveNode`). */
  readonly scheme: string;
  /** The calling node's id when `token` is valid, else null; must compare in constant time. */
  verify(token: string): string | null;
}
