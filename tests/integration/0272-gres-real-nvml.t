#!/bin/bash
# On a machine with an NVIDIA GPU and its driver: the gres module's view
# through the real libnvidia-ml.so.1 (backend nvml, no fake) against what
# `nvidia-smi -q -x` reports: the same GPUs by UUID, and for each its PCI bus
# id, device minor, name and memory; gres.conf names the same device files.
# Elsewhere the test reports itself skipped, saying why: the only skip in the
# suite, since no GPU can be faked into the real library.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"

. "$SUNKD_SRCDIR/tests/lib/gpu.sh"
gpu_or_skip "the real-NVML comparison"

gpu_setup gres
sunkd_config "modules:
  gres:
    backend: nvml
    gres_conf: $T/gres.conf
    slurm_conf: $T/slurm.conf
    interval: 1h
    xid_window: 1s"
: > "$T/slurm.conf"
nvidia-smi -q -x > "$T/smi.xml" || bail_out "nvidia-smi -q -x failed"
sunkd_start
LOG_MARK=0 LOG_MARKED="$T/sunkd.log"
ok "the first discovery" wait_runs gres.discover 1
ctl --json gres > "$T/list.json" || bail_out "io.sunkd.Gres.List failed"
is "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d.get("parameters", d)["source"])' "$T/list.json")" nvml \
   "found through the real NVML, not /proc"

# One line per GPU and field, from each side, in the same form.
python3 - "$T/smi.xml" > "$T/smi.txt" <<'PY' || bail_out "cannot read nvidia-smi's XML"
import sys, xml.etree.ElementTree as ET
for g in ET.parse(sys.argv[1]).getroot().findall("gpu"):
    uuid = g.findtext("uuid").strip()
    bus = g.get("id").lower()[-12:]  # "00000000:18:00.0" -> "0000:18:00.0"
    mib = int(g.findtext("fb_memory_usage/total").split()[0])
    print(uuid, "bus", bus)
    print(uuid, "minor", g.findtext("minor_number").strip())
    print(uuid, "name", g.findtext("product_name").strip())
    print(uuid, "memory_mib", mib)
PY
python3 - "$T/list.json" > "$T/sunkd.txt" <<'PY' || bail_out "cannot read the module's JSON"
import json, sys
d = json.load(open(sys.argv[1]))
for g in d.get("parameters", d)["gpus"]:
    print(g["uuid"], "bus", g["bus_id"])
    print(g["uuid"], "minor", g["minor"])
    print(g["uuid"], "name", g["name"])
    print(g["uuid"], "memory_mib", g["memory"] // (1024 * 1024))
PY
is "$(grep -c ' bus ' "$T/sunkd.txt")" "$(grep -c ' bus ' "$T/smi.txt")" "as many GPUs as nvidia-smi lists"
is "$(sort "$T/sunkd.txt")" "$(sort "$T/smi.txt")" "UUID, bus id, minor, name and memory agree with nvidia-smi -q -x"
diag "$(cat "$T/sunkd.txt")"
for m in $(sed -n 's/.* minor //p' "$T/smi.txt"); do
        ok "gres.conf names /dev/nvidia$m" grep -Eq "File=/dev/nvidia$m( |\$)" "$T/gres.conf"
done
# The driver's event API takes every GPU (NOT_SUPPORTED would name it).
n=$(grep -c ' bus ' "$T/smi.txt")
ok "the XID watch registers every GPU with the real NVML" wait_log "Watching $n GPU\(s\) for XID errors\.$" 600
diag "$(grep -E 'XID|Watching' "$T/sunkd.log")"
sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd exits cleanly"
done_testing
