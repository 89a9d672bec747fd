#!/bin/bash
# XID errors from the kernel log, through a stand-in (a FIFO read by the same
# code as /dev/kmsg): the driver's NVRM lines are mapped to the GPU by bus id
# and numbered in gres's log, the fact and the List; an event NVML reports
# too is counted once; a record written in parts is taken whole; malformed
# and hostile records are counted and skipped; reading resumes after the
# last record across a restart, from the start after a reboot, and says when
# records were lost; a storm of 100,000 XIDs in one second is counted
# exactly, in bounded memory and a few log lines; a log that cannot be read
# is said so.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/gres/.libs/gres.so" "$MODDIR/" || bail_out "gres.so not built"
NVML="$SUNKD_BUILDDIR/tests/fake-nvml/.libs/libnvidia-ml.so"
[ -f "$NVML" ] || bail_out "the fake NVML is not built"
DATA="$SUNKD_SRCDIR/tests/data/gres"
RAW="$SUNKD_SRCDIR/tests/lib/varlink-raw.py"
KW="$SUNKD_SRCDIR/tests/lib/kmsg-stand-in.py"
EV="$T/events"
mkdir "$EV" || bail_out "cannot make the events directory"
{ cat "$DATA/nvml-h100-8.desc"; echo "events|$EV"; } > "$T/nvml.desc"
cp -r "$DATA/proc-node" "$T/root" && "$SUNKD_SRCDIR/tests/lib/fake-cpu-topology.sh" "$T/root" 2 48 2 ||
        bail_out "cannot build the fake root"
mkdir -p "$T/root/proc/sys/kernel/random" && echo 5b6a29f4-3c61-4d2e-9c8b-0a1f2e3d4c5b > "$T/root/proc/sys/kernel/random/boot_id" ||
        bail_out "cannot give the fake root a boot id"
printf 'NodeName=gpu-node-07 Gres=gpu:h100:8\n' > "$T/slurm.conf"
# The stand-in: this test holds it open for writing, so it never reads as
# ended; sunkd is started without that descriptor.
KMSG="$T/kmsg"
mkfifo "$KMSG" && exec 7<>"$KMSG" || bail_out "cannot make the kernel log's stand-in"
config() {
        sunkd_config "modules:
  gres:
    nvml_library: $NVML
    root: $T/root
    slurm_conf: $T/slurm.conf
    node_name: gpu-node-07
    interval: 1h
    xid_window: 1h
    kmsg: ${1:-$KMSG}
    type_alias:
      NVIDIA H100 80GB HBM3: h100
  testmod: {}"
}
start() {
        { sunkd_start; } 7>&-
        LOG_MARK=0 LOG_MARKED="$T/sunkd.log"
        wait_runs gres.discover 1 || bail_out "no discovery"
}
kw() { python3 "$KW" "$KMSG" "$@" || bail_out "cannot write to the stand-in"; }
status() {
        ctl --json status | python3 -c 'import json,sys; s=[m for m in json.load(sys.stdin)["modules"] if m["name"]=="gres"][0]["status"]; print(s.get(sys.argv[1], ""))' "$1"
}
list_gpu() {
        python3 "$RAW" "$SOCK" call io.sunkd.Gres.List |
                python3 -c 'import json,sys; g=json.load(sys.stdin)["parameters"]["gpus"][int(sys.argv[1])]; exec(sys.argv[2])' "$1" "$2"
}
fact() {
        python3 "$RAW" "$SOCK" call io.sunkd.Test.Fact '{"name":"gres.gpus"}' |
                python3 -c 'import json,sys; f=json.load(sys.stdin)["parameters"]["value"]; exec(sys.argv[1])' "$1"
}
metric() {
        ctl metrics | grep -E "^sunkd_$1\{uuid=\"$2\"" | awk '{print $2}'
}
events_are() { [ "$(status xid_events)" = "$1" ]; }
G0=GPU-00000000-1111-2222-3333-444444444444
G1=GPU-00000001-1111-2222-3333-444444444444

config
export FAKE_NVML_CONFIG="$T/nvml.desc"
start
ok "status: reading the kernel log" wait_until 300 eval '[ "$(status kmsg_read)" = reading ]'
ok "and the log says so" wait_log "Reading XID errors from the kernel log '$KMSG'\."
ok "NVML's events are watched too" wait_until 300 eval '[ "$(status xid_watch)" = watching ] && [ "$(job_field gres.events state)" = running ]'

