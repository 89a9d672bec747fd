#!/bin/bash
# deadline: 400
# The packages make deb and make rpm built (run by make check-packages, with
# SUNKD_DEB_DIR and SUNKD_RPM_DIR): lintian, rpmlint and hardening-check
# find nothing left unexplained, each package depends on what its binaries
# link, and the .debs go through their lifecycle under the real dpkg: install
# on a clean system, upgrade from the previous build (the same packages
# repacked one version up), remove, purge.  dpkg runs in a throwaway root,
# the host's /usr, /etc and /var under overlays in a mount namespace of its
# own, so the host keeps its dpkg database and files; systemd is not PID 1
# there (nor on this machine), which is the maintainer scripts' other path.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"

[ "$(id -u)" = 0 ] || bail_out "needs root: dpkg installs the packages into a throwaway root under overlay mounts"
for tool in dpkg-deb lintian hardening-check rpm rpmlint unshare systemd-analyze; do
        command -v "$tool" >/dev/null || bail_out "$tool not found: make deps installs it"
done
DEBS="${SUNKD_DEB_DIR:?set by make check-packages}" RPMS="${SUNKD_RPM_DIR:?set by make check-packages}"

if [ "${1:-}" != --in-namespace ]; then
        # The rest runs where its mounts die with it.
        exec unshare --mount --propagation private -- bash "$0" --in-namespace
fi

umask 022
# Everything the test writes is on a tmpfs of this namespace: cleaning up
# is unmounting it, never a recursive rm that could follow a mount out.
T=$(mktemp -d /tmp/sunkd-pkg.XXXXXX) || bail_out "mktemp failed"
mount -t tmpfs -o mode=0755 tmpfs "$T" || { rmdir "$T"; bail_out "cannot mount a tmpfs on $T"; }
DAEMON=
cleanup() {
        [ -n "$DAEMON" ] && kill -KILL "$DAEMON" 2>/dev/null
        umount -R -l "$T" && rmdir "$T"
}
trap cleanup EXIT

deb() { # deb NAME: the one NAME_*.deb
        local f
        f=$(ls "$DEBS"/"$1"_*.deb 2>/dev/null)
        [ -n "$f" ] && [ "$(printf '%s\n' "$f" | wc -l)" = 1 ] || bail_out "no single $1 package in $DEBS"
        echo "$f"
}
D_SUNKD=$(deb sunkd) D_SLURM=$(deb sunkd-slurm) D_DEV=$(deb sunkd-dev)
R_SUNKD=$(ls "$RPMS"/RPMS/*/sunkd-[0-9]*.rpm) R_SLURM=$(ls "$RPMS"/RPMS/*/sunkd-slurm-[0-9]*.rpm) ||
        bail_out "no RPMs in $RPMS/RPMS"
VERSION=$(dpkg-deb -f "$D_SUNKD" Version)

