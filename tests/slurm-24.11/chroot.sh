#!/bin/bash
# The kernel file systems a test root needs, mounted and unmounted.
#   chroot.sh mount ROOT     ROOT onto itself, then /proc, /sys, /dev, /dev/pts, /dev/shm,
#                            /run (tmpfs, with /run/lock), /tmp (tmpfs)
#   chroot.sh umount ROOT    everything under ROOT and ROOT itself, deepest first
set -eu
cmd=$1
root=$(realpath -m "$2")
case "$cmd" in
mount)
        # the root a mount point of its own, so that unshare -m in it (as
        # 0310-packages.t does) can make its mounts private
        mountpoint -q "$root" || mount --bind "$root" "$root"
        m() { mountpoint -q "$root$2" || { mkdir -p "$root$2" && mount "${@:3}" "$1" "$root$2"; }; }
        m proc /proc -t proc
        m sysfs /sys -t sysfs
        m /dev /dev --bind
        m devpts /dev/pts -t devpts -o newinstance,ptmxmode=0666
        m tmpfs /dev/shm -t tmpfs
        m tmpfs /run -t tmpfs -o mode=755
        # what a booted Debian has in /run (tests lock files there)
        mkdir -p "$root/run/lock" && chmod 1777 "$root/run/lock"
        m tmpfs /tmp -t tmpfs -o mode=1777
        ;;
umount)
        # Deepest first; lazily, so that a daemon left behind cannot keep a mount.
        findmnt -rn -o TARGET | awk -v r="$root" '$0 == r || index($0, r "/") == 1' | sort -r |
                while read -r t; do umount -l "$t" || true; done
        ;;
*)
        echo "chroot.sh: mount|umount ROOT" >&2
        exit 2
        ;;
esac
