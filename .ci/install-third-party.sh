#!/usr/bin/env bash
# Builds and installs netperf, netserver (2.7.1) and uperf (1.0.8) from the unmodified upstream
# source snapshots in ../shared/third_party/ (beside the repository root; Debian 12 packages
# neither tool). A tool already installed at the expected version is left alone. Without the
# tarballs it says so and returns 0: the tests that need the tools then skip with a message.
# The e2e agent image copies the binaries installed here (test/e2e/images/build.sh), and the
# Containerfile builds the same versions with the same configure flags (keep them in step).
# The tarballs may come from anywhere (the Containerfile downloads the same upstream commits):
# their top folder's name does not matter.
# usage: install-third-party.sh   env: PREFIX (default /usr/local), THIRD_PARTY (default
#        <repo root>/../shared/third_party)
set -euo pipefail
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel 2>/dev/null || (cd "$(dirname "$0")/.." && pwd))
TP=${THIRD_PARTY:-$root/../shared/third_party}
PREFIX=${PREFIX:-/usr/local}
NETPERF_VERSION=2.7.1
UPERF_VERSION=1.0.8
# the flags the Containerfile uses too
NETPERF_CONFIGURE=(--enable-histogram --enable-burst --enable-intervals --enable-demo --enable-omni)
NETPERF_CFLAGS="-O2 -fcommon"
UPERF_CONFIGURE=(--disable-sctp --disable-ssl)

have() { # have <binary> <expected version line>
  [ -x "$PREFIX/bin/$1" ] && "$PREFIX/bin/$1" -V 2>/dev/null | grep -qx "$2"
}

need_netperf=1 need_uperf=1
have netperf "Netperf version $NETPERF_VERSION" && have netserver "Netperf version $NETPERF_VERSION" && need_netperf=0
have uperf "Uperf Version $UPERF_VERSION" && need_uperf=0
if [ $need_netperf = 0 ] && [ $need_uperf = 0 ]; then
  echo "third_party: netperf $NETPERF_VERSION and uperf $UPERF_VERSION already in $PREFIX/bin"
  exit 0
fi
if [ ! -f "$TP/netperf-$NETPERF_VERSION.tar.gz" ] || [ ! -f "$TP/uperf-$UPERF_VERSION.tar.gz" ]; then
  echo "third_party: no netperf-$NETPERF_VERSION.tar.gz / uperf-$UPERF_VERSION.tar.gz in $TP:" \
       "netperf and uperf not installed; the tests that run them will skip" >&2
  exit 0
fi
deps=(autoconf automake libtool autotools-dev gcc make)
missing=()
for p in "${deps[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
W=$(mktemp -d /tmp/cnperf-third-party.XXXXXX)
trap 'rm -rf "$W"' EXIT
log=$W/build.log
build() { # build <name> <commands...>: output to a log shown only on failure
  local t0=$SECONDS
  if ! ( "${@:2}" ) >"$log" 2>&1; then
    tail -40 "$log" >&2
    echo "third_party: building $1 failed" >&2
    exit 1
  fi
  echo "third_party: built and installed $1 in $((SECONDS - t0)) s"
}
if [ $need_netperf = 1 ]; then
  mkdir "$W/netperf" && tar -xzf "$TP/netperf-$NETPERF_VERSION.tar.gz" -C "$W/netperf" --strip-components=1
  # netperf's own config.guess predates aarch64: use autotools-dev's
  build "netperf $NETPERF_VERSION" bash -c "cd '$W/netperf' && cp /usr/share/misc/config.guess /usr/share/misc/config.sub . && ./autogen.sh &&
    CFLAGS='$NETPERF_CFLAGS' ./configure --prefix='$PREFIX' ${NETPERF_CONFIGURE[*]} &&
    make -j2 && make install"
fi
if [ $need_uperf = 1 ]; then
  mkdir "$W/uperf" && tar -xzf "$TP/uperf-$UPERF_VERSION.tar.gz" -C "$W/uperf" --strip-components=1
  build "uperf $UPERF_VERSION" bash -c "cd '$W/uperf' && autoreconf -fi &&
    ./configure --prefix='$PREFIX' ${UPERF_CONFIGURE[*]} && make -j2 && make install"
fi
have netperf "Netperf version $NETPERF_VERSION" && have netserver "Netperf version $NETPERF_VERSION" &&
  have uperf "Uperf Version $UPERF_VERSION" || { echo "third_party: installed tools do not report the expected versions" >&2; exit 1; }
