#!/bin/bash
# Multus secondary networks on the e2e cluster (MULTUS=1), with any CNI underneath.
#
#   multus.sh build   build (or find) multus + whereabouts into $MULTUS_DIR (cached like the CNIs)
#   multus.sh up      on the running cluster: CRDs, RBAC, the multus CNI configuration on every
#                     node (delegating to the node's default network), the secondary links and
#                     the NetworkAttachmentDefinitions below
#   multus.sh down    remove all of that again (the default network is left as it was)
#   multus.sh check   exit 1 and list what `up` left on the running cluster (down runs it)
#
# up.sh runs `build` (through build-bins.sh) and `up` when MULTUS=1; both can also be run by
# hand against a cluster that is already up, which does not disturb the default network: pods
# that exist keep their interfaces, and multus delegates every new pod's default interface to
# the same configuration containerd used before.
#
# Multus is deployed as its THIN plugin (the `multus` CNI binary, a kubeconfig and a CNI
# configuration file that names the default network as its delegate), not the thick one
# (multus-daemon per node + multus-shim) that upstream recommends for v4 "in most environments":
# upstream keeps the thin plugin for resource-constrained ones, and this is one (2 cores shared by
# a whole cluster); there is no image registry, so a daemon would be one more process per node
# for the same delegation. IPAM is whereabouts (as k8s-netperf's --macvlan uses), cluster-wide
# through its IPPool objects, so pods on different nodes get distinct addresses of one subnet.
#
# Networks (namespace $MULTUS_NS):
#   $MULTUS_BRIDGE_NAD  type bridge, 10.125.0.0/24: a Linux bridge mbr0 in every node's netns,
#                       each joined by a veth to one bridge $MULTUS_HOST_BR in the root netns (no
#                       address there): a real L2 segment between the nodes, apart from the
#                       default network
#   $MULTUS_MACVLAN_NAD type macvlan (mode bridge) on each node's uplink eth0, 10.126.0.0/24: the
#                       nodes' eth0s are on the underlay bridge cnpe2e0, so it carries macvlan
#                       frames between the nodes too
set -euo pipefail
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"
T0=$(now)
log() { printf '[multus %6.1fs] %s\n' "$(elapsed "$T0")" "$*"; }
die() { echo "multus.sh: $*" >&2; exit 1; }

MULTUS_NS=multus-e2e
MULTUS_BRIDGE_NAD=e2e-bridge
MULTUS_MACVLAN_NAD=e2e-macvlan
MULTUS_BRIDGE_CIDR=10.125.0.0/24
MULTUS_MACVLAN_CIDR=10.126.0.0/24
MULTUS_NODE_BR=mbr0                  # in every node's netns (the bridge plugin's "bridge")
MULTUS_NODE_VETH=mbr-up              # node end, enslaved to mbr0
MULTUS_CONF=00-multus.conf           # sorts before every default configuration

