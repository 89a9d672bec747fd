#!/bin/bash
# deadline: 600
# `sunkctl health genconf`, what NHC's nhc-genconf does: a `checks:` block
# made from the node it runs on.  On this machine (root /) the block, put in
# a sunkd.yaml, is accepted by --check-config and a sunkd started with it
# passes every check in `sunkctl health run`.  On a fake root the entries
# are exactly what the tree implies, hostile mount points (": ", a quote, a
# backslash, a newline, a '#', bytes that are not UTF-8) stay one YAML
# scalar each or are left out with a comment, and that block passes there
# too.  -o writes the file whole or not at all; bad input is refused
# clearly, and sunkd stays.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/health/.libs/health.so" "$MODDIR/" || bail_out "health.so not built"
command -v setpriv >/dev/null || bail_out "setpriv (util-linux) is needed"
command -v python3 >/dev/null || bail_out "python3 is needed"

# health_config [KEYS [MODULES]]: the health module, reporting only, with
# KEYS (indented four spaces) in its section, and the sections MODULES after.
health_config() {
        sunkd_config "modules:
  health:
    node_name: n1
    transport: none
    interval: 1h
    fail_after: 1
$1
$2"
}
# with_checks FILE [KEYS [MODULES]]: the health section with the block of
# FILE (its comments too) under it.
with_checks() {
        health_config "$2
$(sed 's/^/    /' "$1")" "$3"
}
# checks_of OUT: the `- ` entries of a genconf block, one a line.
checks_of() { sed -n 's/^  - //p' "$1"; }
# all_pass [GONE]: how many checks `health run` ran, all passed; else the
# ones that did not.  A name in the file GONE (one a line) is not counted:
# a process or listener that ended since, on a machine other tests share.
all_pass() {
        ctl --json health run | python3 -c '
import json, sys
gone = set(open(sys.argv[1]).read().split()) if len(sys.argv) > 1 else set()
c = [x for x in json.load(sys.stdin)["checks"] if x["name"] not in gone]
bad = [x["name"] + ": " + x["result"] + " " + x["detail"] for x in c if x["result"] != "pass"]
print("\n".join(bad) if bad else len(c))' "$@"
}
# failing: the names of the checks the last round failed.
failing() {
        ctl --json health | python3 -c '
import json, sys
print("\n".join(x["name"] for x in json.load(sys.stdin)["checks"] if x["result"] != "pass"))'
}

# ---- 1. this machine -----------------------------------------------------
health_config ""
sunkd_start
out=$(ctl health genconf 2>&1); rc=$?
printf '%s\n' "$out" > "$T/here.yaml"
is "$rc" 0 "health genconf answers on this node"
like "$out" "^# The health checks of node n1 as it was on [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]+ UTC \(sunkd [0-9]" \
        "its header names the node, the date and sunkd's version"
ok "a checks: block" grep -qx 'checks:' "$T/here.yaml"
ok "the root file system is in it" grep -q '^  - {name: mount-root, type: mount, path: "/", ' "$T/here.yaml"
like "$out" "\{name: memory, type: memory, min_total: [0-9]+M\}" "and the memory"
unlike "$out" "type: (mount|disk_free|inodes_free), path: \"/(proc|sys|dev)[/\"]" \
        "no pseudo file system under /proc, /sys or /dev"
unlike "$(checks_of "$T/here.yaml")" "fs_type: \"(proc|sysfs|tmpfs|devtmpfs|devpts|cgroup2?|overlay)\"" \
        "no virtual file system or container overlay"
n_here=$(checks_of "$T/here.yaml" | wc -l)
ok "it holds checks ($n_here)" test "$n_here" -ge 3
is "$(job_field health.genconf runs)" 1 "one run of the job health.genconf made it"
sunkd_stop

