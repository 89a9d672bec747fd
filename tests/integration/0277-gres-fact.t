#!/bin/bash
# deadline: 300
# The fact gres.gpus is a contract between modules, written down in
# sunkd(8)'s FACTS: every field a fake-NVML run publishes (GPUs with memory
# counters and telemetry, a mismatch with slurm.conf, an XID in a MIG
# instance, a GPU gone) is a tag there, and every tag there not marked
# optional is published.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/gres/.libs/gres.so" "$MODDIR/" || bail_out "gres.so not built"
NVML="$SUNKD_BUILDDIR/tests/fake-nvml/.libs/libnvidia-ml.so"
[ -f "$NVML" ] || bail_out "the fake NVML is not built"
command -v groff >/dev/null || bail_out "groff not found: install the Debian package groff-base (make deps)"
[ -f "$SUNKD_BUILDDIR/man/sunkd.8" ] || bail_out "man/sunkd.8 not built in $SUNKD_BUILDDIR"
DATA="$SUNKD_SRCDIR/tests/data/gres"
RAW="$SUNKD_SRCDIR/tests/lib/varlink-raw.py"
EV="$T/events"
mkdir "$EV" || bail_out "cannot make the events directory"
# GPU 0 also with its telemetry and two NVLinks (one down, with errors).
{ sed '/^gpu|00000000:18:00.0|/s/|unsupported|/|00000000:2A:00.0,00000000:2A:00.0|/' "$DATA/nvml-health.desc"
  echo "telemetry|00000000:18:00.0|45|87|92|120000|700000|0x48|1"
  echo "nvlink|00000000:18:00.0|1|down|1|2|3|4"
  echo "events|$EV"; } > "$T/nvml.desc"
cp -r "$DATA/proc-node" "$T/root" && "$SUNKD_SRCDIR/tests/lib/fake-cpu-topology.sh" "$T/root" 2 48 2 ||
        bail_out "cannot build the fake root"
mkdir -p "$T/root/proc/sys/kernel/random" &&
        echo 0d9c1f2e-aaaa-4bbb-8ccc-0123456789ab > "$T/root/proc/sys/kernel/random/boot_id" ||
        bail_out "cannot give the fake root a boot id"
# 8 expected, 4 found: a mismatch with a message
printf 'NodeName=gpu-node-07 Gres=gpu:h100:8\n' > "$T/slurm.conf"
sunkd_config "modules:
  gres:
    nvml_library: $NVML
    root: $T/root
    gres_conf: $T/gres.conf
    slurm_conf: $T/slurm.conf
    node_name: gpu-node-07
    interval: 1h
    xid_window: 1h
    kmsg: $T/no-kmsg
  testmod: {}"
export FAKE_NVML_CONFIG="$T/nvml.desc"
sunkd_start
ok "the first discovery" wait_runs gres.discover 1
fact() {
        python3 "$RAW" "$SOCK" call io.sunkd.Test.Fact '{"name":"gres.gpus"}' |
                python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["parameters"]["value"]))'
}
# An XID in MIG instance 3 of GPU 1, through NVML's event API.
echo "00000000:2A:00.0|13|3|0" > "$EV/.new" && mv "$EV/.new" "$EV/000001"
ok "the fact carries the XID" wait_until 300 eval 'fact | grep -q "\"xid_seq\": 1"'
fact > "$T/fact1.json" || bail_out "cannot read the fact"
# GPU 3 gone: it is missing.
sed -i '/00000000:5D:00.0/d' "$T/nvml.desc"
ctl run gres.discover > /dev/null || bail_out "discovery failed"
ok "the fact names the GPU missing" wait_until 300 eval 'fact | grep -q "\"missing\": \[{"'
fact > "$T/fact2.json" || bail_out "cannot read the fact"
sunkd_stop

# Every field's path in either fact, a list's elements as "[]"
# (gpus[].health.remap_failure).
published=$(python3 -c '
import json, sys
def walk(v, p):
    if isinstance(v, dict):
        for k, x in v.items():
            q = p + "." + k if p else k
            print(q)
            walk(x, q)
    elif isinstance(v, list):
        for x in v:
            walk(x, p + "[]")
for f in sys.argv[1:]:
    with open(f) as fp:
        walk(json.load(fp), "")' "$T/fact1.json" "$T/fact2.json" | sort -u)
[ -n "$published" ] || bail_out "no fields in the published facts"

# The tags of sunkd.8's FACTS, gres.gpus: "name, name (type[, optional])".
tags=$(groff -man -Tascii -rLL=300n -rHY=0 -P-cbou "$SUNKD_BUILDDIR/man/sunkd.8" 2>/dev/null |
        sed -n '/^   gres.gpus$/,/^[A-Z][A-Z -]*$/p' | sed -n -E 's/^ {7}([a-z].*)$/\1/p')
[ -n "$tags" ] || bail_out "no gres.gpus tags found in sunkd.8's FACTS"
documented=$(printf '%s\n' "$tags" | sed -E 's/ \(.*//' | tr ',' '\n' | tr -d ' ' | sort -u)
required=$(printf '%s\n' "$tags" | grep -v 'optional)' | sed -E 's/ \(.*//' | tr ',' '\n' | tr -d ' ' | sort -u)

for k in $published; do
        ok "gres.gpus field '$k' is documented in sunkd.8's FACTS" grep -qxF -- "$k" <<< "$documented"
done
for k in $required; do
        ok "sunkd.8's gres.gpus field '$k' is published" grep -qxF -- "$k" <<< "$published"
done
# a field's parent is documented too
for k in $documented; do
        case "$k" in *.*) ;; *) continue ;; esac
        parent=${k%.*}
        parent=${parent%\[\]}
        ok "the parent of '$k' is documented" grep -qxF -- "$parent" <<< "$documented"
done
is "$SUNKD_EXIT" 0 "sunkd exits cleanly"
done_testing
