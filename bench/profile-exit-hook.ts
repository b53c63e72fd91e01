/**
 * Loaded into the sidecar with `node --import` when the benchmark profiles it: SIGUSR2 makes the
 * process exit at once, so `--cpu-prof` writes its profile of the copy however the sidecar's own
 * shutdown behaves (a process killed by a signal writes no profile).
 */
process.on('SIGUSR2', () => process.exit(0))
