#!/usr/bin/env bash
# Prints what failed in a saved `npm test` log: each failed test (TAP "not ok", nested ones
# included) with its error block and diagnostics, or the spec reporter's "failing tests" section,
# then eslint's problem lines.
# .ci/run calls it last, so the end of a CI log says what failed even when the run's output is cut
# to its tail. Usage: scripts/ci-failures.sh LOG [MAX_LINES]
set -euo pipefail
log=$1
max=${2:-400}
[ -r "$log" ] || { echo "ci-failures: no log at $log"; exit 0; }
{
  # A failed test's block: the "not ok" line, its YAML block up to the indented "..." that closes
  # it, and the diagnostics its test printed (TAP puts them after the block, up to the next test).
  awk '
    /^[[:space:]]*not ok [0-9]+ / { print "----"; print; inblock = 1; after = 0; next }
    # Stack frames are left out: the error and the location say where.
    inblock && /^[[:space:]]*stack: / { instack = 1; next }
    inblock && instack && !/^[[:space:]]*[A-Za-z_]+: / && !/^[[:space:]]*\.\.\.$/ { next }
    inblock { instack = 0; print; if ($0 ~ /^[[:space:]]*\.\.\.$/) { inblock = 0; after = 1 }; next }
    after && /^[[:space:]]*# / && !/# Subtest: / && !/^# (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) / { print; next }
    { after = 0 }
    # The spec reporter (what Node 24 prints): its "failing tests" section, without stack frames.
    /^✖ failing tests:/ { spec = 1 }
    spec && !/^[[:space:]]+at / { print }
  ' "$log"
  # eslint (stylish): "path" then "  line:col  error  message  rule", and its "✖ N problems" summary.
  grep -E '^[[:space:]]+[0-9]+:[0-9]+[[:space:]]+(error|warning)[[:space:]]|✖ [0-9]+ problems?' "$log" || true
  grep -E '^(#|ℹ) (tests|pass|fail) [0-9]+' "$log" || true
} | head -n "$max" || true # head stops reading at $max lines; the summary never fails the run that prints it
