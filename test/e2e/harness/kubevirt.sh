#!/bin/bash
# KubeVirt on the e2e cluster, in QEMU software emulation (TCG): this machine has /dev/kvm but
# no hardware virtualization (no vmx/svm), and there is no image registry, so everything is
# built here.
#
#   kubevirt.sh build        build (or find) into $KUBEVIRT_DIR: KubeVirt v$KUBEVIRT_VERSION's
#                            binaries from its source (vendored Go modules; virt-launcher with
#                            cgo against Debian's libvirt-dev) with kubevirt/*.patch applied
#                            (virt-handler in the node's mount namespace, not PID 1's), a Debian bookworm root file
#                            system with libvirt 9.0 and QEMU 7.2 (debootstrap + apt, what
#                            KubeVirt v1.0's own images carry: libvirt 9.0.0, qemu-kvm 7.2.0),
#                            the images virt-operator/api/controller/handler/launcher, the
#                            operator's manifest, and the cnperf guest (below)
#   kubevirt.sh guest-check  boot the cnperf guest under QEMU (TCG, user networking, ports
#                            forwarded on 127.0.0.1 only) and run TCP_STREAM and TCP_RR against
#                            the agent inside it; no cluster needed
#   kubevirt.sh up           on the running cluster: the images into every node's containerd,
#                            KubeVirt's per-node host directories, the operator, and a KubeVirt
#                            CR with developerConfiguration.useEmulation, then waits for it to be
#                            Available (it was, 2026-11-29, and a VMI ran: docs/e2e.md, "Virtual
#                            machines", says what ran and what was fixed by hand)
#   kubevirt.sh down         remove all of that again
#   kubevirt.sh check        exit 1 and list what `up` left on the running cluster
#
# The cnperf guest needs no cloud image: Debian's kernel (linux-image-*-amd64) and an
# initramfs holding a static busybox, the virtio-net modules of that kernel and the cnperf
# binary; its /init (kubevirt/guest-init) configures every NIC by DHCP and runs
# `cnperf agent serve` with the token of the run's Secret, a disk KubeVirt makes of it (not the
# kernel command line, which anyone who may read the VMI sees).
# KubeVirt boots it with spec.domain.firmware.kernelBoot from the image $KUBEVIRT_GUEST_IMAGE
# (/boot/vmlinuz, /boot/initramfs.img).
set -euo pipefail
HARNESS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HARNESS/lib.sh"
T0=$(now)
log() { printf '[kubevirt %6.1fs] %s\n' "$(elapsed "$T0")" "$*"; }
die() { echo "kubevirt.sh: $*" >&2; exit 1; }

KUBEVIRT_VERSION=${KUBEVIRT_VERSION:-1.0.1}
KUBEVIRT_COMMIT=5e8660a7ba53fe05266a20960f4e8e1ef3e1104b   # the tag v1.0.1
KUBEVIRT_DIR=${KUBEVIRT_DIR:-$E2E_CACHE/kubevirt-v$KUBEVIRT_VERSION-$FLAGS_HASH}
# KubeVirt's source tree at v$KUBEVIRT_VERSION (with vendor/), built in place (see build_src)
KUBEVIRT_SRC=${KUBEVIRT_SRC:-}
# patches build_src applies to it (each says why at its top); their hash, and the images' layout
# revision (KUBEVIRT_IMAGES_REV: raise it when build_images changes), name the binaries' and
# images' stamps, so a change rebuilds those (not the root file system)
KUBEVIRT_PATCHES="$HARNESS/kubevirt/host-mount-namespace.patch $HARNESS/kubevirt/pod-conditions-merge.patch"
KUBEVIRT_IMAGES_REV=3
# shellcheck disable=SC2086
KUBEVIRT_PATCH_ID=$({ cat $KUBEVIRT_PATCHES; echo "images-rev-$KUBEVIRT_IMAGES_REV"; } | sha256sum | cut -c1-8)
KUBEVIRT_NS=${KUBEVIRT_NS:-kubevirt}
KUBEVIRT_REPO=localhost/cnperf-kubevirt        # image names: $KUBEVIRT_REPO/virt-api:v$VERSION
# the guest's image, its files and its archive: a helper building its own guest beside a shared
# cache sets all three (KUBEVIRT_GUEST_DIR may be new: the kernel is fetched into it)
KUBEVIRT_GUEST_IMAGE=${KUBEVIRT_GUEST_IMAGE:-$KUBEVIRT_REPO/cnperf-guest:v$KUBEVIRT_VERSION}
KUBEVIRT_GUEST_DIR=${KUBEVIRT_GUEST_DIR:-$KUBEVIRT_DIR/guest}
KUBEVIRT_GUEST_TAR=${KUBEVIRT_GUEST_TAR:-$KUBEVIRT_DIR/images/cnperf-guest.tar}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
# what virt-launcher and virt-handler need from Debian
# (libvirtd stands in for virtqemud, which Debian bookworm does not build: see the wrapper below);
# xorriso: virt-launcher makes the disks of Secret, ConfigMap and cloud-init volumes with
# xorrisofs (pkg/config/config.go), as cnperf's VMs get the run's token Secret
LAUNCHER_PACKAGES="libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients qemu-system-x86 qemu-utils passt iproute2 nftables iptables procps xorriso"
# the packages name the root file system's stamp (and so the images'): a change installs what is
# new into the cached root file system and builds the images again, not the binaries
# shellcheck disable=SC2086
KUBEVIRT_ROOTFS_ID=$(echo $LAUNCHER_PACKAGES | sha256sum | cut -c1-8)
KV_COMPONENTS="virt-operator virt-api virt-controller virt-handler virt-launcher"
# the kernel modules the guest loads, in dependency order (virtio-net over virtio-pci; virtio-blk
# and ISO 9660 (over cdrom) for the disk KubeVirt makes of the run's token Secret)
GUEST_MODULES="drivers/virtio/virtio_ring drivers/virtio/virtio drivers/virtio/virtio_pci_modern_dev
  drivers/virtio/virtio_pci_legacy_dev drivers/virtio/virtio_pci net/core/failover drivers/net/net_failover
  drivers/net/virtio_net drivers/block/virtio_blk drivers/cdrom/cdrom fs/isofs/isofs"

