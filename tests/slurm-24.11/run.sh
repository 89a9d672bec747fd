#!/bin/bash
# make check-slurm-24.11: builds sunkd inside the Debian 13 root that make
# deps prepares (tests/slurm-24.11/root.sh), against its libslurm, and runs
# there every test that starts a Slurm daemon, the real slurmrestd's, the
# unit tests and fuzz replay of the Slurm transports, and the ldap source's
# tests with Debian 13's slapd and libldap, next to Debian 13's nsscache
# run against the same directory (nsscache-debian.t).
#   run.sh [TEST...]    (default: the list below)
#   run.sh --packages   make deb and make rpm in the root instead, and
#                       0310-packages.t there on what they built
# Needs root (mount, chroot).  The source tree is bind-mounted at /src in the
# root and built in /src/build-24.11 (kept between runs, so a second run
# builds only what changed); the logs are there, the daemons' versions in
# build-24.11/slurm-versions.log and at the top of this output.  Ends with
# "N passed, N failed".  Whatever the tests left running in the root is
# ended and the mounts are undone on the way out.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
ROOT=$(realpath -m "${SUNKD_TRIXIE_ROOT:-/opt/sunkd-test/trixie}")
BUILD=build-24.11
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
here="$src/tests/slurm-24.11"

DEFAULT_TESTS=(
        tests/unit/test-health-rest
        tests/unit/test-health-jwt
        tests/unit/test-health-signal
        tests/fuzz/slurm-nodes.t
        tests/integration/0270-gres.t
        tests/integration/0271-gres-slurmd.t
        tests/integration/0274-gres-driver-text.t
        tests/integration/0280-health-drain.t
        tests/integration/0281-health-fleet-guard.t
        tests/integration/0282-health-jwt.t
        tests/integration/0283-health-slurmrestd.t
        tests/integration/0284-health-libslurm.t
        tests/integration/0285-health-gpu.t
        tests/integration/0290-prolog.t
        tests/integration/0291-prolog-slurm.t
        tests/integration/0325-health-user-processes.t
        tests/integration/0306-s6-overlay.t
        tests/slurm-24.11/health-slurmrestd.t
        tests/slurm-24.11/prolog-runinjob.t
        tests/integration/0245-nsscache-ldap.t
        tests/integration/0246-nsscache-ldap-getent.t
        tests/integration/0247-nsscache-netgroup.t
        tests/integration/0248-nsscache-automount.t
        tests/slurm-24.11/nsscache-debian.t
)
packages=
if [ "${1:-}" = --packages ]; then
        packages=1
        shift
