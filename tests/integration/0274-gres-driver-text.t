#!/bin/bash
# Text from a broken or hostile driver: a GPU name and UUID with bytes that
# are not UTF-8, control characters and a backslash, from NVML and from
# /proc, and an NVML error message of the same kind.  Every way out of the
# module shows them escaped ("\xHH") and stays valid: io.sunkd.Gres.List,
# sunkctl gres / --check / --slurmd-conf, the gres.gpus fact, the metrics
# (over the socket and in the textfile), gres.conf, the log, and the XID
# events of that GPU.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/gres/.libs/gres.so" "$MODDIR/" || bail_out "gres.so not built"
NVML="$SUNKD_BUILDDIR/tests/fake-nvml/.libs/libnvidia-ml.so"
[ -f "$NVML" ] || bail_out "the fake NVML is not built"
DATA="$SUNKD_SRCDIR/tests/data/gres"
RAW="$SUNKD_SRCDIR/tests/lib/varlink-raw.py"
NODE=gpu-node-07
EV="$T/events"
mkdir "$EV" || bail_out "cannot make the events directory"
cp -r "$DATA/proc-node" "$T/root" && "$SUNKD_SRCDIR/tests/lib/fake-cpu-topology.sh" "$T/root" 2 48 2 ||
        bail_out "cannot build the fake root"

# The name: an invalid byte, an escape sequence, a backslash.  The UUID: a
# broken two-byte sequence and a bell.  What every exit must show instead:
NAME=$'NVIDIA H100\xff\x1b[2J\\'
UUID=$'GPU-\xc3(bad\x07'
SAFE_NAME='NVIDIA H100\xff\x1b[2J\x5c'
SAFE_UUID='GPU-\xc3(bad\x07'
TYPE='nvidia_h100_xff_x1b[2j_x5c'
{
        grep -v '^gpu|00000000:DB:00.0|' "$DATA/nvml-h100-8.desc" | sed 's/NVIDIA H100 80GB HBM3/H100/'
        printf 'gpu|00000000:DB:00.0|2|%s|%s|85520809984|48-95,144-191|-|-\n' "$NAME" "$UUID"
        echo "events|$EV"
} > "$T/nvml.desc"
printf 'NodeName=%s Gres=gpu:h100:7,gpu:%s:1\n' "$NODE" "$TYPE" > "$T/slurm.conf"
config() {
        sunkd_config "metrics_textfile: $T/sunkd.prom
modules:
  gres:
    nvml_library: $NVML
    root: $T/root
    gres_conf: $T/gres.conf
    slurm_conf: $T/slurm.conf
    node_name: $NODE
    interval: 1h
    xid_window: 1h
$1
  testmod: {}"
}
config
export FAKE_NVML_CONFIG="$T/nvml.desc"
LOG_MARK=0 LOG_MARKED="$T/sunkd.log"
sunkd_start
ok "the first discovery" wait_runs gres.discover 1

# No raw byte of the driver's anywhere in a text; prints what it found.
raw_bytes() {
        LC_ALL=C grep -c -a -E $'\xff|\x1b|\x07|\xc3' "$1"
}

# The answer.
list=$(python3 "$RAW" "$SOCK" call io.sunkd.Gres.List)
like "$list" '^\{"parameters"' "io.sunkd.Gres.List answers, not InternalError"
last_gpu() {
        python3 "$RAW" "$SOCK" call io.sunkd.Gres.List |
                python3 -c 'import json,sys; g=json.load(sys.stdin)["parameters"]["gpus"][-1]; print(g[sys.argv[1]])' "$1"
}
is "$(last_gpu name)" "$SAFE_NAME" "List: the name, each odd byte and the backslash as \\xHH"
is "$(last_gpu uuid)" "$SAFE_UUID" "List: the UUID, escaped the same way"
is "$(last_gpu type)" "$TYPE" "List: the type is a token Slurm can take"

