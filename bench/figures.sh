#!/usr/bin/env bash
# The figures of docs/performance.md: runs every command of that page in sequence, each writing its
# results into its own folder under --out, so no run replaces another's files. Run it on a quiet
# machine (nothing else on the cores: the figures compare processes sharing them).
#
#   bash bench/figures.sh [--quick] [--baseline-entry FILE] [--out DIR] [--only STEP,...] [--list]
#
#   --quick               every step with --quick --runs 1 (100,000 records, 15 s latency phases):
#                         checks the pipeline end to end in about an hour; not figures to quote
#   --baseline-entry FILE another build of the sidecar (e.g. a worktree of the previous release:
#                         ../base/dist/src/bin/mirror-sidecar.js), run as contender "baseline" in the
#                         pass-through scenarios: the before/after of every figure there
#   --out DIR             where the step folders go (default bench/results/performance; with --quick
#                         bench/work/figures-quick, so a check never lands among the figures)
#   --only STEP,...       run these steps only (names from --list)
#   --list                print the steps and their commands, run nothing
#
# Ports and heaps come from the environment as for `npm run bench` (KAFKA_SOURCE_PORT, ...).
# Builds once, then runs `node dist/bench/run.js` per step (what `npm run bench --` runs after its
# build). A step that fails is reported and the others still run; the exit code is 1 when any failed.
set -uo pipefail

cd "$(dirname "$0")/.."

quick=false
baseline=''
out=''
only=''
list=false
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=true ;;
    --baseline-entry) baseline="${2:?--baseline-entry needs a file}"; shift ;;
    --baseline-entry=*) baseline="${1#*=}" ;;
    --out) out="${2:?--out needs a folder}"; shift ;;
    --out=*) out="${1#*=}" ;;
    --only) only="${2:?--only needs step names}"; shift ;;
    --only=*) only="${1#*=}" ;;
    --list) list=true ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "bench/figures.sh: unknown argument \"$1\"; see bash bench/figures.sh --help" >&2; exit 2 ;;
  esac
  shift
done

if [ -z "$out" ]; then
  if [ "$quick" = true ]; then out='bench/work/figures-quick'; else out='bench/results/performance'; fi
fi


# Step name, then the arguments of `npm run bench --` as docs/performance.md gives them.
steps=(
  "exactly-once|--records 500000 --contenders sidecar,sidecar-eos,mm2,mm2-eos --no-ceiling"
  "pass-through|--scenario defaults,tuned,lz4-tuned --records 2000000 --replication-ceiling${baseline:+ --baseline-entry $baseline}"
  "decoding|--scenario decoding --records 500000 --runs 1"
  "wide-area|--scenario wide-area,wide-area-100 --records 500000 --runs 1"
  "latency|--latency --duration-seconds 30 --runs 4 --sidecar-arg=--num.producers=8"
  "latency-bare|--latency --duration-seconds 30 --runs 3 --contenders bare,bare-kafkajs,sidecar,mm1,mm2 --sidecar-arg=--num.producers=8"
  "latency-fetch-defaults|--latency --duration-seconds 30 --runs 1 --sidecar-arg=--num.producers=8"
  "latency-fetch-held|--latency --duration-seconds 30 --runs 1 --sidecar-arg=--num.producers=8 --consumer-prop fetch.min.bytes=65536 --consumer-prop fetch.max.wait.ms=10"
  "latency-wide-area-25|--latency --duration-seconds 30 --runs 1 --wide-area-delay-ms 25"
  "latency-wide-area-100|--latency --duration-seconds 30 --runs 1 --wide-area-delay-ms 100"
  "throughput-limit|--scenario tuned --contenders sidecar --no-ceiling --runs 1 --sidecar-arg=--throughput.limit.bytes=20971520"
  "rolling-restart|--scenario rolling-restart --records 2500000 --runs 1 --no-ceiling"
)

known=" $(for step in "${steps[@]}"; do printf '%s ' "${step%%|*}"; done)"
for name in ${only//,/ }; do
  case "$known" in
    *" $name "*) ;;
    *) echo "bench/figures.sh: --only \"$only\": unknown step \"$name\"; steps:$known" >&2; exit 2 ;;
  esac
done

# --quick: one run of 100,000 records; the rolling restart needs enough records to start mid-copy.
quick_args () {
  local args="$1"
  if [ "$quick" != true ]; then printf '%s' "$args"; return; fi
  args="${args/--records 2000000 /}"
  args="${args/ --records 500000 --runs 1/}"
  args="${args/--duration-seconds 30 /}"
  args="${args/--records 2500000/--records 500000}"
  args="${args/--records 500000 --contenders/--contenders}"
  args="${args/ --runs 1/}"
  printf '%s' "${args:+$args }--quick --runs 1"
}

# The command line of one step, as docs/performance.md gives it, plus its results folder.
command_of () {
  local args
  args="$(quick_args "${1#*|}")"
  printf 'npm run bench -- %s--results-dir %s/%s' "${args:+$args }" "$out" "${1%%|*}"
}

if [ "$list" = true ]; then
  for step in "${steps[@]}"; do
    printf '%-22s %s\n' "${step%%|*}" "$(command_of "$step")"
  done
  exit 0
fi

if [ -n "$baseline" ] && [ ! -f "$baseline" ]; then
  echo "bench/figures.sh: --baseline-entry \"$baseline\": no such file; build that version first (npm ci && npm run build in its checkout)" >&2
  exit 2
fi
if [ -z "$baseline" ] && { [ -z "$only" ] || [[ ",$only," == *",pass-through,"* ]]; }; then
  echo "bench/figures.sh: no --baseline-entry: the pass-through scenarios run without the before/after column" >&2
fi

npm run build || exit 2
mkdir -p "$out"
failed=()
for step in "${steps[@]}"; do
  name="${step%%|*}"
  if [ -n "$only" ] && [[ ",$only," != *",$name,"* ]]; then continue; fi
  args="$(quick_args "${step#*|}")"
  dir="$out/$name"
  mkdir -p "$dir"
  echo "=== $name: $(command_of "$step")  ($(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1 /proc/loadavg))" >&2
  # shellcheck disable=SC2086 # the arguments are words of the command line
  node dist/bench/run.js $args --results-dir "$dir" > "$dir/stdout.md" 2> >(tee "$dir/bench.log" >&2)
  status=$?
  if [ $status -ne 0 ]; then
    echo "=== $name exited $status (see $dir/bench.log)" >&2
    failed+=("$name")
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "bench/figures.sh: failed steps: ${failed[*]}; their folders under $out hold what they wrote and bench.log" >&2
  exit 1
fi
echo "bench/figures.sh: every step wrote its results under $out" >&2