# The driver's line, as r535 to r580 write it: mapped to the GPU discovery
# found at that bus, numbered, its source the kernel log.  NVML reports the
# same event at once: it is counted once, as the kernel log named it.
runs=$(job_field gres.events runs)
kw record 100 "NVRM: Xid (PCI:0000:18:00): 79, pid=2817, name=python3, GPU has fallen off the bus."
echo "00000000:18:00.0|79" > "$EV/.new" && mv "$EV/.new" "$EV/000001"
ok "an XID in the kernel log is logged with its GPU" \
   wait_log "GPU $G0 at 0000:18:00.0: XID 79 \(GPU has fallen off the bus\)\.$"
ok "NVML's report of it is taken" wait_until 300 eval '[ "$(job_field gres.events runs)" -gt $runs ]'
wait_until 300 events_are 1 || bail_out "the XID was not counted"
is "$(status xid_events)" 1 "the event both report is one event"
is "$(status kmsg_seq) $(status kmsg_records) $(status xid_seq)" "100 1 1" "status: read up to record 100, the event numbered 1"
is "$(list_gpu 0 'e=g["xid_events"][-1]; print(e["seq"], e["xid"], e["uuid"], e["source"], e["count"], all(v == 0 for k, v in g["health"].items() if k != "recovery"))')" \
   "1 79 $G0 kmsg 1 True" "List: the GPU's event, from the kernel log, and no verdict"
is "$(fact 'e=f["xid_events"][-1]; print(f["xid_seq"], e["seq"], e["bus_id"], e["uuid"], e["source"], e["boot_id"])')" \
   "1 1 0000:18:00.0 $G0 kmsg 5b6a29f4-3c61-4d2e-9c8b-0a1f2e3d4c5b" "the fact carries it, with the boot it happened in"
is "$(metric gres_gpu_xid_errors_total $G0) $(metric gres_gpu_last_xid $G0)" "1 79" "metrics: counted"

is "$(list_gpu 0 'e=g["xid_events"]; print(len(e), e[-1]["count"], e[-1]["source"])')" "1 1 kmsg" "List: one entry, counted once"
# An XID NVML alone reports counts.
echo "00000000:2A:00.0|48" > "$EV/.new" && mv "$EV/.new" "$EV/000002"
ok "an XID NVML alone reports counts" wait_until 300 events_are 2
is "$(list_gpu 1 'e=g["xid_events"][-1]; print(e["seq"], e["xid"], e["source"])')" "2 48 nvml" "List: from NVML"

# The driver names a GPU before its first XID: that name holds where
# discovery knows no GPU at the bus.
kw record 101 "NVRM: GPU at PCI:0000:c1:00: GPU-c1000000-aaaa-bbbb-cccc-dddddddddddd"
kw record 102 "NVRM: Xid (PCI:0000:c1:00): 95, pid='<unknown>', name=<unknown>, Uncontained: FBHUB. RST: Yes, D-RST: No"
wait_until 300 events_are 3 || bail_out "the XID of the GPU the driver named was not counted"
is "$(fact 'e=f["xid_events"][-1]; print(e["seq"], e["xid"], e["bus_id"], e["uuid"])')" \
   "3 95 0000:c1:00.0 GPU-c1000000-aaaa-bbbb-cccc-dddddddddddd" "fact: the GPU as the driver named it"

# A record written in parts is taken whole once the rest comes, even across runs.
runs=$(job_field gres.kmsg runs)
kw raw "3,103,1,-;NVRM: Xid (PCI:0000:2a:0"
ok "the first part waits" wait_until 300 eval '[ "$(job_field gres.kmsg runs)" -ge $((runs + 1)) ]'
is "$(status xid_events)" 3 "nothing is taken of it"
kw raw "0): 13, pid=1, name=x, Graphics Exception: ESR 0x50"$'\n'
ok "the rest completes it" wait_until 300 events_are 4
is "$(list_gpu 1 'e=g["xid_events"][-1]; print(e["xid"], e["source"])')" "13 kmsg" "and it is the GPU's"

# Malformed and hostile records are counted and skipped; sunkd runs on.
log_mark
kw raw $'3,104,1,-;NVRM: Xid (PCI:0000:18:00): 4294967296, too big\n6,105,1,-;NVRM: Xid (PCI:../../etc): 79,\nno header at all\n3,106,1,-;NVRM: Xid (PCI:0000:18:00): x79\n3,107,1,-;\x01\x02\xff\xfe binary\n 3,108,1,-;NVRM: Xid (PCI:0000:18:00): 79, a dictionary line\n'
kw raw "$(head -c 20000 /dev/zero | tr '\0' 'A')"$'\n'
kw record 109 "NVRM: Xid (PCI:0000:2a:00): 31, pid=1, name=x, MMU Fault"
ok "the next good record is taken" wait_until 300 events_are 5
is "$(status kmsg_malformed)" 5 "status: four malformed records and one over-long line counted"
is "$(status kmsg_seq)" 109 "and read past them"
is "$(ctl ping)" pong "sunkd runs"

