/** Exit codes, as `diff` uses them: 0 all well, 1 the check found a problem, 2 the check could not run. */
export const ExitCode = {
  OK: 0,
  CHECK_FAILED: 1,
  ERROR: 2,
} as const
export type ExitCode = typeof ExitCode[keyof typeof ExitCode]

/** A usage or runtime problem to print as one line and exit 2 (no stack trace unless --verbose). */
export class UsageError extends Error {
  override readonly name = 'UsageError'
}
