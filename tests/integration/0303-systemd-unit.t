#!/bin/bash
# The generated sunkd.service: systemd-analyze verify finds nothing to
# report (with ExecStart pointed at this build's sunkd and the man pages of
# Documentation= on MANPATH), and the unit keeps the promises sunkd(8)
# makes about it.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup

command -v systemd-analyze >/dev/null || bail_out "systemd-analyze not found: install the Debian package systemd (make deps)"
UNIT="$SUNKD_BUILDDIR/systemd/sunkd.service"
[ -f "$UNIT" ] || bail_out "systemd/sunkd.service not built in $SUNKD_BUILDDIR"

# The man pages the unit's Documentation= names.
mkdir -p "$T/man/man1" "$T/man/man5" "$T/man/man8"
for p in sunkctl.1 sunkd.yaml.5 sunkd.8; do
        cp "$SUNKD_BUILDDIR/man/$p" "$T/man/man${p##*.}/" || bail_out "man/$p not built"
done

mkdir -p "$T/unit"
exec_start=$(sed -n 's/^ExecStart=//p' "$UNIT")
sed -e "s|^ExecStart=[^ ]*|ExecStart=$SUNKD|" "$UNIT" > "$T/unit/sunkd.service"

verify() {
        MANPATH="$T/man:" SYSTEMD_LOG_COLOR=0 systemd-analyze verify "$1" 2>&1
        echo "rc=$?"
}
is "$(verify "$T/unit/sunkd.service")" "rc=0" "systemd-analyze verify reports nothing"

# The check is real: a missing binary is reported.
sed -e "s|^ExecStart=[^ ]*|ExecStart=$T/no-such-sunkd|" "$UNIT" > "$T/unit/broken.service"
like "$(verify "$T/unit/broken.service")" "no-such-sunkd" "a missing ExecStart binary would be reported"

default_conf=$("$SUNKD" --help | sed -n -E 's/.*configuration file \(default ([^)]+)\).*/\1/p')
like "$exec_start" "^/[^ ]*/sunkd --config=$default_conf\$" "ExecStart runs sbindir's sunkd with the compiled-in config path"

get() { sed -n "s/^$1=//p" "$UNIT"; }
is "$(get Type)" notify "Type=notify"
is "$(get ExecReload)" '/bin/kill -HUP $MAINPID' "ExecReload sends SIGHUP"
like "$(get WatchdogSec)" "^[0-9]+s$" "WatchdogSec is set"
is "$(get Restart)" on-failure "Restart=on-failure"
is "$(get RestartPreventExitStatus)" 2 "no restart after a configuration error (exit status 2)"
is "$(get RuntimeDirectory)" sunkd "RuntimeDirectory=sunkd holds /run/sunkd/io.sunkd"
is "$(get StateDirectory)" sunkd "StateDirectory=sunkd is the default state_dir"
like "$(get ProtectSystem)" "^(yes|true)$" "ProtectSystem leaves /etc writable for the caches"
unlike "$(cat "$UNIT")" "^(ReadOnlyPaths|InaccessiblePaths)=.*/etc" "/etc is not made read-only otherwise"
# gres reads XID errors from the kernel log.
unlike "$(get ProtectKernelLogs)" "^(yes|true)$" "no ProtectKernelLogs: it would hide /dev/kmsg"
unlike "$(get PrivateDevices)" "^(yes|true)$" "no PrivateDevices: it would hide /dev/nvidia* from NVML"
is "$(get DevicePolicy)" "closed" "the device cgroup is closed"
like "$(get DeviceAllow)" "/dev/kmsg r" "/dev/kmsg may be read"
like "$(get DeviceAllow)" "char-nvidia-frontend rw" "the NVIDIA devices may be opened"
unlike "$(get DeviceAllow)" "char-nvidia-frontend r( |$)|/dev/kmsg rw" "nothing more than each needs"

done_testing
