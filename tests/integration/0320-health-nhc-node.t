#!/bin/bash
# deadline: 600
# LBNL NHC's node checks through a running sunkd: cpu, memory (NHC's keys),
# dmi, edac, mce, ethernet, file owner and mode, a read-only mount, on a
# fake /proc and /sys (the module's root:).  `sunkctl health run` passes on
# the node as written, then fails once the node changes (a socket lost, a
# DIMM gone, a BIOS flashed, an uncorrected memory error, a machine check,
# a link at a lower speed, a key file opened up, a mount made writable),
# each failure with its code and remedy; an input gone is unknown, never a
# pass.  --check-config refuses bad values of the new keys at their line.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/health/.libs/health.so" "$MODDIR/" || bail_out "health.so not built"

R="$T/root"
# cpuinfo S C T: S sockets of C cores, T threads each socket
cpuinfo() {
        local s t cpu=0
        for ((s = 0; s < $1; s++)); do
                for ((t = 0; t < $3; t++)); do
                        printf 'processor\t: %d\nphysical id\t: %d\nsiblings\t: %d\ncpu cores\t: %d\n\n' \
                                "$cpu" "$s" "$3" "$2"
                        cpu=$((cpu + 1))
                done
        done > "$R/proc/cpuinfo"
}
mkdir -p "$R/proc/self" "$R/sys/class/dmi/id" "$R/sys/devices/system/edac/mc/mc0" \
        "$R/sys/class/net/eth0/device" "$R/etc/munge" || bail_out "mkdir failed"
cpuinfo 2 4 8
printf 'MemTotal:       16000000 kB\nMemFree:         1000000 kB\nMemAvailable:    8000000 kB\nBuffers:          500000 kB\nCached:          2500000 kB\nSwapTotal:             0 kB\nSwapFree:              0 kB\n' > "$R/proc/meminfo"
printf '2.1.3\n' > "$R/sys/class/dmi/id/bios_version"
printf 'PowerEdge R760\n' > "$R/sys/class/dmi/id/product_name"
printf '0\n' > "$R/sys/devices/system/edac/mc/mc0/ce_count"
printf '0\n' > "$R/sys/devices/system/edac/mc/mc0/ue_count"
printf '           CPU0       CPU1\nMCE:          0          0   Machine check exceptions\n' > "$R/proc/interrupts"
printf 'up\n' > "$R/sys/class/net/eth0/operstate"
printf '1\n' > "$R/sys/class/net/eth0/carrier"
printf '25000\n' > "$R/sys/class/net/eth0/speed"
printf 'key\n' > "$R/etc/munge/munge.key"
chmod 0400 "$R/etc/munge/munge.key"
printf '22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n31 22 8:2 / /opt/sw ro,relatime shared:21 - xfs /dev/sdb1 ro\n' \
        > "$R/proc/self/mountinfo"