# ---------------- build ----------------
# each step leaves a stamp; a step whose stamp exists is not done again
stamp() { [ -f "$KUBEVIRT_DIR/.$1" ]; }
stamped() { date -u +%FT%TZ > "$KUBEVIRT_DIR/.$1"; }
timed() { local t; t=$(now); "$@"; log "$1: $(elapsed "$t")s"; }

# SRC: the source tree the binaries are built in, KUBEVIRT_SRC itself (its Go build cache stays
# valid): a checkout of the tag with its vendor/ directory, e.g.
#   git clone --depth 1 --branch v1.0.1 https://github.com/kubevirt/kubevirt
# (the module proxy cannot serve it: its staging/ modules are replaced by path)
build_src() {
  [ -n "$KUBEVIRT_SRC" ] && [ -d "$KUBEVIRT_SRC" ] ||
    die "KUBEVIRT_SRC must name a directory with KubeVirt's source at v$KUBEVIRT_VERSION (git clone --depth 1 --branch v$KUBEVIRT_VERSION https://github.com/kubevirt/kubevirt)"
  SRC=$(cd "$KUBEVIRT_SRC" && pwd)
  [ -f "$SRC/cmd/virt-launcher/virt-launcher.go" ] && [ -d "$SRC/vendor" ] ||
    die "$SRC: not KubeVirt's source tree with vendor/"
  grep -q "^# kubevirt.io/client-go .*=> ./staging/src/kubevirt.io/client-go" "$SRC/vendor/modules.txt" ||
    die "$SRC: vendor/modules.txt does not take kubevirt.io/client-go from staging/"
  local p
  for p in $KUBEVIRT_PATCHES; do
    if (cd "$SRC" && patch -p1 -R --dry-run -s -f < "$p" >/dev/null 2>&1); then continue; fi   # applied already
    (cd "$SRC" && patch -p1 -N -s < "$p") ||
      die "$SRC: $(basename "$p") does not apply (another version of it applied? use a fresh checkout of v$KUBEVIRT_VERSION)"
    log "applied $(basename "$p")"
  done
}

build_bins() {
  stamp "bins-$KUBEVIRT_PATCH_ID" && return 0
  local src=$SRC out=$KUBEVIRT_DIR/bin v=kubevirt.io/client-go/version c
  [ -f /usr/include/libvirt/libvirt.h ] || die "virt-launcher needs libvirt's headers: apt-get install libvirt-dev"
  mkdir -p "$out"
  # binaries of other patches (or none): built again (the Go build cache keeps the rest); virtctl,
  # a client that does no host work, is kept
  rm -f "$out"/virt-* "$out/container-disk"
  # version-stamped as hack/version.sh does
  local ld="-s -w -X $v.gitVersion=v$KUBEVIRT_VERSION -X $v.gitCommit=$KUBEVIRT_COMMIT -X $v.gitTreeState=clean -X $v.buildDate=2023-10-11T19:21:20Z"
  for c in virt-operator virt-api virt-controller virt-handler virt-chroot virt-launcher virt-launcher-monitor virt-freezer virt-probe virtctl; do
    [ -x "$out/$c" ] && continue
    # all with cgo, as KubeVirt's own build: virt-launcher needs it (libvirt.org/go/libvirt), and
    # one setting for all keeps one build cache (CGO_ENABLED=0 recompiles every package)
    (cd "$src" && CGO_ENABLED=1 GOFLAGS="-mod=vendor -buildvcs=false" GOTOOLCHAIN=local \
      nice -n 15 go build -ldflags "$ld" -o "$out/$c.tmp" "./cmd/$c") && mv "$out/$c.tmp" "$out/$c"
    log "built $c"
  done
  # static: it runs in the containerDisk/kernel-boot containers, which have nothing else
  gcc -static -O2 -o "$out/container-disk" "$src/cmd/container-disk-v2alpha/main.c"
  (cd "$src/tools/manifest-templator" && CGO_ENABLED=1 GOFLAGS="-mod=vendor -buildvcs=false" GOTOOLCHAIN=local \
    go build -o "$out/manifest-templator" .)
  stamped "bins-$KUBEVIRT_PATCH_ID"
}