build() {
  local WORK=$E2E_CACHE/work
  mkdir -p "$E2E_CACHE" "$WORK"
  export CGO_ENABLED=0 GOFLAGS=-buildvcs=false
  gox() { go "$@" 2> >(grep -v '^go: downloading ' >&2); }
  if [ -f "$MULTUS_DIR/.complete" ] && [ -x "$MULTUS_DIR/multus" ] && [ -x "$MULTUS_DIR/whereabouts" ] &&
    [ -s "$MULTUS_DIR/crds.yaml" ] && [ -s "$MULTUS_DIR/rbac.yaml" ]; then
    log "multus v$MULTUS_VERSION + whereabouts v$WHEREABOUTS_VERSION: cached in $MULTUS_DIR"
    return 0
  fi
  log "multus v$MULTUS_VERSION + whereabouts v$WHEREABOUTS_VERSION: building into $MULTUS_DIR"
  local m=gopkg.in/k8snetworkplumbingwg/multus-cni.v4 w=github.com/k8snetworkplumbingwg/whereabouts
  local msrc wsrc MW WW TMP
  # writable copies of the module zips; their vendor/ holds only modules.txt (the zip drops the
  # rest), so they build with -mod=mod from their own go.mod and go.sum
  msrc=$(cd "$WORK" && gox mod download -json "$m@v$MULTUS_VERSION" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
  wsrc=$(cd "$WORK" && gox mod download -json "$w@v$WHEREABOUTS_VERSION" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
  [ -f "$msrc/cmd/multus/main.go" ] || die "multus: module not found in '$msrc'"
  [ -f "$wsrc/cmd/whereabouts.go" ] || die "whereabouts: module not found in '$wsrc'"
  MW=$WORK/multus-v$MULTUS_VERSION WW=$WORK/whereabouts-v$WHEREABOUTS_VERSION
  local src dst
  for pair in "$msrc:$MW" "$wsrc:$WW"; do
    src=${pair%%:*} dst=${pair#*:}
    [ -f "$dst/go.mod" ] && continue
    rm -rf "$dst.tmp" && cp -r "$src" "$dst.tmp" && chmod -R u+w "$dst.tmp" && rm -rf "$dst.tmp/vendor"
    rm -rf "$dst" && mv "$dst.tmp" "$dst"
  done
  TMP=$(mktemp -d "$E2E_CACHE/.tmp-multus.XXXXXX")
  # version-stamped as their hack/build-go.sh do
  (cd "$MW" && gox build -mod=mod $BUILD_FLAGS -ldflags "$BUILD_LDFLAGS -X $m/pkg/multus.version=v$MULTUS_VERSION -X $m/pkg/multus.releaseStatus=released" \
    -o "$TMP/multus" ./cmd/multus)
  log "multus built"
  (cd "$WW" && gox build -mod=mod $BUILD_FLAGS -ldflags "$BUILD_LDFLAGS -X $w/pkg/version.Version=v$WHEREABOUTS_VERSION -X $w/pkg/version.ReleaseStatus=released" \
    -o "$TMP/whereabouts" ./cmd/)
  log "whereabouts built"
  # the manifests up applies, from the same sources: the NetworkAttachmentDefinition CRD and the
  # multus ServiceAccount/ClusterRole(Binding) of deployments/multus-daemonset.yml; whereabouts'
  # CRDs and its ServiceAccount/ClusterRole(Binding) of doc/crds/daemonset-install.yaml
  python3 - "$MW/deployments/multus-daemonset.yml" "$WW/doc/crds/daemonset-install.yaml" "$TMP" \
    "$WW"/doc/crds/whereabouts.cni.cncf.io_*.yaml <<'PY'
import re, sys
def docs(p):
    return [d.strip("\n") for d in re.split(r"(?m)^---\s*$", open(p).read()) if d.strip()]
def kind(d):
    k = re.search(r"(?m)^kind: *(\S+)", d)
    return k.group(1) if k else ""
mdocs, wdocs, out = docs(sys.argv[1]), docs(sys.argv[2]), sys.argv[3]
crds = [d for d in mdocs if kind(d) == "CustomResourceDefinition"]
for p in sys.argv[4:]:
    crds += [d for d in docs(p) if kind(d) == "CustomResourceDefinition"]
rbac = [d for d in mdocs + wdocs if kind(d) in ("ServiceAccount", "ClusterRole", "ClusterRoleBinding")]
if len(crds) < 3 or "network-attachment-definitions.k8s.cni.cncf.io" not in "".join(crds):
    sys.exit("multus/whereabouts: CRDs not found (%d)" % len(crds))
if len(rbac) != 6:
    sys.exit("multus/whereabouts: expected 6 RBAC objects (ServiceAccount, ClusterRole, ClusterRoleBinding of each), found %d" % len(rbac))
open(out + "/crds.yaml", "w").write("\n---\n".join(crds) + "\n")
open(out + "/rbac.yaml", "w").write("\n---\n".join(rbac) + "\n")
PY
  "$TMP/multus" -version 2>&1 | grep -q "v$MULTUS_VERSION" || die "multus: version stamp missing"
  { echo "built $(date -u +%FT%TZ) with $GO_VERSION"; echo "env: $BUILD_ENV"
    echo "flags: $BUILD_FLAGS -ldflags '$BUILD_LDFLAGS'"; } > "$TMP/.complete"
  chmod 755 "$TMP"; rm -rf "$MULTUS_DIR"; mv "$TMP" "$MULTUS_DIR"
  log "multus + whereabouts built"
}

# ---------------- on the running cluster ----------------
S=$E2E_STATE
cluster() {
  [ -s "$S/e2e.env" ] && [ -s "$S/config" ] || die "no cluster is up ($S/e2e.env missing)"
  # the running cluster's shape, not this shell's defaults
  NODES=$(grep -c . "$S/nodes")
  CNI=$(sed -n 's/^CNI=//p' "$S/config")
  KC="$K8S_DIR/kubectl --kubeconfig=$S/admin.kubeconfig"
  NODE_CNI_BIN=$(sed -n 's/^ *bin_dir = "\(.*\)"/\1/p' "$S/node1/containerd/config.toml" 2>/dev/null | head -1)
  [ -n "$NODE_CNI_BIN" ] || die "cannot read bin_dir from $S/node1/containerd/config.toml"
}
nsx() { local i=$1; shift; nsenter --net="/run/netns/$(node_ns "$i")" "$@"; }
# token_kubeconfig SA NAMESPACE FILE: a kubeconfig with the ServiceAccount's token (24 h), as up.sh
# makes flannel's and calico's
token_kubeconfig() {
  local token
  token=$($KC -n "$2" create token "$1" --duration=24h)
  cat > "$3.tmp" <<KCFG
apiVersion: v1
kind: Config
clusters:
- cluster: {server: "https://$APISERVER_IP:6443", certificate-authority: "$S/pki/ca.crt"}
  name: cnperf-e2e
users:
- name: $1
  user: {token: "$token"}
contexts:
- context: {cluster: cnperf-e2e, user: $1, namespace: $2}
  name: $1
current-context: $1
KCFG
  chmod 600 "$3.tmp" && mv "$3.tmp" "$3"
}
# default_conf D: the configuration containerd uses for node dir D without multus (the first
# *.conf/*.conflist in name order, as libcni picks it)
default_conf() {
  local f
  for f in $(cd "$1/cni/net.d" && ls -1 -- *.conf *.conflist 2>/dev/null | LC_ALL=C sort); do
    [ "$f" = "$MULTUS_CONF" ] || { echo "$1/cni/net.d/$f"; return 0; }
  done
  return 1
}
nad() { # NAME CONFIG-JSON
  $KC apply -f - >/dev/null <<YAML
apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata: {name: $1, namespace: $MULTUS_NS, labels: {app.kubernetes.io/managed-by: cnperf-e2e-multus}}
spec:
  config: '$2'
YAML
}
# whereabouts_ipam CIDR: the NADs' IPAM. whereabouts v0.9 insists on its flat configuration file
# (without one it fails with "config file not found"): configuration_path names the one up writes,
# $S/whereabouts.conf, which holds its kubeconfig and log settings (the nodes' /etc/cni/net.d is
# the host's, so its default places are not used)
whereabouts_ipam() {
  printf '{"type": "whereabouts", "range": "%s", "configuration_path": "%s"}' "$1" "$S/whereabouts.conf"
}

up() {
  cluster
  build
  [ "$NODE_CNI_BIN" != "$CNI_BIN" ] || die "this cluster's containerd runs CNI plugins from the host's $CNI_BIN; bring it up with MULTUS=1 (up.sh then gives the nodes a plugin directory of their own)"
  local i n D f
  ln -sfn "$MULTUS_DIR/multus" "$NODE_CNI_BIN/multus"
  ln -sfn "$MULTUS_DIR/whereabouts" "$NODE_CNI_BIN/whereabouts"
  for f in bridge macvlan; do [ -x "$NODE_CNI_BIN/$f" ] || die "missing CNI plugin $NODE_CNI_BIN/$f"; done
  $KC apply -f "$MULTUS_DIR/crds.yaml" >/dev/null
  $KC wait --for=condition=Established --timeout=60s crd/network-attachment-definitions.k8s.cni.cncf.io \
    crd/ippools.whereabouts.cni.cncf.io crd/overlappingrangeipreservations.whereabouts.cni.cncf.io >/dev/null
  $KC apply -f "$MULTUS_DIR/rbac.yaml" >/dev/null
  token_kubeconfig multus kube-system "$S/multus.kubeconfig"
  token_kubeconfig whereabouts kube-system "$S/whereabouts.kubeconfig"
  printf '{"kubernetes": {"kubeconfig": "%s"}, "log_file": "%s", "log_level": "error"}\n' \
    "$S/whereabouts.kubeconfig" "$S/logs/whereabouts.log" > "$S/whereabouts.conf"
  log "CRDs, RBAC and kubeconfigs of multus and whereabouts"
  # the bridge network: mbr0 in every node, joined through a veth to one bridge in the root netns
  ip link show "$MULTUS_HOST_BR" >/dev/null 2>&1 || ip link add "$MULTUS_HOST_BR" type bridge
  ip link set "$MULTUS_HOST_BR" addrgenmode none 2>/dev/null || true
  ip link set "$MULTUS_HOST_BR" up
  for i in $(seq 1 "$NODES"); do
    if ! ip link show "$(multus_host_veth "$i")" >/dev/null 2>&1; then
      ip link add "$(multus_host_veth "$i")" type veth peer name "$MULTUS_NODE_VETH" netns "$(node_ns "$i")"
    fi
    ip link set "$(multus_host_veth "$i")" master "$MULTUS_HOST_BR" addrgenmode none up
    nsx "$i" ip link show "$MULTUS_NODE_BR" >/dev/null 2>&1 || nsx "$i" ip link add "$MULTUS_NODE_BR" type bridge
    nsx "$i" ip link set "$MULTUS_NODE_VETH" master "$MULTUS_NODE_BR" up
    nsx "$i" ip link set "$MULTUS_NODE_BR" up
  done
  log "bridge network: $MULTUS_HOST_BR + $MULTUS_NODE_BR on $NODES nodes"
  $KC create namespace "$MULTUS_NS" --dry-run=client -o yaml | $KC apply -f - >/dev/null
  nad "$MULTUS_BRIDGE_NAD" "{\"cniVersion\": \"0.3.1\", \"name\": \"$MULTUS_BRIDGE_NAD\", \"type\": \"bridge\", \"bridge\": \"$MULTUS_NODE_BR\", \"mtu\": 1500, \"ipam\": $(whereabouts_ipam "$MULTUS_BRIDGE_CIDR")}"
  nad "$MULTUS_MACVLAN_NAD" "{\"cniVersion\": \"0.3.1\", \"name\": \"$MULTUS_MACVLAN_NAD\", \"type\": \"macvlan\", \"master\": \"eth0\", \"mode\": \"bridge\", \"ipam\": $(whereabouts_ipam "$MULTUS_MACVLAN_CIDR")}"
  log "NetworkAttachmentDefinitions $MULTUS_NS/$MULTUS_BRIDGE_NAD ($MULTUS_BRIDGE_CIDR), $MULTUS_NS/$MULTUS_MACVLAN_NAD ($MULTUS_MACVLAN_CIDR)"
  # multus as every node's first CNI configuration, its one delegate the node's default network
  for i in $(seq 1 "$NODES"); do
    n=$(node_name "$i"); D=$S/$n
    f=$(default_conf "$D") || die "$n has no default CNI configuration in $D/cni/net.d"
    python3 - "$f" "$D/cni/net.d/.$MULTUS_CONF.tmp" "$S/multus.kubeconfig" "$NODE_CNI_BIN" "$S/logs/multus-$n.log" <<'PY2'
import json, sys
src, out, kc, bindir, logf = sys.argv[1:]
d = json.load(open(src))
conf = {"cniVersion": d.get("cniVersion", "0.3.1"), "name": "multus-cni-network", "type": "multus",
        "kubeconfig": kc, "binDir": bindir, "cniDir": "/var/lib/cni/multus",
        "logFile": logf, "logLevel": "error", "delegates": [d]}
json.dump(conf, open(out, "w"), indent=2)
PY2
    mv "$D/cni/net.d/.$MULTUS_CONF.tmp" "$D/cni/net.d/$MULTUS_CONF"
    log "$n: $MULTUS_CONF delegating to $(basename "$f")"
  done
}

down() {
  cluster
  local i n D
  # new pods take the default network again first, then the objects and links go
  for i in $(seq 1 "$NODES"); do
    n=$(node_name "$i"); D=$S/$n
    rm -f "$D/cni/net.d/$MULTUS_CONF" "$D/cni/net.d/.$MULTUS_CONF.tmp"
  done
  $KC delete namespace "$MULTUS_NS" --ignore-not-found --wait=true --timeout=120s >/dev/null || true
  [ -s "$MULTUS_DIR/crds.yaml" ] && $KC delete -f "$MULTUS_DIR/crds.yaml" --ignore-not-found --wait=true >/dev/null || true
  [ -s "$MULTUS_DIR/rbac.yaml" ] && $KC delete -f "$MULTUS_DIR/rbac.yaml" --ignore-not-found >/dev/null || true
  rm -f "$NODE_CNI_BIN/multus" "$NODE_CNI_BIN/whereabouts" "$S/multus.kubeconfig" "$S/whereabouts.kubeconfig" "$S/whereabouts.conf"
  for i in $(seq 1 "$NODES"); do
    nsx "$i" ip link del "$MULTUS_NODE_BR" 2>/dev/null || true
    ip link del "$(multus_host_veth "$i")" 2>/dev/null || true
    # multus's cache of the delegates it ran (/var/lib/cni/multus is the node's own directory)
    rm -rf "$S/$(node_name "$i")/host/var_lib_cni/multus"
  done
  ip link del "$MULTUS_HOST_BR" 2>/dev/null || true
  log "multus removed"
  check
}

# check: exit 1 and list what multus.sh up left on the running cluster
check() {
  cluster
  local out="" i x
  add() { [ -z "$2" ] || out="$out$1:"$'\n'"$(echo "$2" | tr ' ' '\n' | grep . | sed 's/^/  /')"$'\n'; }
  add "CRDs" "$($KC get crd -o name 2>/dev/null | grep -E 'k8s\.cni\.cncf\.io|whereabouts\.cni\.cncf\.io')"
  add "namespace" "$($KC get namespace "$MULTUS_NS" -o name --ignore-not-found 2>/dev/null)"
  add "RBAC" "$($KC get clusterrole,clusterrolebinding -o name 2>/dev/null | grep -E '/(multus|whereabouts|whereabouts-cni)$')"
  add "ServiceAccounts" "$($KC -n kube-system get sa -o name 2>/dev/null | grep -E '/(multus|whereabouts)$')"
  x=""; for i in $(seq 1 "$NODES"); do
    [ -e "$S/node$i/cni/net.d/$MULTUS_CONF" ] && x="$x node$i:$MULTUS_CONF"
    [ -e "$S/node$i/host/var_lib_cni/multus" ] && x="$x node$i:/var/lib/cni/multus"
    nsx "$i" ip link show "$MULTUS_NODE_BR" >/dev/null 2>&1 && x="$x node$i:$MULTUS_NODE_BR"
    nsx "$i" ip link show "$MULTUS_NODE_VETH" >/dev/null 2>&1 && x="$x node$i:$MULTUS_NODE_VETH"
  done
  add "nodes" "$x"
  add "links" "$(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E "^($MULTUS_HOST_BR|$NAME_PREFIX-mb[0-9]+)$")"
  add "files" "$(ls -d "$NODE_CNI_BIN/multus" "$NODE_CNI_BIN/whereabouts" "$S/multus.kubeconfig" "$S/whereabouts.kubeconfig" "$S/whereabouts.conf" 2>/dev/null)"
  if [ -n "$out" ]; then printf 'multus leftovers:\n%s' "$out" >&2; return 1; fi
  log "multus leftover check: nothing left (CRDs, NADs, IPPools, RBAC, CNI configuration, links, files)"
}

case ${1:-} in
  build) build ;;
  up) up ;;
  down) down ;;
  check) check ;;
  *) die "usage: multus.sh build|up|down|check" ;;
esac