# sunkctl's views.
out=$(ctl gres 2>&1); rc=$?
is "$rc" 0 "sunkctl gres answers"
like "$out" "0000:db:00.0" "and lists the GPU"
is "$(printf '%s' "$out" | raw_bytes /dev/stdin)" 0 "with no raw byte of the driver's"
out=$(ctl gres --slurmd-conf 2>&1); rc=$?
is "$rc" 0 "sunkctl gres --slurmd-conf answers"
is "$out" "Gres=gpu:h100:7,gpu:$TYPE:1" "with a Gres= slurmd can take"
out=$(ctl gres --check 2>&1); rc=$?
is "$rc" 0 "sunkctl gres --check answers, and matches the node line written with the safe type"
like "$out" "^match: 8 GPU" "and says so"

# gres.conf: Type= is one safe token; nothing else on the line changed.
line=$(grep 'File=/dev/nvidia2' "$T/gres.conf")
like "$line" "^Name=gpu Type=$(printf '%s' "$TYPE" | sed 's/[][\\.]/\\&/g') File=/dev/nvidia2 Cores=48-95 Links=[-0-9,]+$" \
     "gres.conf: the GPU's line, Type= escaped"
is "$(raw_bytes "$T/gres.conf")" 0 "gres.conf has no raw byte of the driver's"
is "$(LC_ALL=C grep -c -v -E '^Name=gpu Type=[a-z0-9_.[-]+ File=/dev/nvidia[0-9]+ Cores=[0-9,-]+( Links=[0-9,-]+)?$' "$T/gres.conf")" 0 \
   "every line of gres.conf is keys and safe tokens"

# The fact another module reads.
fact=$(python3 "$RAW" "$SOCK" call io.sunkd.Test.Fact '{"name":"gres.gpus"}')
is "$(printf '%s' "$fact" | python3 -c 'import json,sys; f=json.load(sys.stdin)["parameters"]["value"]; print(f["gpus"][-1]["uuid"], f["gpus"][-1]["type"])')" \
   "$SAFE_UUID $TYPE" "the gres.gpus fact: the UUID and type escaped"

# Metrics: the exposition must stay valid UTF-8, or Prometheus drops the scrape.
valid_exposition() {
        python3 - "$1" <<'PY'
import re, sys
text = open(sys.argv[1], "rb").read().decode("utf-8")  # strict: raises on a bad byte
sample = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="(\\[\\"n]|[^"\\\n])*"(,[a-zA-Z_][a-zA-Z0-9_]*="(\\[\\"n]|[^"\\\n])*")*\})? \S+$')
for line in text.splitlines():
    assert line.startswith("#") or sample.match(line), "bad line: %r" % line
    assert not re.search(r'[\x00-\x08\x0b-\x1f\x7f]', line), "control character: %r" % line
print("valid")
PY
}
ctl metrics > "$T/ctl.prom" 2>&1
is "$(valid_exposition "$T/ctl.prom" 2>&1 | tail -1)" valid "sunkctl metrics is valid exposition"
like "$(cat "$T/ctl.prom")" 'sunkd_gres_gpu_memory_bytes\{uuid="GPU-\\\\xc3\(bad\\\\x07",bus_id="0000:db:00.0"\} 85520809984' \
     "the GPU's label holds the escaped UUID"
wait_textfile() { grep -q 'uuid="GPU-\\\\xc3' "$T/sunkd.prom" 2>/dev/null; }
ok "the textfile has the GPU" wait_until 300 wait_textfile
is "$(valid_exposition "$T/sunkd.prom" 2>&1 | tail -1)" valid "the metrics textfile is valid exposition"

# An XID of that GPU is kept for it, under the same escaped UUID.
watching() { [ "$(module_status gres xid_watch)" = watching ]; }
ok "the XID watch runs" wait_until 300 watching
(IFS='|'; echo "00000000:DB:00.0|79") > "$EV/.new" && mv "$EV/.new" "$EV/000001"
ok "the XID is logged with the escaped UUID" \
        wait_log "GPU GPU-\\\\xc3\(bad\\\\x07 at 0000:db:00.0: XID 79"
