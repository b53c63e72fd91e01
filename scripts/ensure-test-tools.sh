#!/usr/bin/env bash
# First step of `npm test`: the tools the tests run besides Node, installed when missing.
#   kcat                  an independent Kafka client (interop tests, bench)
#   promtool, prometheus  rule checks and a real scraper (observability tests), Debian's `prometheus`
#   openssl               certificates for the TLS/SASL_SSL tests
#   chromium-headless-shell  screenshot of the dashboard's console page (Debian's `chromium` serves too)
#   krb5kdc, kdb5_util    a real MIT Kerberos KDC for the GSSAPI test, Debian's `krb5-kdc`
#   kadmin.local          principals and keytabs for it, Debian's `krb5-admin-server`
#   krb5-config, g++      the Kerberos headers (`libkrb5-dev`) and a compiler: the optional npm package
#                         `kerberos` builds from them where its prebuilt binary cannot be downloaded;
#                         when it is not loadable after that, it is rebuilt (or installed) into node_modules
#   java, mvn             the local Kafka clusters (Java 17+, Maven 3.8+): not installed here
#   javac                 the Java probe that asks Kafka's connect-mirror-client (a Java 17+ JDK): not installed here
# With everything present it prints nothing. Missing Debian tools are installed with apt-get when
# running as root or with passwordless sudo; otherwise it stops at once with one line saying what
# to install. --dry-run prints the commands instead of running them.
set -euo pipefail

dry_run=false
[ "${1:-}" = "--dry-run" ] && dry_run=true

say() { echo "ensure-test-tools: $*" >&2; }

# tool -> Debian package
declare -A package_of=([kcat]=kcat [promtool]=prometheus [prometheus]=prometheus [openssl]=openssl [chromium-headless-shell]=chromium-headless-shell
  [krb5kdc]=krb5-kdc [kdb5_util]=krb5-kdc [kadmin.local]=krb5-admin-server [krb5-config]=libkrb5-dev [g++]=g++ [make]=make)

missing_tools() {
  local tool
  for tool in kcat promtool prometheus openssl chromium-headless-shell krb5kdc kdb5_util kadmin.local krb5-config g++ make; do
    command -v "$tool" >/dev/null 2>&1 && continue
    # The KDC's programs are in /usr/sbin, which a user's PATH may lack.
    [ -x "/usr/sbin/$tool" ] && continue
    [ "$tool" = chromium-headless-shell ] && command -v chromium >/dev/null 2>&1 && continue
    printf '%s ' "$tool"
  done
}

missing_jvm=()
command -v java >/dev/null 2>&1 || missing_jvm+=("java (Java 17+)")
command -v javac >/dev/null 2>&1 || missing_jvm+=("javac (a Java 17+ JDK)")
command -v mvn >/dev/null 2>&1 || missing_jvm+=("mvn (Maven 3.8+)")
if [ "${#missing_jvm[@]}" -gt 0 ]; then
  say "missing ${missing_jvm[*]}: the local Kafka clusters and the Java client probe need them; install them (Debian: apt-get install openjdk-17-jdk-headless maven) and run npm test again"
  exit 1
fi

# The optional npm package kerberos (GSSAPI) loads, or is built now that the headers are there.
ensure_kerberos_package() {
  # Before npm ci (.ci/run) there is nothing to build into yet.
  [ -d node_modules ] || return 0
  node -e "require('kerberos')" >/dev/null 2>&1 && return 0
  local version
  version="$(node -p "require('./package.json').optionalDependencies.kerberos")"
  if $dry_run; then echo "would run: npm install --no-save kerberos@$version"; return 0; fi
  say "building the optional npm package kerberos@$version (GSSAPI) against the Kerberos headers"
  if [ -d node_modules/kerberos ]; then npm rebuild kerberos >/dev/null; else npm install --no-save --no-audit --no-fund "kerberos@$version" >/dev/null; fi
  node -e "require('kerberos')" >/dev/null 2>&1 || { say "the npm package kerberos still does not load; see docs/security.md (GSSAPI) and run npm test again"; exit 1; }
}

read -r -a missing <<<"$(missing_tools)"
if [ "${#missing[@]}" -eq 0 ]; then
  ensure_kerberos_package
  exit 0
fi

packages=()
for tool in "${missing[@]}"; do
  pkg="${package_of[$tool]}"
  [[ " ${packages[*]-} " == *" $pkg "* ]] || packages+=("$pkg")
done
list="${missing[*]}"; list="${list// /, }"

if ! command -v apt-get >/dev/null 2>&1; then
  say "missing $list: install ${packages[*]} with your package manager (kcat, prometheus for promtool, openssl, chromium-headless-shell, krb5-kdc, krb5-admin-server, libkrb5-dev, g++, make) and run npm test again"
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
  sudo=(sudo DEBIAN_FRONTEND=noninteractive)
else
  say "missing $list: install them with: sudo apt-get install -y ${packages[*]}   (then run npm test again)"
  exit 1
fi

run() {
  if $dry_run; then echo "would run: $*"; else "$@"; fi
}

say "installing ${packages[*]} with apt-get (missing $list)"
run "${sudo[@]}" apt-get update -qq
run "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${packages[@]}"
$dry_run && { ensure_kerberos_package; exit 0; }

# Debian's prometheus package may start its own server on :9090; the tests start their own Prometheus.
if [[ " ${packages[*]} " == *" prometheus "* ]]; then
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet prometheus 2>/dev/null; then
    "${sudo[@]:0:1}" systemctl stop prometheus
    "${sudo[@]:0:1}" systemctl disable --quiet prometheus || true
  elif command -v service >/dev/null 2>&1 && service prometheus status >/dev/null 2>&1; then
    "${sudo[@]:0:1}" service prometheus stop >/dev/null
  fi
fi

read -r -a still <<<"$(missing_tools)"
if [ "${#still[@]}" -gt 0 ]; then
  list="${still[*]}"; list="${list// /, }"
  say "still missing $list after apt-get install ${packages[*]}; install them by hand and run npm test again"
  exit 1
fi
ensure_kerberos_package
