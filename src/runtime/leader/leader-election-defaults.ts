/**
 * client-go's leader-election timings; in a file of their own so the command line can show them
 * as flag defaults without loading leader election.
 *
 * @module
 */

/** client-go's defaults, which upstream Metacontroller uses unchanged. */
export const LEADER_ELECTION_DEFAULTS = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
} as const
