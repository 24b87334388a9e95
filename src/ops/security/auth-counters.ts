/**
 * Counters of refused requests, for node stats: authentication failures (401) by reason and
 * authorization failures (403) by what was missing. Plain numbers; incrementing is a field write.
 */

/** Why a request was not authenticated. */
export type AuthenticationFailure = 'missing' | 'malformed' | 'unknown' | 'expired';
/** What an authenticated request lacked. */
export type AuthorizationFailure = 'role' | 'namespace';

/** The `security` section of node stats. */
export interface AuthCountersSnapshot {
  authentication_failures: Record<AuthenticationFailure, number> & { total: number };
  authorization_failures: Record<AuthorizationFailure, number> & { total: number };
}

/** See the module comment. */
export class AuthCounters {
  private readonly authentication: Record<AuthenticationFailure, number> = { missing: 0, malformed: 0, unknown: 0, expired: 0 };
  private readonly authorization: Record<AuthorizationFailure, number> = { role: 0, namespace: 0 };

  /** Counts one request refused with 401. */
  authenticationFailed(reason: AuthenticationFailure): void {
    this.authentication[reason]++;
  }

  /** Counts one request refused with 403. */
  authorizationFailed(reason: AuthorizationFailure): void {
    this.authorization[reason]++;
  }

  /** A copy of the counters with totals. */
  snapshot(): AuthCountersSnapshot {
    const sum = (counts: Record<string, number>): number => Object.values(counts).reduce((total, count) => total + count, 0);
    return {
      authentication_failures: { ...this.authentication, total: sum(this.authentication) },
      authorization_failures: { ...this.authorization, total: sum(this.authorization) },
    };
  }
}
