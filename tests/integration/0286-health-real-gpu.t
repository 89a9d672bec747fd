#!/bin/bash
# On a machine with an NVIDIA GPU and its driver: the health module's gpu
# check against what the gres module sees through the real
# libnvidia-ml.so.1 and the node's real /dev/kmsg.  The check passes on a
# healthy GPU, the fact gres.gpus names each GPU nvidia-smi lists (with
# NVML's recovery action where the driver reports it), gres reads the
# kernel log without error, and an NVRM Xid line a program writes to
# /dev/kmsg (not the kernel's facility) is no XID: nothing drains.
# Elsewhere the test reports itself skipped, saying why.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"

. "$SUNKD_SRCDIR/tests/lib/gpu.sh"
gpu_or_skip "the real-GPU check"

gpu_setup gres health
[ -r /dev/kmsg ] || bail_out "no /dev/kmsg to read"
gpu_health_config "  testmod: {}"
sunkd_start
ok "the first discovery" wait_runs gres.discover 1
gres_status() {
        ctl --json status | python3 -c 'import json,sys; s=[m for m in json.load(sys.stdin)["modules"] if m["name"]=="gres"][0]["status"]; print(s.get(sys.argv[1], ""))' "$1"
}
ok "gres reads the kernel log" wait_until 600 eval '[ "$(gres_status kmsg_read)" = reading ] || [ -n "$(gres_status kmsg_seq)" ]'
is "$(gres_status kmsg_error)" "" "without an error"
ctl run health.gpu > /dev/null
is "$?" 0 "the gpu check passes on a healthy GPU"
detail=$(ctl --json health | python3 -c 'import json,sys; c=[c for c in json.load(sys.stdin)["checks"] if c["name"]=="gpu"][0]; print(c["code"], c["detail"])')
like "$detail" "^gpu-ok" "its code"
diag "gpu check: $detail"

python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" call io.sunkd.Test.Fact '{"name":"gres.gpus"}' > "$T/fact.json" ||
        bail_out "cannot read the fact"
nvidia-smi --query-gpu=uuid --format=csv,noheader | sort > "$T/smi-uuids"
python3 - "$T/fact.json" > "$T/fact-uuids" <<'PY' || bail_out "the fact is not what gres publishes"
import json, sys
d = json.load(open(sys.argv[1]))
f = d.get("parameters", d)
f = f.get("value", f)
for g in f["gpus"]:
    print(g["uuid"])
    ra = g.get("recovery_action")
    print("# recovery_action", g["bus_id"], "absent" if ra is None else ra, file=sys.stderr)
PY
sort -o "$T/fact-uuids" "$T/fact-uuids"
is "$(cat "$T/fact-uuids")" "$(cat "$T/smi-uuids")" "the fact names the GPUs nvidia-smi lists"

# a program's NVRM line in the kernel log: not the kernel's, no XID
bus=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | head -1 | tr 'A-F' 'a-f' | sed 's/^0000//')
marker="sunkd-spoof-$$"
echo "<3>NVRM: Xid (PCI:${bus%.*}): 79, pid=$$, name=$marker, GPU has fallen off the bus." > /dev/kmsg ||
        bail_out "cannot write to /dev/kmsg"
seq=$(python3 - "$marker" <<'PY'
import os, sys
fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
seq = ""
while True:
    try:
        rec = os.read(fd, 8192).decode("utf-8", "replace")
    except BlockingIOError:
        break
    except BrokenPipeError:
        continue
    if sys.argv[1] in rec:
        seq = rec.split(";", 1)[0].split(",")[1]
print(seq)
PY
)
[ -n "$seq" ] || bail_out "the written line is not in /dev/kmsg"
diag "the program's line is record $seq"
ctl run gres.kmsg > /dev/null 2>&1
ok "gres has read past it" wait_until 600 eval '[ "$(gres_status kmsg_seq)" -ge "$seq" ] 2>/dev/null'
unlike "$(ctl --json gres)" "\"xid\": *79" "no XID 79 in gres's log"
ctl run health.gpu > /dev/null
is "$?" 0 "and the gpu check still passes"
sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd exits cleanly"
done_testing