is "$(python3 "$RAW" "$SOCK" call io.sunkd.Gres.List |
        python3 -c 'import json,sys; g=json.load(sys.stdin)["parameters"]["gpus"][-1]; print(len(g.get("xid_events", [])), all(v == 0 for k, v in g["health"].items() if k != "recovery"))')" \
   "1 True" "List: the event is the GPU's (whose health is NVML's: gres judges no XID)"
unlike "$(log_since)" "Dropped" "no event dropped"

# A GPU appears: logged with what it shows elsewhere.
printf 'gpu|00000000:DC:00.0|3|%s|%s-2|1|-|-|-\n' "$NAME" "$UUID" >> "$T/nvml.desc"
log_mark
ctl run gres.discover > /dev/null || bail_out "discovery failed"
ok "a new GPU is logged escaped" wait_log "GPU GPU-\\\\xc3\(bad\\\\x07-2 \(nvidia_h100_xff_x1b\[2j_x5c\) at 0000:dc:00.0 appeared"

# NVML fails and explains itself in the driver's own broken words.
printf 'error|no\xffdriver\x1b]0;pwned\x07\ninit fail\n' > "$T/nvml.desc"
log_mark
ctl run gres.discover > /dev/null || bail_out "discovery failed"
ok "the NVML error is logged escaped" \
        wait_log 'NVML: nvmlInit_v2: no\\xffdriver\\x1b\]0;pwned\\x07 \(9\); found the GPUs through /proc instead'
like "$(python3 "$RAW" "$SOCK" call io.sunkd.Gres.List)" '"nvml_error": "nvmlInit_v2: no\\\\xffdriver' \
     "List answers, with the error escaped"
is "$(raw_bytes "$T/sunkd.log")" 0 "the log has no raw byte of the driver's"

# /proc: the information file is the driver's too (or whoever can write it).
info="$T/root/proc/driver/nvidia/gpus/0000:18:00.0/information"
python3 - "$info" "$NAME" "$UUID" <<'PY' || bail_out "cannot edit the information file"
import os, re, sys
path, name, uuid = sys.argv[1], os.fsencode(sys.argv[2]), os.fsencode(sys.argv[3])
text = open(path, "rb").read()
text = re.sub(rb"(?m)^Model:.*$", lambda m: b"Model: \t\t " + name, text)
text = re.sub(rb"(?m)^GPU UUID:.*$", lambda m: b"GPU UUID: \t " + uuid, text)
open(path, "wb").write(text)
PY
sunkd_stop
config "    backend: proc"
sunkd_start
ok "a discovery through /proc" wait_runs gres.discover 1
is "$(python3 "$RAW" "$SOCK" call io.sunkd.Gres.List |
        python3 -c 'import json,sys; g=json.load(sys.stdin)["parameters"]["gpus"][0]; print(g["name"], g["uuid"], g["type"], sep="|")')" \
   "$SAFE_NAME|$SAFE_UUID|$TYPE" "/proc: List shows the name, UUID and type escaped"
is "$(ctl gres --slurmd-conf)" "Gres=gpu:$TYPE:1,gpu:nvidia_h100_80gb_hbm3:1" "/proc: --slurmd-conf answers"
is "$(raw_bytes "$T/gres.conf")" 0 "/proc: gres.conf has no raw byte"

# A node line in slurm.conf that is not ASCII: the check says why, List answers.
printf 'NodeName=%s Gres=gpu:h\xff100:3\n' "$NODE" > "$T/slurm.conf"
ctl run gres.discover > /dev/null || bail_out "discovery failed"
out=$(ctl gres --check 2>&1); rc=$?
is "$rc" 1 "a slurm.conf Gres= with a byte that is not ASCII: --check fails"
like "$out" "^unknown: $T/slurm.conf: the Gres= of $NODE has bytes that are not printable ASCII" "and says why"
like "$(python3 "$RAW" "$SOCK" call io.sunkd.Gres.List)" '^\{"parameters"' "and List answers"

sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd exits cleanly"
is "$(raw_bytes "$T/sunkd.log")" 0 "nothing the driver wrote reached the log raw"
done_testing