sunkd_config "modules:
  health:
    node_name: n1
    transport: none
    interval: 1h
    fail_after: 1
    root: $R
    checks:
      - {name: cpu, type: cpu, sockets: 2, cores: 8, threads: 16}
      - {name: ram, type: memory, min_total: 16000000K, max_total: 16000000K, tolerance: 2%, max_swap: 0}
      - {name: bios, type: dmi, field: bios_version, value: \"2.1.3\"}
      - {name: board, type: dmi, field: product_name, match: \"^PowerEdge R[0-9]+\$\"}
      - {name: edac, type: edac, max_ue: 0, max_ce: 10}
      - {name: mce, type: mce, max_exceptions: 0}
      - {name: eth0, type: ethernet, interface: eth0, min_speed: 25000}
      - {name: munge-key, type: file, path: /etc/munge/munge.key, owner: $(id -u), mode: \"0400\"}
      - {name: sw-ro, type: mount, path: /opt/sw, ro: true}"
ok "the NHC checks' section passes --check-config" "$SUNKD" --check-config -c "$T/sunkd.yaml"
sunkd_start

out=$(ctl health run 2>&1); rc=$?
is "$rc" 0 "sunkctl health run: every NHC check passes on the node as it is"
[ "$rc" = 0 ] || printf '%s\n' "$out" | sed 's/^/# /'
like "$out" "cpu +pass .*2 sockets, 8 cores, 16 threads" "cpu: the topology counted as NHC counts it"
like "$out" "ram +pass .*MemTotal 15.2G, SwapTotal 0B" "memory: RAM within its bounds, no swap"
like "$out" "bios +pass .*bios_version is '2.1.3'" "dmi: the BIOS version"
like "$out" "board +pass .*PowerEdge R760" "dmi: the board by a regex"
like "$out" "edac +pass .*1 memory controllers: 0 corrected, 0 uncorrected" "edac: the error counts"
like "$out" "mce +pass .*0 machine-check exceptions since boot" "mce: no machine check"
like "$out" "eth0 +pass .*eth0 is up at 25000 Mb/s" "ethernet: up at its speed"
like "$out" "munge-key +pass .*of the owner, group and mode asked" "file: owner and mode"
like "$out" "sw-ro +pass .*'/opt/sw' is mounted \\(xfs, ro\\)" "mount: read-only"

# The node changes: each check fails with its code and the remedy an admin would pick.
cpuinfo 1 4 8
printf 'MemTotal:       12000000 kB\nMemFree:         1000000 kB\nMemAvailable:    8000000 kB\nSwapTotal:       1000000 kB\nSwapFree:         900000 kB\n' > "$R/proc/meminfo"
printf '2.2.0\n' > "$R/sys/class/dmi/id/bios_version"
printf 'ProLiant DL380\n' > "$R/sys/class/dmi/id/product_name"
printf '1\n' > "$R/sys/devices/system/edac/mc/mc0/ue_count"
printf '           CPU0       CPU1\nMCE:          0          2   Machine check exceptions\n' > "$R/proc/interrupts"
printf '10000\n' > "$R/sys/class/net/eth0/speed"
chmod 0644 "$R/etc/munge/munge.key"
printf '22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n31 22 8:2 / /opt/sw rw,relatime shared:21 - xfs /dev/sdb1 rw\n' \
        > "$R/proc/self/mountinfo"
out=$(ctl health run 2>&1); rc=$?
is "$rc" 1 "sunkctl health run fails once the node has changed"
like "$out" "cpu +fail .*\\[cpu-sockets\\] 1 CPU sockets, want 2 \\(remedy: contact-support\\)" "a socket lost: cpu-sockets, contact-support"
like "$out" "ram +fail .*\\[memory-total-low\\] MemTotal 11.4G, want at least 15.2G \\(tolerance 2%\\) \\(remedy: contact-support\\)" "a DIMM lost: memory-total-low, contact-support"
like "$out" "bios +fail .*\\[dmi-mismatch\\] bios_version is '2.2.0', want '2.1.3' \\(remedy: none\\)" "a BIOS flashed: dmi-mismatch"
like "$out" "board +fail .*\\[dmi-mismatch\\] product_name is 'ProLiant DL380', want a match of" "another board: dmi-mismatch"
like "$out" "edac +fail .*\\[edac-ue\\] mc0: 1 uncorrected memory errors, at most 0 allowed \\(remedy: replace\\)" "an uncorrected error: edac-ue, replace"
like "$out" "mce +fail .*\\[mce-exceptions\\] 2 machine-check exceptions since boot, at most 0 allowed \\(remedy: contact-support\\)" "machine checks: mce-exceptions, contact-support"
like "$out" "eth0 +fail .*\\[ethernet-speed\\] eth0 runs at 10000 Mb/s, want at least 25000 \\(remedy: contact-support\\)" "a slower link: ethernet-speed"
like "$out" "munge-key +fail .*\\[file-mode\\] '/etc/munge/munge.key' has mode 0644, want 0400 \\(remedy: none\\)" "a key opened up: file-mode"
like "$out" "sw-ro +fail .*\\[mount-writable\\] '/opt/sw' \\(xfs\\) is writable, want read-only \\(remedy: none\\)" "a writable mount: mount-writable"

# Inputs gone: unknown, never a pass that checked nothing.
rm -r "$R/sys/devices/system/edac" "$R/sys/class/dmi"
printf '           CPU0\nIPI0:        10   Rescheduling interrupts\n' > "$R/proc/interrupts"
printf 'processor\t: 0\nphysical id\t: zero\n' > "$R/proc/cpuinfo"
out=$(ctl health run 2>&1)
like "$out" "edac +unknown .*\\[edac-input-missing\\]" "no EDAC driver: edac-input-missing"
like "$out" "bios +unknown .*\\[dmi-input-missing\\]" "no DMI table: dmi-input-missing"
like "$out" "mce +unknown .*\\[mce-input-missing\\] .*has no MCE row" "no MCE row: mce-input-missing"
like "$out" "cpu +unknown .*\\[cpu-input-bad\\] .*physical id 'zero' is not a number" "a cpuinfo that makes no sense: cpu-input-bad"
ok "sunkd is alive" kill -0 "$SUNKD_PID"
sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd exits cleanly"

# Bad values of the new keys, refused at their line with nothing started.
refused() { # DESCRIPTION PATTERN CHECK
        sunkd_config "modules:
  health:
    node_name: n1
    transport: none
    checks:
      - $3"
        out=$("$SUNKD" --check-config -c "$T/sunkd.yaml" 2>&1)
        is "$?" 2 "$1: refused"
        like "$out" "sunkd.yaml:[0-9]+:[0-9]+: $2" "$1: located, saying why"
}
refused "a cpu check without a count" "key 'sockets': a cpu check needs" "{name: a, type: cpu}"
refused "a socket count of 0" "key 'sockets'" "{name: a, type: cpu, sockets: 0}"
refused "fewer threads than cores" "key 'threads': 4 threads are fewer than the 8 cores" "{name: a, type: cpu, cores: 8, threads: 4}"
refused "a tolerance that is neither" "key 'tolerance': '5 %' is neither a size" "{name: a, type: memory, min_total: 1G, tolerance: 5 %}"
refused "a minimum over its maximum" "key 'min_swap': the minimum of SwapTotal is over its maximum" "{name: a, type: memory, min_swap: 2G, max_swap: 1G}"
refused "a dmi field out of its directory" "key 'field': '../../etc/shadow' is not a field" "{name: a, type: dmi, field: ../../etc/shadow, value: x}"
refused "a dmi check with value and match" "key 'match': a dmi check needs value or match, not both" "{name: a, type: dmi, field: bios_version, value: x, match: y}"
refused "a dmi regex that does not compile" "key 'match': 'a\\(b' is not a POSIX extended regular expression" "{name: a, type: dmi, field: bios_version, match: \"a(b\"}"
refused "a negative edac limit" "key 'max_ue'" "{name: a, type: edac, max_ue: -1}"
refused "a negative mce limit" "key 'max_exceptions'" "{name: a, type: mce, max_exceptions: -1}"
refused "an interface name with a slash" "key 'interface': '../x' is not an interface name" "{name: a, type: ethernet, interface: ../x}"
refused "a speed of 0" "key 'min_speed'" "{name: a, type: ethernet, interface: eth0, min_speed: 0}"
refused "an owner unknown" "key 'owner': no user 'no-such-user-sunkd'" "{name: a, type: file, path: /x, owner: no-such-user-sunkd}"
refused "a mode not octal" "key 'mode': '0899' is not octal permission bits" "{name: a, type: file, path: /x, mode: \"0899\"}"
refused "ro with rw" "key 'ro': a mount is not both read-only" "{name: a, type: mount, path: /x, ro: true, rw: true}"

done_testing