with_checks "$T/here.yaml"
err=$("$SUNKD" -c "$T/sunkd.yaml" --check-config 2>&1); rc=$?
is "$rc" 0 "--check-config accepts it" || diag "$err"
sunkd_start
ctl health run > "$T/run.out" 2>&1
rc=$?
# Other tests start and stop sshd, munged and slurmd on this machine: a
# process check whose process has ended since, or a port check of a
# listener that has closed since, is the node changed, not the baseline
# wrong.  Such a check must be one a new baseline leaves out.
: > "$T/gone"
if [ "$rc" -ne 0 ]; then
        ctl health genconf > "$T/again.yaml" || bail_out "health genconf failed the second time"
        for name in $(failing); do
                if [[ $name == process-* || $name == tcp-* ]] &&
                        ! checks_of "$T/again.yaml" | grep -q "^{name: $name,"; then
                        diag "$name: its process or listener ended since the baseline was made"
                        echo "$name" >> "$T/gone"
                fi
        done
fi
n_gone=$(wc -l < "$T/gone")
is "$(all_pass "$T/gone")" "$((n_here - n_gone))" "a sunkd started with it passes every check in health run"
is "$(grep -c . "$T/gone")" "$(failing | grep -c .)" "health run fails none but for a process or listener that ended since"
sunkd_stop

# ---- 2. a fake root -------------------------------------------------------
R="$T/root"
mkdir -p "$R/proc/self" "$R/proc/10" "$R/proc/11" "$R/proc/12" "$R/proc/13"
mi() { printf '%s %s 0:1 / %s %s - %s %s %s\n' "$@"; }
{
        mi 1 0 / rw,relatime ext4 /dev/sda1 rw
        mi 2 1 /proc rw proc proc rw
        mi 3 1 /sys rw sysfs sysfs rw
        mi 4 1 /dev/shm rw tmpfs tmpfs rw
        mi 5 1 /sys/fs/cgroup rw cgroup2 cgroup2 rw
        mi 6 1 /scratch ro xfs /dev/sdb rw
        mi 7 1 '/mnt/a:\040b' rw ext4 /dev/sdc rw
        mi 8 1 '/mnt/q"x' rw ext4 /dev/sdc rw
        mi 9 1 '/mnt/back\134slash' rw ext4 /dev/sdc rw
        mi 10 1 '/mnt/nl\012x' rw ext4 /dev/sdc rw
        mi 11 1 '/mnt/#hash' rw ext4 /dev/sdc rw
        mi 12 1 $'/mnt/\xffbad' rw ext4 /dev/sdc rw
        mi 13 1 /var/lib/kubelet/pods/p/volumes/v rw ext4 /dev/sda1 rw
        mi 14 1 /ctr rw overlay overlay rw,lowerdir=/x
} > "$R/proc/self/mountinfo"
mkdir -p "$R/scratch" "$R/mnt/a: b" "$R/mnt/q\"x" "$R/mnt/back\\slash" "$R/mnt/nl"$'\n'"x" "$R/mnt/#hash" \
        "$R/mnt/"$'\xff'"bad" "$R/ctr" "$R/var/lib/kubelet/pods/p/volumes/v"
printf 'MemTotal:       16318076 kB\nMemAvailable:    9000000 kB\n' > "$R/proc/meminfo"
proc() { printf '%s\n' "$2" > "$R/proc/$1/comm"; printf 'Name:\t%s\nState:\t%s\nUid:\t%s\t%s\t%s\t%s\n' "$2" "$3" "$4" "$4" "$4" "$4" > "$R/proc/$1/status"; }
proc 10 sshd "S (sleeping)" 0
proc 11 munged "S (sleeping)" 104
proc 12 slurmd "Z (zombie)" 0
proc 13 crond "S (sleeping)" 0
health_config "    root: $R"
sunkd_start
ctl health genconf > "$T/fake.yaml" 2> "$T/fake.err"
is "$?" 0 "health genconf answers on a fake root"
like "$(head -3 "$T/fake.yaml")" "from the tree under $R" "its header names the tree"
ok "the mount point that is not UTF-8 is left out, with a comment" grep -qx \
        '# left out: mount: the mount point of line 12 of mountinfo left out: not UTF-8, which YAML cannot hold' "$T/fake.yaml"