# 1. Lint.  Overrides (packaging/deb/*.lintian-overrides, packaging/rpm/
# sunkd.rpmlintrc) give each accepted finding its reason.  rpmlint reports
# a filter that matched nothing, so each version gets the filters of what it
# finds: rpmlint 2.4 (Debian 12) does not spell-check and has a bug of its
# own (rpmlint-2.4.rpmlintrc); binaries are unstripped only where rpmbuild
# made no -debuginfo package (Debian 12's rpm makes none), and where it made
# one, that package has the findings every -debuginfo has.
out=$(lintian --fail-on none "$DEBS"/sunkd_*.changes 2>&1 | grep -E '^[EW]: ')
is "$out" "" "lintian: no error and no warning"
P="$SUNKD_SRCDIR/packaging/rpm"
{
        case "$(rpmlint --version 2>/dev/null)" in
        2.4.*) grep -v 'spelling-error' "$P/sunkd.rpmlintrc"; cat "$P/rpmlint-2.4.rpmlintrc" ;;
        *) cat "$P/sunkd.rpmlintrc" ;;
        esac
        if compgen -G "$RPMS/RPMS/*/sunkd-debuginfo-*.rpm" > /dev/null; then
                cat "$P/rpmlint-debuginfo.rpmlintrc"
        else
                cat "$P/rpmlint-nodebuginfo.rpmlintrc"
        fi
} > "$T/sunkd.rpmlintrc"
out=$(rpmlint -c "$P/rpmlint.toml" -r "$T/sunkd.rpmlintrc" "$RPMS"/RPMS/*/*.rpm 2>&1)
like "$out" " 0 errors, 0 warnings" "rpmlint: no error and no warning"
printf '%s\n' "$out" | grep -E ': [EW]: ' | sed 's/^/# /'

# 2. Hardening: full RELRO, bindnow, PIE, stack protector, fortify on every
# program and module.  No CET: bookworm's glibc start files have no
# IBT/SHSTK note (packaging/deb/rules).  Branch protection (BTI, PAC) is an
# AArch64 feature, which the hardening-check of devscripts 2.25 (Debian 13)
# checks on every architecture: skipped where it does not apply (Debian 12's
# has no such check).  Stack clash protection is built in (dpkg-buildflags,
# packaging/deb/rules); hardening-check reports it only where a function has
# a frame large enough to be probed, and "unknown" otherwise, which does
# not fail it.
mkdir -p "$T/x"
for f in "$D_SUNKD" "$D_SLURM"; do dpkg-deb -x "$f" "$T/x"; done
elves=$(cd "$T/x" && find . -type f \( -name '*.so' -o -perm -0100 \) -exec sh -c 'head -c4 "$1" | grep -q ELF' _ {} \; -print | sort)
like "$elves" "usr/sbin/sunkd" "the packages' ELF files are found"
skip=--nocfprotection
[ "$(dpkg --print-architecture)" = arm64 ] || ! hardening-check --help 2>&1 | grep -q -e --nobranchprotection ||
        skip="$skip --nobranchprotection"
out=$(cd "$T/x" && hardening-check $skip $elves 2>&1); rc=$?
is "$rc" 0 "hardening-check passes on $(echo $elves | wc -w) files"
[ "$rc" = 0 ] || printf '%s\n' "$out" | grep -v ': yes' | sed 's/^/# /'
for f in usr/sbin/sunkd usr/lib/sunkd/gres.so; do
        like "$(readelf -d "$T/x/$f")" "BIND_NOW" "$f binds now"
        like "$(readelf -l "$T/x/$f")" "GNU_RELRO" "$f has a RELRO segment"
done

# 3. Dependencies: what the binaries link, no more.  sunkd holds nothing tied
# to a Slurm release; the clients sshd and slurmd run link no libcurl.
needed() { objdump -p "$T/x/$1" | awk '/NEEDED/ { print $2 }' | sort | paste -s -d' '; }
is "$(needed usr/libexec/sunkd/sunkd-authkeys)" "libc.so.6 libjson-c.so.5" "sunkd-authkeys links json-c and libc only"
is "$(needed usr/bin/sunkctl)" "libc.so.6 libjson-c.so.5" "so does sunkctl"
is "$(needed usr/libexec/sunkd/sunkd-prolog)" "libc.so.6 libjson-c.so.5 libresolv.so.2" \
        "so does sunkd-prolog, which slurmd runs (libresolv, of libc6, for base64)"
dep=$(dpkg-deb -f "$D_SUNKD" Depends)
unlike "$dep" "libslurm|libmunge" "sunkd does not depend on libslurm or libmunge"
like "$dep" "libcurl4" "it depends on libcurl4 (nsscache.so)"
like "$(dpkg-deb -f "$D_SLURM" Depends)" "sunkd \(= $VERSION\).*libmunge2.*libslurm[0-9]+" \
        "sunkd-slurm depends on its sunkd build, libmunge and the libslurm it links"
# scontrol, which the health module's default transport runs: recommended
# (apt installs it unless told not to), not required, since a node whose
# Slurm is built from source has its own and the other transports need none.
is "$(dpkg-deb -f "$D_SLURM" Recommends)" "slurm-client" "sunkd-slurm recommends slurm-client, for scontrol"
unlike "$(dpkg-deb -f "$D_SLURM" Depends)" "slurm-client" "and does not depend on it"
unlike "$(dpkg-deb -f "$D_SUNKD" Depends Recommends)" "slurm" "sunkd neither depends on a Slurm package nor recommends one"
is "$(rpm -qp --recommends "$R_SLURM" 2>/dev/null)" "/usr/bin/scontrol" "the sunkd-slurm RPM recommends scontrol"
is "$(rpm -qp --requires "$R_SUNKD" 2>/dev/null | grep -c -E 'libslurm|libmunge')" 0 "the sunkd RPM neither"
like "$(rpm -qp --requires "$R_SLURM" 2>/dev/null)" "libslurm\.so" "the sunkd-slurm RPM requires libslurm"
like "$(rpm -qp --qf '[%{FILENAMES} %{FILEFLAGS:fflags}\n]' "$R_SUNKD" 2>/dev/null)" "/etc/sunkd/sunkd.yaml cn" \
        "sunkd.yaml is %config(noreplace) in the RPM"
like "$(dpkg-deb -I "$D_SUNKD" conffiles)" "^/etc/sunkd/sunkd.yaml$" "and a conffile in the .deb"

# 4. The throwaway root: the host's /usr, /etc and /var under overlays whose
# upper layers are on the tmpfs; its own /run, /tmp and a /dev of its own
# with the few device nodes dpkg and its scripts use (not the host's /dev).
R="$T/root"
mkdir -p "$T/ovl" "$R"
for d in usr etc var; do
        mkdir -p "$T/ovl/$d" "$T/ovl/$d.work" "$R/$d"
        mount -t overlay overlay -o "lowerdir=/$d,upperdir=$T/ovl/$d,workdir=$T/ovl/$d.work" "$R/$d" ||
                bail_out "cannot put an overlay on /$d"
done
for l in bin sbin lib lib32 lib64 libx32; do
        if [ -L "/$l" ]; then ln -s "$(readlink "/$l")" "$R/$l"; elif [ -d "/$l" ]; then bail_out "/$l is not merged into /usr"; fi
done
mkdir -p "$R/proc" "$R/dev" "$R/run" "$R/tmp" "$R/root"
mount -t proc proc "$R/proc" && mount -t tmpfs -o mode=0755 tmpfs "$R/run" &&
        mount -t tmpfs -o mode=1777 tmpfs "$R/tmp" || bail_out "cannot mount /proc, /run, /tmp in the root"
for n in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0; do
        IFS=: read -r name major minor <<< "$n"
        mknod -m 666 "$R/dev/$name" c "$major" "$minor" || bail_out "cannot create $R/dev/$name"
done
ln -s /proc/self/fd "$R/dev/fd"
in_root() { chroot "$R" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 "$@"; }
dpkg_in_root() { in_root dpkg --force-unsafe-io "$@" < /dev/null > "$T/dpkg.log" 2>&1 || { sed 's/^/# /' "$T/dpkg.log"; return 1; }; }
# A clean system: nothing of sunkd, as if never installed.
for p in sunkd-dev sunkd-slurm sunkd; do
        in_root dpkg-query -W "$p" >/dev/null 2>&1 && { dpkg_in_root --purge "$p" || bail_out "cannot purge $p in the root"; }
done
rm -rf "$R/etc/sunkd" "$R/var/lib/sunkd" "$R/usr/lib/sunkd" "$R/usr/libexec/sunkd" "$R"/etc/systemd/system/*/sunkd.*
[ ! -e /run/systemd/system ] || diag "systemd runs here, but not in the root: no service is started there"
cp "$D_SUNKD" "$D_SLURM" "$D_DEV" "$R/tmp/"
host_status=$(md5sum < /var/lib/dpkg/status)

# 5. Install.
ok "dpkg installs sunkd, sunkd-slurm and sunkd-dev" dpkg_in_root -i /tmp/"${D_SUNKD##*/}" /tmp/"${D_SLURM##*/}" /tmp/"${D_DEV##*/}"
is "$(in_root dpkg-query -W -f '${Status} ${Version}' sunkd)" "install ok installed $VERSION" "sunkd is installed"
# The README's deploy steps use what the packages install and nothing of the
# source tree: every file of sunkd's under /usr (and /etc/sunkd's example) it
# names is in the root.
have() { compgen -G "$1" > /dev/null; }
while read -r p; do
        case "$p" in
        /etc/sunkd/*.example|/usr/*sunk*) ;;
        *) continue ;;
        esac
        ok "README.md's $p is installed by the packages" have "$R$p"
done <<< "$(grep -oE '(/usr|/etc/sunkd)/[A-Za-z0-9_./*-]*' "$SUNKD_SRCDIR/README.md" | sed 's/\.$//' | sort -u)"
out=$(in_root sunkd --check-config 2>&1); rc=$?
is "$rc" 0 "sunkd --check-config passes on the shipped sunkd.yaml"
like "$out" "Configuration '/etc/sunkd/sunkd.yaml' is valid\." "and says so"
ok "the state directory is created (tmpfiles.d)" test -d "$R/var/lib/sunkd"
ok "sunkd.service is enabled" test -L "$R/etc/systemd/system/multi-user.target.wants/sunkd.service"
ok "sunkd.socket is enabled" test -L "$R/etc/systemd/system/sockets.target.wants/sunkd.socket"
# sshd runs sunkd-authkeys only if it and every directory above it are root's
# and writable by root alone.
p=/usr/libexec/sunkd/sunkd-authkeys bad=
while [ "$p" != / ]; do
        [ "$(stat -L -c '%U:%G %a' "$R$p")" = "root:root 755" ] || bad="$bad $p($(stat -L -c '%U:%G %a' "$R$p"))"
        p=$(dirname "$p")
done
is "${bad# }" "" "sunkd-authkeys and each directory above it are root:root 0755"
# The installed units, drop-in included, as systemd would load them.
out=$(in_root systemd-analyze verify /lib/systemd/system/sunkd.socket /lib/systemd/system/sunkd.service 2>&1); rc=$?
is "$rc:$out" "0:" "systemd-analyze verify: the installed units are clean"
stop=$(sed -n 's/^TimeoutStopSec=//p' "$R/lib/systemd/system/sunkd.service.d/prolog.conf")
like "$stop" "^[0-9]+min$" "the prolog drop-in sets TimeoutStopSec"
ok "it is at least 15min, which covers a prolog run's total_timeout plus kill_grace" test "${stop%min}" -ge 15
# The service starts with the shipped configuration: sunkd as systemd would
# run it, without systemd.
(exec chroot "$R" env -i PATH=/usr/sbin:/usr/bin sunkd > "$T/sunkd.log" 2>&1) &
DAEMON=$!
for _ in $(seq 600); do [ -S "$R/run/sunkd/io.sunkd" ] && break; kill -0 "$DAEMON" 2>/dev/null || break; sleep 0.1; done
like "$(in_root sunkctl status 2>&1)" "ready" "the installed sunkd starts with it and answers sunkctl status"
kill -TERM "$DAEMON"; wait "$DAEMON"; rc=$?; DAEMON=
is "$rc" 0 "and stops cleanly"
# The prolog module's default directories come with sunkd-slurm, root's and
# empty: a section that names none passes, as sunkd refuses a missing one.
ok "sunkd-slurm ships /etc/sunkd/prolog.d and /etc/sunkd/epilog.d, root's, 0755" test \
        "$(stat -c '%U:%G %a' "$R/etc/sunkd/prolog.d" "$R/etc/sunkd/epilog.d" 2>&1 | paste -s -d' ')" = "root:root 755 root:root 755"
printf 'modules:\n  prolog: {}\n' > "$R/root/prolog.yaml"
out=$(in_root sunkd --check-config -c /root/prolog.yaml 2>&1); rc=$?
is "$rc" 0 "a prolog section with the default directories passes --check-config"
[ "$rc" = 0 ] || printf '%s\n' "$out" | sed 's/^/# /'
rm -f "$R/root/prolog.yaml"

# What an operator and sunkd leave: a changed sunkd.yaml, published caches,
# state.
printf 'log_level: debug\n' >> "$R/etc/sunkd/sunkd.yaml"
changed=$(md5sum < "$R/etc/sunkd/sunkd.yaml")
for m in passwd group shadow sshkey; do echo "ada:x:1001:1001::/home/ada:/bin/bash" > "$R/etc/$m.cache"; done
mkdir -p "$R/var/lib/sunkd/nsscache" && echo state > "$R/var/lib/sunkd/nsscache/marker"
# What an admin makes in /etc/sunkd: a prolog script in the shipped prolog.d,
# the fleet's signing key where the README puts it.
printf '#!/bin/sh\nexit 0\n' > "$R/etc/sunkd/prolog.d/10-admin" && chmod 755 "$R/etc/sunkd/prolog.d/10-admin"
(umask 077 && printf 'admin key\n' > "$R/etc/sunkd/maps.key")

# 6. Upgrade from this build to the next: the same packages one version up,
# whose sunkd.yaml.example changed (an unchanged conffile is replaced, a
# changed one kept, without a prompt).
NEXT="$VERSION+1"
repack() { # repack DEB: $R/tmp/next/NAME.deb at $NEXT
        local x="$T/repack/${1##*/}"
        rm -rf "$x" && mkdir -p "$x" && dpkg-deb -R "$1" "$x" || return 1
        sed -i -e "s/^Version: .*/Version: $NEXT/" -e "s/(= $VERSION)/(= $NEXT)/" "$x/DEBIAN/control"
        if [ -f "$x/etc/sunkd/sunkd.yaml.example" ]; then
                echo "# $NEXT" >> "$x/etc/sunkd/sunkd.yaml.example"
                (cd "$x" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum > DEBIAN/md5sums)
        fi
        mkdir -p "$R/tmp/next" && dpkg-deb -b "$x" "$R/tmp/next/" > /dev/null
}
for f in "$D_SUNKD" "$D_SLURM" "$D_DEV"; do repack "$f" || bail_out "cannot repack $f"; done
ok "dpkg upgrades to $NEXT" dpkg_in_root -i $(cd "$R" && ls tmp/next/*.deb | sed 's|^|/|')
is "$(in_root dpkg-query -W -f '${Version}' sunkd)" "$NEXT" "sunkd is at $NEXT"
is "$(md5sum < "$R/etc/sunkd/sunkd.yaml")" "$changed" "the changed sunkd.yaml is kept"
is "$(tail -n 1 "$R/etc/sunkd/sunkd.yaml.example")" "# $NEXT" "the unchanged example is the new one"
is "$(cat "$R/etc/passwd.cache" "$R/var/lib/sunkd/nsscache/marker" 2>&1 | paste -s -d' ')" \
        "ada:x:1001:1001::/home/ada:/bin/bash state" "the caches and the state directory are kept"
ok "no .dpkg-dist or .dpkg-old left beside it" test -z "$(ls "$R/etc/sunkd" | grep dpkg)"

# 7. Remove keeps the configuration, the state and the caches.
ok "dpkg removes the packages" dpkg_in_root -r sunkd-dev sunkd-slurm sunkd
ok "the daemon is gone" test ! -e "$R/usr/sbin/sunkd"
is "$(md5sum < "$R/etc/sunkd/sunkd.yaml")" "$changed" "sunkd.yaml stays"
ok "the state directory stays" test -f "$R/var/lib/sunkd/nsscache/marker"

# 8. Purge removes what the packages installed, the SCIM token and the state,
# never what an admin made (scripts, keys) nor the caches logins read
# through nsswitch.conf.
printf 'secret\n' > "$R/etc/sunkd/scim-token"
ok "dpkg purges sunkd" dpkg_in_root -P sunkd-dev sunkd-slurm sunkd
ok "sunkd.yaml and sunkd.yaml.example are gone" test ! -e "$R/etc/sunkd/sunkd.yaml" -a ! -e "$R/etc/sunkd/sunkd.yaml.example"
ok "the SCIM token is gone" test ! -e "$R/etc/sunkd/scim-token"
ok "the empty epilog.d is gone" test ! -e "$R/etc/sunkd/epilog.d"
is "$(cat "$R/etc/sunkd/prolog.d/10-admin" 2>&1)" $'#!/bin/sh\nexit 0' "the admin's prolog script stays"
is "$(cat "$R/etc/sunkd/maps.key" 2>&1)" "admin key" "the admin's signing key stays"
is "$(cd "$R/etc/sunkd" && find . | sort | paste -s -d' ')" ". ./maps.key ./prolog.d ./prolog.d/10-admin" \
        "nothing else is left in /etc/sunkd"
ok "/var/lib/sunkd is gone" test ! -e "$R/var/lib/sunkd"
ok "the units' enable links are gone" test ! -e "$R/etc/systemd/system/multi-user.target.wants/sunkd.service" -a \
        ! -e "$R/etc/systemd/system/sockets.target.wants/sunkd.socket"
for m in passwd group shadow sshkey; do
        ok "/etc/$m.cache stays" test -s "$R/etc/$m.cache"
done
is "$(in_root dpkg-query -W -f '${Status}' sunkd 2>&1)" "dpkg-query: no packages found matching sunkd" "dpkg has forgotten sunkd"
# Where the admin added nothing, purge leaves no /etc/sunkd at all.
rm -rf "$R/etc/sunkd"
ok "dpkg installs the packages again" dpkg_in_root -i /tmp/"${D_SUNKD##*/}" /tmp/"${D_SLURM##*/}" /tmp/"${D_DEV##*/}"
printf 'secret\n' > "$R/etc/sunkd/scim-token"
ok "and purges them" dpkg_in_root -P sunkd-dev sunkd-slurm sunkd
ok "/etc/sunkd is gone" test ! -e "$R/etc/sunkd"

# 9. The host saw none of it.
is "$(md5sum < /var/lib/dpkg/status)" "$host_status" "the host's dpkg database is unchanged"

done_testing
