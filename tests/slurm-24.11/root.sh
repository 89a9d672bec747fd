#!/bin/bash
# make deps: the Debian 13 (trixie) root that make check-slurm-24.11 builds
# and tests sunkd in, with Slurm 24.11 (slurmctld, slurmd, slurmrestd,
# slurm-client, libslurm-dev), munge and sunkd's build and test dependencies.
#   root.sh [ROOT]      (default /opt/sunkd-test/trixie)
# Needs root (debootstrap, chroot).  Builds the root once, from the mirror
# this machine's apt uses, into ROOT.new and renames it into place; a stamp
# (ROOT/.sunkd-root) holds a hash of this script, so the root is rebuilt
# only when it is missing or the script changed.  The packages are in
# tests/slurm-24.11/packages: a root built by this script that lacks some
# of them gets them installed in place (ROOT/.sunkd-packages holds the list
# it has), without a rebuild.  Services never start in it (policy-rc.d says
# no).
set -eu
ROOT=$(realpath -m "${1:-/opt/sunkd-test/trixie}")
SUITE=trixie
here=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" != 0 ]; then
        echo "root.sh: needs root (debootstrap, chroot)" >&2
        exit 2
fi
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8

# The package list, comments and blank lines dropped.
mapfile -t PACKAGES < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/packages" | tr -s ' \t' '\n' | sed '/^$/d')
[ ${#PACKAGES[@]} -gt 0 ] || { echo "root.sh: no packages in $here/packages" >&2; exit 2; }

# not while make check-slurm-24.11 runs in it (tests/slurm-24.11/run.sh)
mkdir -p "$(dirname "$ROOT")"
exec 9>"$ROOT.lock"
flock 9

stamp=$(sha256sum <"$0" | cut -d' ' -f1)
wanted=$(printf '%s\n' "${PACKAGES[@]}" | sort -u)
if [ -f "$ROOT/.sunkd-root" ] && [ "$(cat "$ROOT/.sunkd-root")" = "$stamp" ]; then
        if [ "$(cat "$ROOT/.sunkd-packages" 2>/dev/null)" = "$wanted" ]; then
                echo "root.sh: $ROOT is current"
                exit 0
        fi
        echo "root.sh: installing the package list into $ROOT"
        "$here/chroot.sh" mount "$ROOT"
        trap '"$here/chroot.sh" umount "$ROOT"' EXIT
        cp /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null || true
        chroot "$ROOT" apt-get update </dev/null
        chroot "$ROOT" apt-get install -y --no-install-recommends "${PACKAGES[@]}" </dev/null
        chroot "$ROOT" apt-get clean
        printf '%s\n' "$wanted" >"$ROOT/.sunkd-packages"
        echo "root.sh: $ROOT ready"
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
printf '%s\n' "$wanted" >"$new/.sunkd-packages"
"$here/chroot.sh" umount "$ROOT" 2>/dev/null || true
rm -rf --one-file-system "$ROOT"
mv "$new" "$ROOT"
echo "root.sh: $ROOT ready ($(chroot "$ROOT" dpkg-query -W -f='${Version}' slurmctld) slurmctld)"