# A restart goes on after the last record read: what the ring still holds of
# it is not taken twice.  A jump in the numbers says records were lost.
sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd stops cleanly"
# written while sunkd is down: the FIFO keeps them, as the kernel's ring does
kw record 108 "NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=x, read before the restart"
kw record 109 "NVRM: Xid (PCI:0000:2a:00): 31, pid=1, name=x, read before the restart"
kw record 110 "NVRM: Xid (PCI:0000:2a:00): 62, pid=1, name=x, new"
kw record 150 "NVRM: Xid (PCI:0000:2a:00): 63, pid=1, name=x, after a gap"
start
ok "the records after the cursor are taken" wait_until 300 eval '[ "$(status kmsg_seq)" = 150 ]'
is "$(status xid_events) $(status xid_seq)" "7 7" "only the two new ones, numbered on from the last"
ok "the gap is said, with the records lost" \
   wait_log "The kernel log lost 39 record\(s\) before sunkd read them \(records 111 to 149\), its sequence numbers jumped"
is "$(status kmsg_lost)" 39 "status: the records lost"

# After a reboot the kernel numbers its records from 0 again: the cursor of
# the last boot no longer holds, and the log is read from its start.
sunkd_stop
echo 0d1c2b3a-4958-6776-8594-a3b2c1d0e9f8 > "$T/root/proc/sys/kernel/random/boot_id"
kw record 0 "NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=x, GPU has fallen off the bus."
start
ok "a new boot is read from its start" wait_until 300 events_are 8
like "$(log_since)" "The node booted since the kernel log was last read: reading it from its start\." "and said so"
is "$(list_gpu 0 'e=g["xid_events"]; print(e[-1]["seq"], e[-1]["boot_id"], len(e))')" \
   "8 0d1c2b3a-4958-6776-8594-a3b2c1d0e9f8 2" "the new boot's XID is an entry of its own, of its boot"

# A storm: 100,000 XIDs on one GPU within one second of the kernel's time.
# All are counted, one entry holds them, the log says so in a few lines, and
# sunkd's memory does not grow with them.
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$SUNKD_PID/status"; }
rss0=$(rss)
m0=$(metric gres_gpu_xid_errors_total $G0)
log_mark
kw storm 1 100000 0000:18:00 45
ok "all 100,000 are counted" wait_until 1200 events_are 100008
is "$(status kmsg_seq)" 100000 "read to the last record"
is "$(list_gpu 0 'e=[x for x in g["xid_events"] if x["xid"] == 45]; print(len(e), e[0]["count"], e[0]["seq"], e[0]["last_seq"])')" \
   "1 100000 9 100008" "List: one entry counts them all and covers their numbers"
is "$(metric gres_gpu_xid_errors_total $G0)" $((${m0:-0} + 100000)) "metrics: counted, each"
ok "the repeats are summed up" \
   wait_log "XID storm: [0-9]+ repeat\(s\) folded into the log: XID 45 on $G0 \(pci 0000:18:00.0\) [0-9]+ more, 100000 in all" 600
lines=$(log_since | wc -l)
ok "a few log lines ($lines), not one per XID" eval '[ "$lines" -le 8 ]'
rss1=$(rss)
ok "sunkd's memory grew by less than 4 MiB (${rss0} kB to ${rss1} kB)" eval '[ $((rss1 - rss0)) -lt 4096 ]'
sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd stops cleanly after the storm"
ok "the saved log stays small" eval '[ "$(stat -c %s "$T/state/gres/xid-events.json")" -lt 100000 ]'

# A kernel log that cannot be read is said so; NVML's events go on.
config "$T/no-such-kmsg"
start
ok "an unreadable kernel log is logged" \
   wait_log "Not reading XID errors from the kernel log '$T/no-such-kmsg': No such file or directory; NVML's events only\."
is "$(status kmsg_read) $(status kmsg_error)" "failed No such file or directory" "status: failed, and why"
ok "NVML's events still come" wait_until 300 eval '[ "$(status xid_watch)" = watching ]'
sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd exits cleanly"
done_testing