fi
tests=("$@")
[ ${#tests[@]} -gt 0 ] || [ -n "$packages" ] || tests=("${DEFAULT_TESTS[@]}")

fail() {
        echo "check-slurm-24.11: $*" >&2
        echo "0 passed, 1 failed"
        exit 1
}
# No result of an earlier run may count for this one.
rm -f "$src/$BUILD/test-suite.log" "$src/$BUILD/packages-suite.log"
find "$src/$BUILD/tests" -name '*.trs' -delete 2>/dev/null
[ "$(id -u)" = 0 ] || fail "needs root (mount, chroot)"
[ -f "$ROOT/.sunkd-root" ] || fail "no Debian 13 root at $ROOT: run make deps (tests/slurm-24.11/root.sh)"
[ -x "$src/configure" ] || fail "no configure in $src: run make configure"
# One run at a time in the root: a second waits for the first.
exec 9>"$ROOT.lock"
flock -n 9 || { echo "check-slurm-24.11: waiting for another run in $ROOT"; flock 9; }

# Processes whose root is $ROOT: only what this run started there.
in_root() {
        local p r
        for p in /proc/[0-9]*; do
                r=$(readlink "$p/root" 2>/dev/null) || continue
                [ "$r" = "$ROOT" ] && echo "${p#/proc/}"
        done
}
cleanup() {
        local p
        for p in $(in_root); do kill -TERM "$p" 2>/dev/null; done
        for _ in $(seq 50); do [ -z "$(in_root)" ] && break; sleep 0.1; done
        for p in $(in_root); do kill -KILL "$p" 2>/dev/null; done
        "$here/chroot.sh" umount "$ROOT"
}
trap cleanup EXIT
"$here/chroot.sh" mount "$ROOT" || fail "could not mount /proc, /sys, /dev, /run in $ROOT"
mkdir -p "$ROOT/src"
mountpoint -q "$ROOT/src" || mount --bind "$src" "$ROOT/src" || fail "could not bind $src at $ROOT/src"
mkdir -p "$src/$BUILD"

# The build is held to --enable-werror with gcc 14 as with gcc 12: a
# distribution's newer compiler never breaks it.

in_chroot() {
        chroot "$ROOT" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
                HOME=/root LANG=C.UTF-8 TERM=dumb JOBS="$JOBS" "$@" </dev/null
}

versions=$(in_chroot sh -c '. /etc/os-release; echo "root: $PRETTY_NAME"
        for p in slurmctld slurmd slurmrestd; do printf "%s: " $p; $p -V; done
        for p in slurm-client libslurm-dev; do printf "%s: " $p; dpkg-query -W -f="\${Version}\n" $p; done
        printf "munge: "; munged --version' 2>&1)
printf '%s\n' "$versions" | tee "$src/$BUILD/slurm-versions.log"

echo "== build in $ROOT (/src/$BUILD)"
in_chroot bash -c 'set -e; cd /src/'"$BUILD"'
        ./config.status --config 2>/dev/null | grep -q -e "-Wno-error" && rm -f config.status
        [ -x config.status ] || ../configure --enable-werror --prefix=/usr --sysconfdir=/etc --localstatedir=/var
        nice -n 10 make -j"$JOBS"
        nice -n 10 make -j"$JOBS" check TESTS=' >"$src/$BUILD/build.log" 2>&1 ||
        { tail -n 40 "$src/$BUILD/build.log"; fail "the build in the Debian 13 root failed ($BUILD/build.log)"; }

if [ -n "$packages" ]; then
        # Built from a copy of the tree (the top-level Makefile's deb and rpm),
        # against the root's libslurm, then linted, checked and put through
        # dpkg's install, upgrade and purge in a throwaway root of the root.
        echo "== make deb, make rpm in $ROOT"
        in_chroot bash -c 'set -e; cd /src; nice -n 10 make deb rpm DEB_DIR=build-24.11-deb RPM_DIR=build-24.11-rpm JOBS="$JOBS"' \
                >"$src/$BUILD/packages-build.log" 2>&1 ||
                { tail -n 40 "$src/$BUILD/packages-build.log"; fail "make deb or make rpm failed in the root ($BUILD/packages-build.log)"; }
        ls "$src"/build-24.11-deb/*.deb
        in_chroot env SUNKD_DEB_DIR=/src/build-24.11-deb SUNKD_RPM_DIR=/src/build-24.11-rpm make -C "/src/$BUILD" check \
                TESTS=tests/integration/0310-packages.t TEST_SUITE_LOG=packages-suite.log >"$src/$BUILD/check.log" 2>&1
        rc=$?
        grep -E '^(PASS|FAIL|ERROR|SKIP):|^# [A-Z]' "$src/$BUILD/check.log"
        [ "$rc" -eq 0 ] || tail -n 30 "$src/$BUILD/tests/integration/0310-packages.log"
        "$src/tests/lib/summary" "$src/$BUILD"
        exit "$rc"
fi

echo "== tests in $ROOT: ${#tests[@]}"
in_chroot make -C "/src/$BUILD" -j"$JOBS" check TESTS="${tests[*]}" >"$src/$BUILD/check.log" 2>&1
rc=$?
grep -E '^(PASS|FAIL|ERROR|SKIP|XFAIL|XPASS):|^# [A-Z]' "$src/$BUILD/check.log"
[ -f "$src/$BUILD/test-suite.log" ] || tail -n 40 "$src/$BUILD/check.log"
if [ "$rc" -ne 0 ]; then
        grep -E '^(FAIL|ERROR):' "$src/$BUILD/test-suite.log" 2>/dev/null | sed -E 's/^[A-Z]+: ([^ ]+).*/\1/' | sort -u | head -5 |
                while read -r t; do
                        [ -f "$src/$BUILD/$t.log" ] || continue
                        echo "-- $BUILD/$t.log (last 30 lines)"
                        tail -n 30 "$src/$BUILD/$t.log"
                done
fi
"$src/tests/lib/summary" "$src/$BUILD"
exit "$rc"
