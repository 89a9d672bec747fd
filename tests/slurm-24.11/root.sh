#!/bin/bash
# make deps: the Debian 13 (trixie) root that make check-slurm-24.11 builds
# and tests sunkd in, with Slurm 24.11 (slurmctld, slurmd, slurmrestd,
# slurm-client, libslurm-dev), munge and sunkd's build and test dependencies.
#   root.sh [ROOT]      (default /opt/sunkd-test/trixie)
# Needs root (debootstrap, chroot).  Builds the root once, from the mirror
# this machine's apt uses, into ROOT.new and renames it into place; a stamp
# (ROOT/.sunkd-root) holds a hash of this script and the package list, so
# the root is rebuilt only when it is missing or either changed.  Services
# never start in it (policy-rc.d says no).
set -eu
ROOT=$(realpath -m "${1:-/opt/sunkd-test/trixie}")
SUITE=trixie
here=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" != 0 ]; then
        echo "root.sh: needs root (debootstrap, chroot)" >&2
        exit 2
fi
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8

# What the 24.11 tests run (the daemons, the JWT plugin, munge, the
# companions the Slurm-facing tests start: s6, python3, curl, openssl,
# strace, procps, util-linux), what sunkd builds with, and what make deb,
# make rpm and 0310-packages.t use (debhelper, lintian, devscripts, rpm,
# rpmlint, systemd-analyze; systemd-dev has systemd.pc in Debian 13;
# elfutils has the eu-strip that Debian 13's rpmbuild runs, through
# find-debuginfo, to strip the binaries into sunkd-debuginfo, which is
# otherwise left without them).
PACKAGES=(build-essential autoconf automake libtool autoconf-archive pkg-config
        libsystemd-dev libcurl4-openssl-dev libjson-c-dev libyaml-dev libssl-dev check
        libmunge-dev libslurm-dev libbz2-dev zlib1g-dev
        munge slurmctld slurmd slurmrestd slurm-client slurm-wlm-jwt-plugin
        s6 python3 curl openssl strace procps util-linux iproute2 groff-base git
        debhelper dpkg-dev fakeroot lintian devscripts ca-certificates
        systemd systemd-dev rpm rpmlint elfutils)

# not while make check-slurm-24.11 runs in it (tests/slurm-24.11/run.sh)
mkdir -p "$(dirname "$ROOT")"
exec 9>"$ROOT.lock"
flock 9

stamp=$( { cat "$0"; printf '%s\n' "${PACKAGES[@]}"; } | sha256sum | cut -d' ' -f1)
if [ -f "$ROOT/.sunkd-root" ] && [ "$(cat "$ROOT/.sunkd-root")" = "$stamp" ]; then
        echo "root.sh: $ROOT is current"
        exit 0
fi

# The mirror apt uses here (deb.debian.org unless configured otherwise).
mirror=$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)\/*$/\1/p; s/^deb  *\(http[^ ]*\/debian\)\/* .*/\1/p' \
        /etc/apt/sources.list.d/*.sources /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | head -n1)
mirror=${mirror:-http://deb.debian.org/debian}
command -v debootstrap >/dev/null || apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends debootstrap

new=$ROOT.new
"$here/chroot.sh" umount "$new" 2>/dev/null || true
rm -rf --one-file-system "$new"
mkdir -p "$(dirname "$ROOT")"
echo "root.sh: debootstrap $SUITE from $mirror into $new"
debootstrap --variant=minbase "$SUITE" "$new" "$mirror" </dev/null
printf '#!/bin/sh\n# sunkd test root: no service starts here\nexit 101\n' >"$new/usr/sbin/policy-rc.d"
chmod 755 "$new/usr/sbin/policy-rc.d"
cp /etc/resolv.conf "$new/etc/resolv.conf" 2>/dev/null || true
"$here/chroot.sh" mount "$new"
trap '"$here/chroot.sh" umount "$new"' EXIT
chroot "$new" apt-get update </dev/null
chroot "$new" apt-get install -y --no-install-recommends "${PACKAGES[@]}" </dev/null
chroot "$new" apt-get clean
"$here/chroot.sh" umount "$new"
trap - EXIT
echo "$stamp" >"$new/.sunkd-root"
"$here/chroot.sh" umount "$ROOT" 2>/dev/null || true
rm -rf --one-file-system "$ROOT"
mv "$new" "$ROOT"
echo "root.sh: $ROOT ready ($(chroot "$ROOT" dpkg-query -W -f='${Version}' slurmctld) slurmctld)"