build_rootfs() {
  stamp "rootfs-$KUBEVIRT_ROOTFS_ID" && return 0
  local r=$KUBEVIRT_DIR/rootfs
  if ! stamp debootstrap; then
    command -v debootstrap >/dev/null || die "debootstrap missing (apt-get install debootstrap)"
    rm -rf "$r"
    nice -n 15 debootstrap --variant=minbase bookworm "$r" "$DEBIAN_MIRROR" > "$KUBEVIRT_DIR/debootstrap.log" 2>&1 ||
      die "debootstrap failed: $(tail -3 "$KUBEVIRT_DIR/debootstrap.log")"
    printf '#!/bin/sh\nexit 101\n' > "$r/usr/sbin/policy-rc.d" && chmod 755 "$r/usr/sbin/policy-rc.d"  # no services
    # shellcheck disable=SC2086
    chroot "$r" apt-get install -y --no-install-recommends $LAUNCHER_PACKAGES > "$KUBEVIRT_DIR/apt.log" 2>&1 ||
      die "apt-get install in the root file system failed: $(tail -3 "$KUBEVIRT_DIR/apt.log")"
    stamped debootstrap
  fi
  # a cached root file system built from an older package list: what is new
  # shellcheck disable=SC2086
  if ! chroot "$r" dpkg-query -W $LAUNCHER_PACKAGES >/dev/null 2>&1; then
    { chroot "$r" apt-get update && chroot "$r" apt-get install -y --no-install-recommends $LAUNCHER_PACKAGES; } > "$KUBEVIRT_DIR/apt.log" 2>&1 ||
      die "apt-get install in the root file system failed: $(tail -3 "$KUBEVIRT_DIR/apt.log")"
    log "root file system: installed what is new in $LAUNCHER_PACKAGES"
  fi
  chroot "$r" apt-get clean
  rm -rf "$r/var/lib/apt/lists"/* "$r/usr/share/doc" "$r/usr/share/man" "$r/usr/share/locale"
  # KubeVirt's images have the qemu user as 107:107 (qemu.conf runs QEMU as qemu:qemu)
  chroot "$r" getent group qemu >/dev/null || chroot "$r" groupadd -g 107 qemu
  chroot "$r" getent passwd qemu >/dev/null || chroot "$r" useradd -u 107 -g 107 -d /home/qemu -s /bin/bash qemu
  # Debian's libvirt is built with qemu_user/qemu_group libvirt-qemu: its QEMU driver looks that
  # user up before it reads qemu.conf, and fails without it (libvirt-daemon-system, not installed,
  # would create it)
  chroot "$r" getent group libvirt-qemu >/dev/null || chroot "$r" groupadd -r libvirt-qemu
  chroot "$r" getent passwd libvirt-qemu >/dev/null || chroot "$r" useradd -r -g libvirt-qemu -d /var/lib/libvirt -s /usr/sbin/nologin libvirt-qemu
  chroot "$r" getent passwd 1001 >/dev/null || chroot "$r" useradd -u 1001 -U -d /home/nonroot-user -s /sbin/nologin nonroot-user
  # virt-launcher v1.0 starts /usr/sbin/virtqemud (libvirt's modular QEMU daemon); Debian
  # bookworm's libvirt 9.0 is built with the monolithic libvirtd only, which takes the same
  # configuration (-f virtqemud.conf: listen_tls/listen_tcp/log_outputs) and serves the same
  # qemu:///system URI on /var/run/libvirt/libvirt-sock, where the client library connects
  printf '#!/bin/sh\n# Debian bookworm has no virtqemud: libvirtd (all drivers, QEMU among them) in its place\nexec /usr/sbin/libvirtd "$@"\n' \
    > "$r/usr/sbin/virtqemud"
  chmod 755 "$r/usr/sbin/virtqemud"
  [ -x "$r/usr/bin/qemu-system-x86_64" ] && [ -x "$r/usr/sbin/libvirtd" ] && [ -x "$r/usr/bin/virsh" ] ||
    die "root file system lacks QEMU or libvirt"
  [ -x "$r/usr/bin/xorrisofs" ] || die "root file system lacks xorrisofs (virt-launcher makes Secret disks with it)"
  stamped "rootfs-$KUBEVIRT_ROOTFS_ID"
}

# guest_tool_files TOOL...: each tool (found as the agent image's build.sh finds it: Debian's in
# /usr/bin, netperf/netserver/uperf in /usr/local/bin from .ci/install-third-party.sh) and the
# shared libraries ldd says it loads (the dynamic loader too), one path a line
guest_tool_files() {
  local t b
  for t in "$@"; do
    b=$(PATH=/usr/local/bin:/usr/bin command -v "$t") ||
      die "the guest's tool $t is not on this machine (apt-get install iperf3; netperf: .ci/install-third-party.sh)"
    echo "$b"
    ldd "$b" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'
  done | sort -u
}

build_guest() {
  local g=$KUBEVIRT_GUEST_DIR w m kver deb cn tools f
  mkdir -p "$g"
  cn=${CNPERF_BIN:-$E2E_IMAGES/cnperf}
  [ -x "$cn" ] || die "no cnperf binary at $cn (test/e2e/images/build.sh puts the agent's there; or set CNPERF_BIN)"
  # the tools of the drivers a VM endpoint runs, as cnperf derives them from those drivers
  # (cnperf agent guest-tools; its exec port runs those and nothing else but cnperf); netperf and
  # netserver are the agent image's build (.ci/install-third-party.sh, which does nothing when
  # they are installed)
  tools=$("$cn" agent guest-tools) || die "$cn agent guest-tools failed (a cnperf older than the guest's tools?)"
  case " $(echo $tools) " in *" netperf "*) "$REPO_ROOT/.ci/install-third-party.sh" >/dev/null ;; esac
  [ -x /usr/bin/busybox ] && /usr/bin/busybox --list | grep -qx udhcpc || die "/usr/bin/busybox must be busybox-static (with udhcpc)"
  w=$(mktemp -d "$KUBEVIRT_DIR/.guest.XXXXXX")
  local have=1
  for m in $GUEST_MODULES; do [ -f "$g/modules/$(basename "$m").ko" ] || have=; done
  if [ ! -f "$g/vmlinuz" ] || [ -z "$have" ]; then
    kver=$(apt-cache depends linux-image-amd64 | sed -n 's/.*Depends: linux-image-\([0-9].*\)/\1/p' | head -1)
    [ -n "$kver" ] || die "cannot tell which kernel linux-image-amd64 depends on (apt-get update?)"
    (cd "$w" && apt-get download "linux-image-$kver" >/dev/null 2>&1) || die "apt-get download linux-image-$kver failed"
    deb=$(ls "$w"/linux-image-*.deb) && dpkg -x "$deb" "$w/x"
    rm -rf "$g/modules" && mkdir -p "$g/modules"
    for m in $GUEST_MODULES; do cp "$w/x/lib/modules/$kver/kernel/$m.ko" "$g/modules/" || die "kernel $kver has no module $m"; done
    cp "$w/x/boot/vmlinuz-$kver" "$g/vmlinuz"
    echo "$kver" > "$g/kernel-version"
  fi
  local root=$w/root
  mkdir -p "$root"/{bin,usr/local/bin,etc,lib/modules,proc,sys,dev,run,tmp}
  cp /usr/bin/busybox "$root/bin/busybox" && ln -s busybox "$root/bin/sh"
  cp "$cn" "$root/usr/local/bin/cnperf"
  mkdir -p "$root/usr/bin"
  # shellcheck disable=SC2086
  for f in $(guest_tool_files $tools); do
    case $f in
      /usr/bin/*|/usr/local/bin/*) cp "$f" "$root/usr/bin/$(basename "$f")" ;;
      *) mkdir -p "$root$(dirname "$f")" && cp -L "$f" "$root$f" ;;
    esac
  done
  cp "$HARNESS/kubevirt/guest-init" "$root/init" && chmod 755 "$root/init"
  cp "$HARNESS/kubevirt/udhcpc.script" "$root/etc/udhcpc.script"
  cp "$g"/modules/*.ko "$root/lib/modules/"
  for m in $GUEST_MODULES; do basename "$m"; done > "$root/etc/modules.order"
  [ -f /etc/services ] && cp /etc/services "$root/etc/services"
  python3 "$HARNESS/kubevirt/mkinitramfs.py" "$root" "$g/initramfs.img"
  mkdir -p "$w/img/boot" && cp "$g/vmlinuz" "$w/img/boot/vmlinuz" && cp "$g/initramfs.img" "$w/img/boot/initramfs.img"
  mkdir -p "$(dirname "$KUBEVIRT_GUEST_TAR")"
  python3 "$HARNESS/../images/mkoci.py" "$w/img" "$KUBEVIRT_GUEST_IMAGE" "$KUBEVIRT_GUEST_TAR" --cmd null >/dev/null
  rm -rf "$w"
  log "guest $KUBEVIRT_GUEST_IMAGE: kernel $(cat "$g/kernel-version"), initramfs $(du -h "$g/initramfs.img" | cut -f1) with" \
    "$(basename "$cn") $("$cn" version 2>/dev/null | head -1) and $(echo $tools)"
}

build_images() {
  stamp "images-$KUBEVIRT_PATCH_ID-$KUBEVIRT_ROOTFS_ID" && return 0
  local b=$KUBEVIRT_DIR/bin src=$SRC w c
  w=$(mktemp -d "$KUBEVIRT_DIR/.img.XXXXXX")
  mkdir -p "$KUBEVIRT_DIR/images"
  # virt-operator, virt-api, virt-controller: the binary (linked against glibc: cgo) on the Debian
  # root file system (one shared layer for all five images), as the non-root user 1001 they run
  # as (their Bazel images: //:passwd-image, user 1001)
  for c in virt-operator virt-api virt-controller; do
    mkdir -p "$w/$c/usr/bin"
    cp "$b/$c" "$w/$c/usr/bin/"
    python3 "$HARNESS/../images/mkoci.py" "$KUBEVIRT_DIR/rootfs" "$KUBEVIRT_REPO/$c:v$KUBEVIRT_VERSION" \
      "$KUBEVIRT_DIR/images/$c.tar" --keep-owners --layer "$w/$c" --entrypoint "[\"/usr/bin/$c\"]" --cmd null --user 1001 >/dev/null
  done
  # virt-handler and virt-launcher: the same root file system and their own layer
  mkdir -p "$w/handler/usr/bin" "$w/handler/etc"
  cp "$b/virt-handler" "$b/virt-chroot" "$b/container-disk" "$w/handler/usr/bin/"
  cp "$src/cmd/virt-launcher/nsswitch.conf" "$w/handler/etc/"
  # /var/log/libvirt: libvirtd -d (node-labeller.sh) logs there; Debian makes it in
  # libvirt-daemon-system, which is not installed (no services in a container)
  mkdir -p "$w/launcher/usr/bin" "$w/launcher/etc/libvirt" "$w/launcher/usr/lib64/qemu-kvm" "$w/launcher/var/log/libvirt"
  cp "$b/virt-launcher" "$b/virt-launcher-monitor" "$b/virt-freezer" "$b/virt-probe" "$b/container-disk" \
    "$src/cmd/virt-launcher/node-labeller/node-labeller.sh" "$w/launcher/usr/bin/"
  cp "$src/cmd/virt-launcher/qemu.conf" "$src/cmd/virt-launcher/virtqemud.conf" "$w/launcher/etc/libvirt/"
  # virt-launcher runs "virtlogd -f /etc/libvirt/virtlogd.conf", which Debian ships in
  # libvirt-daemon-system (not installed): without it virtlogd exits ("Can't load config file")
  # and the launcher restarts it every second. Empty: libvirt's defaults
  : > "$w/launcher/etc/libvirt/virtlogd.conf"
  # /var/run as a relative link (Debian's is /run, absolute): virt-handler writes the bridge
  # binding's DHCP configuration to /proc/<launcher>/root/var/run/kubevirt-private/vif-cache-*.json,
  # and an absolute link there resolves in virt-handler's own root, so virt-launcher never found
  # it ("failed plugging phase2 at nic ...: open .../vif-cache-...json: no such file or
  # directory"); a relative link resolves inside the launcher's root from either side
  ln -s ../run "$w/launcher/var/run"
  cp "$src/cmd/virt-launcher/nsswitch.conf" "$w/launcher/etc/"
  python3 "$HARNESS/../images/mkoci.py" "$KUBEVIRT_DIR/rootfs" "$KUBEVIRT_REPO/virt-handler:v$KUBEVIRT_VERSION" \
    "$KUBEVIRT_DIR/images/virt-handler.tar" --keep-owners --layer "$w/handler" --entrypoint '["/usr/bin/virt-handler"]' --cmd null >/dev/null
  python3 "$HARNESS/../images/mkoci.py" "$KUBEVIRT_DIR/rootfs" "$KUBEVIRT_REPO/virt-launcher:v$KUBEVIRT_VERSION" \
    "$KUBEVIRT_DIR/images/virt-launcher.tar" --keep-owners --layer "$w/launcher" --entrypoint '["/usr/bin/virt-launcher"]' --cmd null >/dev/null
  rm -rf "$w"
  stamped "images-$KUBEVIRT_PATCH_ID-$KUBEVIRT_ROOTFS_ID"
}

build_manifests() {
  stamp manifests && return 0
  local src=$SRC t=$KUBEVIRT_DIR/bin/manifest-templator w
  w=$(mktemp -d "$KUBEVIRT_DIR/.man.XXXXXX")
  # as hack/build-manifests.sh: first the generated parts, then the variables
  "$t" --process-files --generated-manifests-dir="$src/manifests/generated/" \
    --input-file="$src/manifests/release/kubevirt-operator.yaml.in" > "$w/operator.yaml.in"
  "$t" --process-vars --namespace="$KUBEVIRT_NS" --container-prefix="$KUBEVIRT_REPO" \
    --container-tag="v$KUBEVIRT_VERSION" --image-pull-policy=IfNotPresent --verbosity=2 \
    --kubevirt-logo-path="$src/assets/kubevirt_logo.png" --package-name=kubevirt-operator --csv-version="$KUBEVIRT_VERSION" \
    --input-file="$w/operator.yaml.in" > "$KUBEVIRT_DIR/kubevirt-operator.yaml"
  grep -q "image: $KUBEVIRT_REPO/virt-operator:v$KUBEVIRT_VERSION" "$KUBEVIRT_DIR/kubevirt-operator.yaml" ||
    die "operator manifest does not name $KUBEVIRT_REPO/virt-operator:v$KUBEVIRT_VERSION"
  rm -rf "$w"
  stamped manifests
}

build() {
  mkdir -p "$KUBEVIRT_DIR"
  if stamp "complete-$KUBEVIRT_PATCH_ID-$KUBEVIRT_ROOTFS_ID"; then log "KubeVirt v$KUBEVIRT_VERSION: cached in $KUBEVIRT_DIR"; else
    log "KubeVirt v$KUBEVIRT_VERSION: building into $KUBEVIRT_DIR"
    timed build_src
    timed build_bins
    timed build_rootfs
    timed build_images
    timed build_manifests
    stamped "complete-$KUBEVIRT_PATCH_ID-$KUBEVIRT_ROOTFS_ID"
  fi
  timed build_guest
}

# guest-check: boot the guest under QEMU (TCG) from the launcher's root file system, with QEMU's
# user network forwarding the agent's control and data ports from 127.0.0.1, and measure it
guest_check() {
  local g=$KUBEVIRT_GUEST_DIR r=$KUBEVIRT_DIR/rootfs cn=${CNPERF_BIN:-$E2E_IMAGES/cnperf} w pid tok t p rc=0 gt
  [ -f "$g/initramfs.img" ] && [ -x "$r/usr/bin/qemu-system-x86_64" ] || die "run kubevirt.sh build first"
  w=$(mktemp -d /tmp/cnperf-guest.XXXXXX)
  # the guest's files in the root file system, for QEMU in its chroot: a name of its own (two
  # guest-checks may share one cached root file system)
  gt=/tmp/cnperf-guest.$$
  mkdir -p "$r$gt"
  cp "$g/vmlinuz" "$g/initramfs.img" "$r$gt/"
  tok=$("$cn" agent token)
  p=$((20000 + RANDOM % 20000))
  # the token as KubeVirt hands a Secret to a guest: an ISO 9660 image made by xorrisofs with
  # virt-launcher's arguments (pkg/config/config.go), a virtio disk with the serial cnperf run
  # gives it (internal/kube/vmi.go)
  mkdir -p "$r$gt/secret" && printf '%s' "$tok" > "$r$gt/secret/token"
  chroot "$r" xorrisofs -output $gt/token.iso -follow-links -volid cfgdata -joliet -rock -graft-points \
    -partition_cyl_align on token=$gt/secret/token 2> "$w/xorrisofs.log" || die "xorrisofs: $(tail -3 "$w/xorrisofs.log")"
  t=$(now)
  chroot "$r" qemu-system-x86_64 -machine q35,accel=tcg -cpu max -m 512 -smp 1 -nographic -no-reboot \
    -kernel $gt/vmlinuz -initrd $gt/initramfs.img \
    -append "console=ttyS0 panic=-1 quiet cnperf.data_port=$((p + 1))" \
    -drive file=$gt/token.iso,if=none,id=token,format=raw,readonly=on -device virtio-blk-pci,drive=token,serial=cnperf-token \
    -netdev "user,id=n0,hostfwd=tcp:127.0.0.1:$p-:7100,hostfwd=tcp:127.0.0.1:$((p + 1))-:$((p + 1)),hostfwd=tcp:127.0.0.1:$((p + 2))-:7102,hostfwd=tcp:127.0.0.1:$((p + 3))-:12865,hostfwd=tcp:127.0.0.1:$((p + 4))-:$((p + 4))" \
    -device virtio-net-pci,netdev=n0 > "$w/console.log" 2>&1 &
  pid=$!
  # shellcheck disable=SC2064
  trap "kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf '$w' '$r$gt'" EXIT
  for _ in $(seq 1 ${GUEST_CHECK_WAIT:-300}); do
    grep -q 'agent listening' "$w/console.log" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 1
  done
  if ! grep -q 'agent listening' "$w/console.log"; then
    echo "kubevirt.sh: the guest's agent did not start within 300s; console's last lines (but the agent's restarts):" >&2
    grep -v 'agent exited\|agent serve' "$w/console.log" | tail -20 | tr -d '\r' >&2
    tail -2 "$w/console.log" | tr -d '\r' >&2
    exit 1
  fi
  grep -q 'token: the run.s Secret, from /dev/vd' "$w/console.log" || { grep -v 'agent exited\|agent serve' "$w/console.log" | tail -30 | tr -d '\r' >&2; die "the guest did not take its token from the disk"; }
  log "guest booted under QEMU TCG: agent listening $(elapsed "$t")s after QEMU started ($(grep -o 'agent starting after [0-9.]*s' "$w/console.log") in guest time)"
  for prof in TCP_STREAM TCP_RR; do
    CNPERF_AGENT_TOKEN=$tok "$cn" agent client --host 127.0.0.1 --port "$p" --profile $prof --duration 5s > "$w/$prof.txt" 2>&1 || rc=1
    sed -n '1,3p' "$w/$prof.txt"
  done
  [ $rc = 0 ] || { cat "$w"/*.txt >&2; die "the agent in the guest did not answer"; }
  # the guest's exec port (what cnperf --vm runs a VM client through): a client in the guest
  # against the guest's own agent
  if ! CNPERF_AGENT_TOKEN=$tok "$cn" agent exec --host 127.0.0.1 --port $((p + 2)) -- \
      cnperf agent client --host 127.0.0.1 --port 7100 --profile TCP_RR --duration 2s > "$w/exec.txt" 2>&1; then
    cat "$w/exec.txt" >&2; die "the guest's exec port did not run a client"
  fi
  log "exec port: a TCP_RR client run in the guest: $(grep -o 'transactions .*' "$w/exec.txt")"
  # the guest's tools (cnperf agent guest-tools), as cnperf --vm runs a netperf server VM: netserver
  # started in the guest in the background through the exec port (as the netperf driver's server
  # argv), then netperf on this host against it (its data port fixed, forwarded as the control
  # port), then a netperf client in the guest against its own netserver, then the servers stopped
  if "$cn" agent guest-tools | grep -qx netserver; then
    CNPERF_AGENT_TOKEN=$tok "$cn" agent exec --host 127.0.0.1 --port $((p + 2)) --background --ready-port 12865 --timeout 60s -- \
      netserver -D -p 12865 > "$w/netserver.txt" 2>&1 || { cat "$w/netserver.txt" >&2; die "netserver did not start in the guest"; }
    for prof in TCP_STREAM TCP_RR; do
      netperf -P 0 -H 127.0.0.1 -p $((p + 3)) -t $prof -l 3 -- -P ",$((p + 4))" -k THROUGHPUT,THROUGHPUT_UNITS > "$w/np-$prof.txt" 2>&1 ||
        { cat "$w/np-$prof.txt" >&2; die "netperf $prof (this host) against netserver in the guest failed"; }
      log "netperf $prof (host) -> netserver (guest): $(tr '\n' ' ' < "$w/np-$prof.txt")"
    done
    CNPERF_AGENT_TOKEN=$tok "$cn" agent exec --host 127.0.0.1 --port $((p + 2)) -- \
      netperf -P 0 -H 127.0.0.1 -p 12865 -t TCP_RR -l 2 -- -k THROUGHPUT,THROUGHPUT_UNITS > "$w/np-guest.txt" 2>&1 ||
      { cat "$w/np-guest.txt" >&2; die "netperf in the guest (exec port) failed"; }
    log "netperf TCP_RR in the guest (exec port) -> its netserver: $(tr '\n' ' ' < "$w/np-guest.txt")"
    # what the exec port refuses: a shell, a path, a tool the guest's drivers do not name
    for a in "sh -c id" "/usr/bin/netperf -V" "busybox id"; do
      # shellcheck disable=SC2086
      if CNPERF_AGENT_TOKEN=$tok "$cn" agent exec --host 127.0.0.1 --port $((p + 2)) -- $a > "$w/refused.txt" 2>&1; then
        die "the exec port ran $a"
      fi
    done
    CNPERF_AGENT_TOKEN=$tok "$cn" agent exec --host 127.0.0.1 --port $((p + 2)) --stop > "$w/stop.txt" 2>&1 ||
      { cat "$w/stop.txt" >&2; die "the exec port did not stop netserver"; }
    log "exec port: $(cat "$w/stop.txt"); a shell, a path and busybox refused"
  fi
}

# ---------------- on the running cluster ----------------
S=$E2E_STATE
cluster() {
  [ -s "$S/e2e.env" ] && [ -s "$S/config" ] || die "no cluster is up ($S/e2e.env missing)"
  NODES=$(grep -c . "$S/nodes")
  KC="$K8S_DIR/kubectl --kubeconfig=$S/admin.kubeconfig"
}
nsn() { local i=$1; shift; nsenter --net="/run/netns/$(node_ns "$i")" --mount="$(node_mnt "$i")" "$@"; }
sock() { echo "$S/node$1/containerd/containerd.sock"; }
# The host directories virt-handler and virt-launcher share (hostPath volumes). Every node of this
# cluster is a mount namespace over the same file system, so each gets its own directory under
# $S/nodeN/host bound onto these paths in its mount namespace (as up.sh does for NODE_PRIVATE_DIRS).
# /var/run/kubevirt and the kubelet's pods directory are mounted Bidirectional by virt-handler,
# which containerd allows only on a shared mount: those two binds are made shared (only they: the
# nodes' other mounts keep their propagation). /var/lib/kubelet/pods is the node's kubelet's
# $S/nodeN/kubelet/pods (the kubelets run with --root-dir there).
KV_NODE_DIRS="/run/kubevirt /run/kubevirt-private /run/kubevirt-libvirt-runtimes /var/lib/kubevirt /var/lib/kubevirt-node-labeller"
KV_SHARED_DIRS="/run/kubevirt /var/lib/kubelet/pods"
node_dirs_up() {
  local i D p h
  for i in $(seq 1 "$NODES"); do
    D=$S/node$i
    for p in $KV_NODE_DIRS /var/lib/kubelet/pods; do
      if [ "$p" = /var/lib/kubelet/pods ]; then h=$D/kubelet/pods; else h=$D/host/kubevirt$(echo "$p" | tr / _); fi
      [ -d "$p" ] || { mkdir -p "$p" && echo "$p" >> "$S/kubevirt-created-paths"; }
      mkdir -p "$h"
      nsn "$i" mountpoint -q "$p" || nsn "$i" mount --bind "$h" "$p"
      case " $KV_SHARED_DIRS " in *" $p "*) nsn "$i" mount --make-shared "$p" ;; esac
    done
    # containerd looks up the mount of a Bidirectional hostPath by its path as written, without
    # resolving symlinks: /var/run/kubevirt (/var/run -> /run) is found on "/", which must then be
    # shared too. Only the node's root mount, not recursively (as systemd leaves "/" on a host)
    if ! nsn "$i" grep -q '^[0-9]* [0-9]* [^ ]* / / [^ ]* shared:' /proc/self/mountinfo; then
      nsn "$i" mount --make-shared /
      echo "node$i" >> "$S/kubevirt-shared-root"
    fi
  done
}
node_dirs_down() {
  local i p
  for i in $(seq 1 "$NODES"); do
    for p in /var/lib/kubelet/pods $KV_NODE_DIRS; do
      # what virt-handler mounted below (container disks, kernel artifacts) first
      nsn "$i" sh -c 'mountpoint -q "$1" && umount -R "$1"' _ "$p" 2>/dev/null || true
    done
    rm -rf "$S/node$i/host"/kubevirt_*
    grep -qx "node$i" "$S/kubevirt-shared-root" 2>/dev/null && nsn "$i" mount --make-private /
  done
  rm -f "$S/kubevirt-shared-root"
  if [ -f "$S/kubevirt-created-paths" ]; then
    tac "$S/kubevirt-created-paths" | while read -r p; do rmdir "$p" 2>/dev/null || true; done
    rm -f "$S/kubevirt-created-paths"
  fi
}

import_images() {
  local i c jobs_="" j
  for i in $(seq 1 "$NODES"); do
    (for c in $KV_COMPONENTS cnperf-guest; do
       ctr --address "$(sock "$i")" -n k8s.io images import "$KUBEVIRT_DIR/images/$c.tar" >/dev/null || exit 1
     done) & jobs_="$jobs_ $!"
  done
  for j in $jobs_; do wait "$j" || die "image import failed"; done
  log "images imported into $NODES nodes: $KV_COMPONENTS cnperf-guest ($KUBEVIRT_REPO/*:v$KUBEVIRT_VERSION)"
}

kubevirt_cr() {
  cat <<YAML
apiVersion: kubevirt.io/v1
kind: KubeVirt
metadata: {name: kubevirt, namespace: $KUBEVIRT_NS}
spec:
  imagePullPolicy: IfNotPresent
  certificateRotateStrategy: {}
  workloadUpdateStrategy: {}
  infra: {replicas: 1}
  configuration:
    developerConfiguration:
      # QEMU's TCG: no hardware virtualization here
      useEmulation: true
      # Root: virt-launcher runs as root (its Debian libvirt/QEMU files are root's); Passt: the
      # passt binding (virt-launcher runs /usr/bin/passt of Debian's package passt and makes
      # /usr/bin/qrap the domain's emulator)
      featureGates: [Root, Passt]
YAML
}

up() {
  cluster
  build
  node_dirs_up
  log "per-node KubeVirt directories bound on $NODES nodes"
  import_images
  $KC apply -f "$KUBEVIRT_DIR/kubevirt-operator.yaml" >/dev/null
  $KC -n "$KUBEVIRT_NS" rollout status deployment/virt-operator --timeout=600s >/dev/null ||
    { $KC -n "$KUBEVIRT_NS" get pods -o wide >&2; die "virt-operator did not become ready"; }
  log "virt-operator ready"
  kubevirt_cr | $KC apply -f - >/dev/null
  if ! $KC -n "$KUBEVIRT_NS" wait kv/kubevirt --for=condition=Available --timeout="${KUBEVIRT_TIMEOUT:-900}s" >/dev/null; then
    $KC -n "$KUBEVIRT_NS" get kv,pods -o wide >&2 || true
    die "KubeVirt did not become Available within ${KUBEVIRT_TIMEOUT:-900}s"
  fi
  log "KubeVirt v$KUBEVIRT_VERSION Available (useEmulation): $($KC -n "$KUBEVIRT_NS" get pods --no-headers | awk '{print $1 "=" $3}' | tr '\n' ' ')"
}

down() {
  cluster
  # the operator's own validating webhook first: when the API server cannot reach it (a cluster
  # of an up.sh without --enable-aggregator-routing, see docs/e2e.md) it rejects the deletion
  # of the CR. Then the CR: the operator removes what it deployed (virt-api/controller/handler,
  # webhooks, the APIService, CRDs other than kubevirts); an APIService left without virt-api
  # makes discovery fail and can stall namespace deletion for everyone
  $KC delete validatingwebhookconfiguration virt-operator-validator --ignore-not-found >/dev/null 2>&1 || true
  if $KC get crd kubevirts.kubevirt.io >/dev/null 2>&1; then
    $KC -n "$KUBEVIRT_NS" delete kv kubevirt --ignore-not-found --wait=true --timeout=300s >/dev/null || true
  fi
  [ -s "$KUBEVIRT_DIR/kubevirt-operator.yaml" ] &&
    $KC delete -f "$KUBEVIRT_DIR/kubevirt-operator.yaml" --ignore-not-found --wait=true --timeout=300s >/dev/null 2>&1 || true
  # what the operator may not have removed when it was gone first
  $KC delete apiservice v1.subresources.kubevirt.io v1alpha3.subresources.kubevirt.io --ignore-not-found >/dev/null 2>&1 || true
  $KC delete validatingwebhookconfiguration virt-operator-validator virt-api-validator --ignore-not-found >/dev/null 2>&1 || true
  $KC delete mutatingwebhookconfiguration virt-api-mutator --ignore-not-found >/dev/null 2>&1 || true
  $KC get crd -o name | grep '\.kubevirt\.io$' | xargs -r $KC delete --ignore-not-found --wait=true --timeout=120s >/dev/null 2>&1 || true
  $KC get clusterrole,clusterrolebinding -o name | grep -E '/(kubevirt|virt-)' | xargs -r $KC delete --ignore-not-found >/dev/null 2>&1 || true
  $KC delete priorityclass kubevirt-cluster-critical --ignore-not-found >/dev/null 2>&1 || true
  $KC delete namespace "$KUBEVIRT_NS" --ignore-not-found --wait=true --timeout=300s >/dev/null 2>&1 || true
  local i c
  for i in $(seq 1 "$NODES"); do
    for c in $KV_COMPONENTS; do ctr --address "$(sock "$i")" -n k8s.io images rm "$KUBEVIRT_REPO/$c:v$KUBEVIRT_VERSION" >/dev/null 2>&1 || true; done
    ctr --address "$(sock "$i")" -n k8s.io images rm "$KUBEVIRT_GUEST_IMAGE" >/dev/null 2>&1 || true
  done
  node_dirs_down
  log "KubeVirt removed"
  check
}

# check: exit 1 and list what kubevirt.sh up left on the running cluster
check() {
  cluster
  local out="" i x p
  add() { [ -z "$2" ] || out="$out$1:"$'\n'"$(echo "$2" | tr ' ' '\n' | grep . | sed 's/^/  /')"$'\n'; }
  add "CRDs" "$($KC get crd -o name 2>/dev/null | grep '\.kubevirt\.io$')"
  add "namespace" "$($KC get namespace "$KUBEVIRT_NS" -o name --ignore-not-found 2>/dev/null)"
  add "APIServices" "$($KC get apiservice -o name 2>/dev/null | grep 'kubevirt\.io$')"
  add "webhooks" "$($KC get validatingwebhookconfiguration,mutatingwebhookconfiguration -o name 2>/dev/null | grep -E '/virt-')"
  add "RBAC" "$($KC get clusterrole,clusterrolebinding -o name 2>/dev/null | grep -E '/(kubevirt|virt-)')"
  add "PriorityClass" "$($KC get priorityclass -o name 2>/dev/null | grep kubevirt)"
  add "pods" "$($KC get pods -A --no-headers 2>/dev/null | awk '$2 ~ /^(virt-launcher|virt-handler|virt-api|virt-controller|virt-operator)-/ {print $1 "/" $2}')"
  x=""; for i in $(seq 1 "$NODES"); do
    for p in /var/lib/kubelet/pods $KV_NODE_DIRS; do nsn "$i" mountpoint -q "$p" 2>/dev/null && x="$x node$i:$p"; done
    ctr --address "$(sock "$i")" -n k8s.io images ls -q 2>/dev/null | grep -q "^$KUBEVIRT_REPO/" && x="$x node$i:images"
  done
  add "nodes" "$x"
  add "processes" "$(pgrep -a -f 'qemu-system-x86_64|/usr/sbin/libvirtd|virt-launcher-monitor' 2>/dev/null | awk '{print $1 ":" $2}')"
  if [ -n "$out" ]; then printf 'kubevirt leftovers:\n%s' "$out" >&2; return 1; fi
  log "kubevirt leftover check: nothing left (CRDs, APIServices, webhooks, RBAC, pods, node mounts, images, QEMU)"
}

case ${1:-} in
  build) build ;;
  guest-check) guest_check ;;
  up) up ;;
  down) down ;;
  check) check ;;
  *) die "usage: kubevirt.sh build|guest-check|up|down|check" ;;
esac
