#!/usr/bin/env bash
# Builds the real Kubernetes control plane the tests run against, once per machine, from the Go modules pinned in
# tools/kube/go.mod (k8s.io/kubernetes and its staging modules) and tools/etcd/go.mod (etcd's server module):
#
#   scripts/kube-tools.sh            build what is missing
#   scripts/kube-tools.sh --paths    print where the binaries are (or would be), build nothing:
#                                    `etcd=<folder>` and `k8s=<folder>`, one a line
#
# The binaries go into a cache folder outside the repository, one folder per pinned version:
#   ${FAIRWAY_TOOLS_CACHE:-${XDG_CACHE_HOME:-~/.cache}/fairway/tools}/k8s-<version>/{kube-apiserver,kube-scheduler,kube-controller-manager}
#   ${FAIRWAY_TOOLS_CACHE:-...}/etcd-<version>/etcd
# A binary already there is kept; each is written under a temporary name and renamed when complete, so a build
# that is interrupted leaves nothing half-made. The versions are read from the go.mod files: changing a pin there
# builds into a new folder. A cold build of all four took 22 minutes on two busy cores (kube-apiserver 17 of them;
# the others reuse most of its packages); it runs at the lowest CPU priority. Go's own build and module caches are
# used as they are configured.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${FAIRWAY_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fairway/tools}

say() { echo "kube-tools: $*"; }
die() { echo "kube-tools: $*" >&2; exit 1; }

# pinned MODDIR MODULE -> the version MODDIR/go.mod requires of MODULE
pinned() {
  local v
  v=$(awk -v m="$2" '$1 == m && $2 ~ /^v/ {print $2; exit} $1 == "require" && $2 == m {print $3; exit}' "$1/go.mod")
  [ -n "$v" ] || die "$1/go.mod does not require $2"
  echo "$v"
}

k8s_version=$(pinned "$repo/tools/kube" k8s.io/kubernetes)
etcd_version=$(pinned "$repo/tools/etcd" go.etcd.io/etcd/server/v3)
k8s_dir=$cache/k8s-$k8s_version
etcd_dir=$cache/etcd-$etcd_version

if [ "${1:-}" = --paths ]; then
  echo "etcd=$etcd_dir"
  echo "k8s=$k8s_dir"
  exit 0
fi
[ $# = 0 ] || die "usage: kube-tools.sh [--paths]"

# build MODDIR PACKAGE OUTPUT [LDFLAGS]
build() {
  local moddir=$1 pkg=$2 out=$3 ldflags="-s -w ${4:-}"
  if [ -x "$out" ]; then
    return 0
  fi
  if ! command -v go >/dev/null; then
    # Only CI must have them: elsewhere the tests that need them are skipped, and say why.
    local ci=${CI:-}
    case "${ci,,}" in
      ""|0|false|no) say "Go is not installed: $(basename "$out") not built; the tests of the real API server will be skipped"
                     exit 0 ;;
      *) die "Go is not installed: $out is needed by the tests that run a real API server" ;;
    esac
  fi
  mkdir -p "$(dirname "$out")"
  say "building $pkg into $out (once per machine)"
  local started=$SECONDS
  # go.mod and go.sum are the pins (read-only: a build never changes them); the modules come from the module proxy.
  local partial="$out.partial.$$"
  if ! (cd "$moddir" && CGO_ENABLED=0 nice -n 19 go build -trimpath -ldflags="$ldflags" -o "$partial" "$pkg"); then
    rm -f "$partial"
    die "building $pkg failed (above)"
  fi
  mv -f "$partial" "$out"
  say "built $(basename "$out") in $((SECONDS - started)) s"
}

# The version the Kubernetes binaries report (/version, their logs): a plain go build leaves v0.0.0-master.
minor=${k8s_version#v1.}; minor=${minor%%.*}
k8s_ldflags="-X k8s.io/component-base/version.gitVersion=$k8s_version -X k8s.io/component-base/version.gitMajor=1"
k8s_ldflags+=" -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"

build "$repo/tools/etcd" go.etcd.io/etcd/server/v3 "$etcd_dir/etcd"
for cmd in kube-apiserver kube-scheduler kube-controller-manager; do
  build "$repo/tools/kube" "k8s.io/kubernetes/cmd/$cmd" "$k8s_dir/$cmd" "$k8s_ldflags"
done
say "etcd $etcd_version in $etcd_dir, Kubernetes $k8s_version in $k8s_dir"