is "$(grep -c 'left out: .*line 12' "$T/fake.yaml")" 3 "from mount, disk_free and inodes_free"
# the entries, the free space aside (it is the test machine's)
got=$(checks_of "$T/fake.yaml" | grep -v '^{name: \(disk_free\|inodes_free\)-')
want='{name: mount-root, type: mount, path: "/", fs_type: "ext4"}
{name: mount-scratch, type: mount, path: "/scratch", fs_type: "xfs", rw: false}
{name: mount-mnt-a__b, type: mount, path: "/mnt/a: b", fs_type: "ext4"}
{name: mount-mnt-q_x, type: mount, path: "/mnt/q\"x", fs_type: "ext4"}
{name: mount-mnt-back_slash, type: mount, path: "/mnt/back\\slash", fs_type: "ext4"}
{name: mount-mnt-nl_x, type: mount, path: "/mnt/nl\x0ax", fs_type: "ext4"}
{name: mount-mnt-hash, type: mount, path: "/mnt/#hash", fs_type: "ext4"}
{name: memory, type: memory, min_total: 15457M}
{name: process-sshd, type: process, process: sshd, user: root}
{name: process-munged, type: process, process: munged}'
is "$got" "$want" "the entries are what the tree implies"
is "$(checks_of "$T/fake.yaml" | grep -c '^{name: disk_free-')" 7 "a disk_free check for each of the 7 file systems"
sunkd_stop

with_checks "$T/fake.yaml" "    root: $R"
err=$("$SUNKD" -c "$T/sunkd.yaml" --check-config 2>&1); rc=$?
is "$rc" 0 "--check-config accepts the fake root's block" || diag "$err"
n_fake=$(checks_of "$T/fake.yaml" | wc -l)
sunkd_start
is "$(all_pass)" "$n_fake" "and its checks all pass against that root"
# sunkd's own reader took each mount point back whole: each is found mounted
details=$(ctl --json health | python3 -c '
import json, sys
for c in json.load(sys.stdin)["checks"]:
    if c["type"] == "mount":
        print(c["detail"])')
is "$details" "'/' is mounted (ext4, rw)
'/scratch' is mounted (xfs, ro)
'/mnt/a: b' is mounted (ext4, rw)
'/mnt/q\"x' is mounted (ext4, rw)
'/mnt/back\slash' is mounted (ext4, rw)
'/mnt/nl\x0ax' is mounted (ext4, rw)
'/mnt/#hash' is mounted (ext4, rw)" "each mount point is read back as it is on the node, one scalar each"

# ---- 3. -o FILE ------------------------------------------------------------
ctl health genconf -o "$T/out.yaml"
is "$?" 0 "-o FILE: exit 0"
is "$(checks_of "$T/out.yaml")" "$(checks_of "$T/fake.yaml")" "FILE holds the block"
is "$(stat -c %a "$T/out.yaml")" 644 "readable by all, written by root"
sum=$(md5sum < "$T/out.yaml")
err=$(ctl health genconf -o "$T/out.yaml" 2>&1); rc=$?
is "$rc" 1 "a FILE that is there: exit 1"
is "$err" "sunkctl: '$T/out.yaml' exists: --force replaces it" "saying --force replaces it"
is "$(md5sum < "$T/out.yaml")" "$sum" "and leaving it as it was"
ln -s out.yaml "$T/link.yaml"
ctl health genconf -o "$T/link.yaml" 2>/dev/null
is "$?" 1 "a symlink there is not replaced either"
ctl health genconf -o "$T/out.yaml" --force
is "$?" 0 "--force replaces it"
ok "whole" grep -q '^  - {name: memory, type: memory, min_total: 15457M}$' "$T/out.yaml"
err=$(ctl health genconf -o "$T/no/such/dir/x.yaml" 2>&1); rc=$?
is "$rc" 1 "a FILE in no directory: exit 1"
is "$err" "sunkctl: cannot write '$T/no/such/dir/x.yaml': No such file or directory" "with a clear message"
err=$(ctl health genconf -o "$T" 2>&1); rc=$?
is "$rc" 1 "a directory: exit 1"
is "$err" "sunkctl: cannot write '$T': it names a directory" "saying so"
err=$(ctl health genconf -o "$T/newdir/" 2>&1); rc=$?
is "$rc" 1 "a name ending in /: exit 1"
ok "nothing made" test ! -e "$T/newdir"
err=$(ctl health genconf -o "" 2>&1); rc=$?
is "$rc" 2 "an empty name: usage, exit 2"
err=$(setpriv --reuid 65534 --regid 65534 --clear-groups "$SUNKCTL" -s "$SOCK" health genconf -o "$T/x.yaml" 2>&1); rc=$?
is "$rc" 1 "a directory the caller cannot write: exit 1"
is "$err" "sunkctl: cannot write '$T/x.yaml': Permission denied" "saying why, before sunkd is asked"
ctl health status -o "$T/status.yaml" 2>/dev/null
is "$?" 2 "-o for a verb that does not write a file: usage, exit 2"
ctl health genconf --force 2>/dev/null
is "$?" 2 "--force without -o: usage, exit 2"
ctl status -o "$T/status.yaml" 2>/dev/null
is "$?" 2 "-o for a daemon's verb: usage, exit 2"
ok "no FILE was made by them" test ! -e "$T/status.yaml" -a ! -e "$T/x.yaml"

# ---- 4. bad input on the method -------------------------------------------
err=$(ctl health genconf x=1 2>&1); rc=$?
is "$rc" 1 "a parameter: exit 1"
like "$err" "io.sunkd.Health.Genconf: invalid parameter x=1: Genconf takes no parameters" "named, as refused"
err=$(setpriv --reuid 65534 --regid 65534 --clear-groups "$SUNKCTL" -s "$SOCK" health genconf 2>&1); rc=$?
is "$rc" 1 "a caller that is not root: exit 1"
like "$err" "permission denied" "refused"
is "$(ctl ping)" "pong" "sunkd answers after all of it"
sunkd_stop

# ---- 5. the GPUs gres found: the gpu check, composed on the loop ------------
NVML="$SUNKD_BUILDDIR/tests/fake-nvml/.libs/libnvidia-ml.so"
[ -f "$NVML" ] || bail_out "the fake NVML is not built"
cp "$SUNKD_BUILDDIR/modules/gres/.libs/gres.so" "$MODDIR/" || bail_out "gres.so not built"
G="$T/groot"
cp -r "$SUNKD_SRCDIR/tests/data/gres/proc-node" "$G" || bail_out "cannot build gres's fake root"
mkdir -p "$G/proc/sys/kernel/random" && echo 0d9c1f2e-aaaa-4bbb-8ccc-0123456789ab > "$G/proc/sys/kernel/random/boot_id" ||
        bail_out "cannot give gres's fake root a boot id"
printf 'init ok\ngpu|00000000:07:00.0|0|NVIDIA A100-SXM4-40GB|GPU-a0|42949672960|0-1|-|-\n' > "$T/nvml.desc"
printf 'NodeName=n1 Gres=gpu:1\n' > "$T/slurm.conf"
export FAKE_NVML_CONFIG="$T/nvml.desc"
gres_section="  gres:
    nvml_library: $NVML
    root: $G
    gres_conf: $T/gres.conf
    slurm_conf: $T/slurm.conf
    node_name: n1
    interval: 1h
    kmsg: $T/no-kmsg"
health_config "    root: $R" "$gres_section"
sunkd_start
ok "gres has looked for the GPUs" wait_runs gres.discover 1
ctl health genconf > "$T/gpu.yaml" 2>&1
is "$?" 0 "health genconf answers beside gres"
is "$(checks_of "$T/gpu.yaml" | tail -1)" "{name: gpu, type: gpu}" "the gpu check, where gres found a GPU"
sunkd_stop
with_checks "$T/gpu.yaml" "    root: $R" "$gres_section"
err=$("$SUNKD" -c "$T/sunkd.yaml" --check-config 2>&1); rc=$?
is "$rc" 0 "--check-config accepts it" || diag "$err"
sunkd_start
ok "gres has looked again" wait_runs gres.discover 1
is "$(all_pass)" "$(checks_of "$T/gpu.yaml" | wc -l)" "and every check passes, the gpu check's too"
sunkd_stop

# nothing half-written when sunkd cannot be asked, and no temporary file left
ctl health genconf -o "$T/new.yaml" 2>/dev/null
is "$?" 3 "sunkd not reachable: exit 3"
ok "and no FILE" test ! -e "$T/new.yaml"
is "$(find "$T" -maxdepth 1 -name '.*.yaml.*' | wc -l)" 0 "no temporary file is left anywhere"
is "$SUNKD_EXIT" 0 "sunkd exits cleanly"
done_testing
