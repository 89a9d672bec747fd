#!/bin/bash
# sunkctl gres right after start: io.sunkd.Gres.List waits for the first
# discovery instead of answering Unavailable.  A discovery that takes 2 s;
# one held until the test lets it end, with a caller that hangs up, one
# whose own timeout ends first, and more callers than may wait; the module
# stopped (by a reload, by SIGTERM) while calls wait; a first discovery that
# fails; an NVML that hangs, answered from /proc.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/gres/.libs/gres.so" "$MODDIR/" || bail_out "gres.so not built"
NVML="$SUNKD_BUILDDIR/tests/fake-nvml/.libs/libnvidia-ml.so"
[ -f "$NVML" ] || bail_out "the fake NVML is not built"
DATA="$SUNKD_SRCDIR/tests/data/gres"
cp -r "$DATA/proc-node" "$T/root" || bail_out "cannot build the fake root"
export FAKE_NVML_CONFIG="$T/nvml.desc" FAKE_NVML_HANG_FILE="$T/inside"
config() { # [extra gres keys]
        sunkd_config "modules:
  gres:
    nvml_library: $NVML
    root: $T/root
    node_name: gpu-node-07
    slurm_conf: $T/slurm.conf
    interval: 1h
    xid_events: no
$1
  testmod: {}"
}
# desc FIRST-LINE...: the HGX H100 after what the driver does first.
desc() {
        { printf '%s\n' "$@"; grep -v '^init' "$DATA/nvml-h100-8.desc"; } > "$T/nvml.desc"
}
printf 'NodeName=gpu-node-07 Gres=gpu:nvidia_h100_80gb_hbm3:8\n' > "$T/slurm.conf"
waiting() { [ "$(module_status gres list_waiting)" = "$1" ]; }
gpus_in() { python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["gpus"]))' "$1" 2>/dev/null; }

# calls.py N MODE: N connections each calling io.sunkd.Gres.List at once.
# MODE read: prints "<error or ok> <GPUs>" for each answer (a 60 s socket
# timeout fails the test rather than hanging it); MODE hold FILE: reads
# nothing and hangs up once FILE exists (60 s at most).
cat > "$T/calls.py" <<'PY'
import json, os, socket, sys, time
path, n, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
msg = json.dumps({"method": "io.sunkd.Gres.List", "parameters": {}}).encode() + b"\0"
socks = []
for _ in range(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(60)
    s.connect(path)
    s.sendall(msg)
    socks.append(s)
if mode == "hold":
    for _ in range(6000):
        if os.path.exists(sys.argv[4]):
            break
        time.sleep(0.01)
    for s in socks:
        s.close()
    sys.exit(0)
for s in socks:
    buf = b""
    try:
        while b"\0" not in buf:
            c = s.recv(65536)
            if not c:
                break
            buf += c
    except socket.timeout:
        print("timeout 0")
        continue
    if b"\0" not in buf:
        print("closed 0")
        continue
    r = json.loads(buf.split(b"\0")[0])
    print(r.get("error", "ok"), len(r.get("parameters", {}).get("gpus", [])))
PY

# ---- A discovery that takes 2 s -------------------------------------------
desc "init delay 2000"
config
sunkd_start
ctl gres --slurmd-conf > "$T/conf.out" 2>&1 &
CONF_PID=$!
out=$(ctl --json gres 2>&1); rc=$?
is "$rc" 0 "sunkctl gres --json right after start answers"
printf '%s' "$out" > "$T/list.json"
is "$(gpus_in "$T/list.json")" 8 "with the 8 GPUs, not Unavailable"
wait $CONF_PID
is "$?:$(cat "$T/conf.out")" "0:Gres=gpu:nvidia_h100_80gb_hbm3:8" "and so does --slurmd-conf"
sunkd_stop

# ---- A discovery held until the test lets it end ----------------------------
rm -f "$T/inside" "$T/release"
desc "init wait $T/release"
sunkd_start
ok "the first discovery is inside NVML" wait_for_file "$T/inside"
ctl --json gres > "$T/a.out" 2>&1 &
A_PID=$!
ok "sunkctl gres waits: status shows one call waiting" wait_until 300 waiting 1
is "$(job_field gres.discover state)" running "the discovery still runs"
is "$(ctl ping)" pong "sunkd answers meanwhile"

# A caller that hangs up while it waits leaves at once, and nothing is answered to it.
python3 "$T/calls.py" "$SOCK" 1 hold "$T/hangup" &
HOLD_PID=$!
ok "a second call waits" wait_until 300 waiting 2
touch "$T/hangup"
wait $HOLD_PID
ok "the caller that hung up is dropped" wait_until 300 waiting 1
# One whose own timeout ends first: the client gives up, the call goes.
out=$(ctl -t 1 gres 2>&1); rc=$?
is "$rc" 1 "a client timeout still ends sunkctl gres"
like "$out" "Connection timed out|timed out" "and says so"
ok "its call is dropped too" wait_until 300 waiting 1

# More callers than may wait: the excess is answered at once.
python3 "$T/calls.py" "$SOCK" 63 read > "$T/many.out" &
MANY_PID=$!
ok "64 calls wait" wait_until 600 waiting 64
out=$(ctl gres 2>&1); rc=$?
is "$rc" 1 "the 65th is not kept"
like "$out" "io.sunkd.Unavailable.*too many calls wait for the first discovery" "it is told why"
is "$(module_status gres list_waiting)" 64 "and the 64 still wait"

touch "$T/release"
wait $A_PID
is "$?" 0 "the first caller is answered when the discovery ends"
is "$(gpus_in "$T/a.out")" 8 "with the GPUs"
wait $MANY_PID
is "$(grep -c '^ok 8$' "$T/many.out")" 63 "so are the 63 others"
is "$(module_status gres list_waiting)" 0 "none waits any more"
is "$(ctl gres --slurmd-conf)" "Gres=gpu:nvidia_h100_80gb_hbm3:8" "later calls are answered at once"
sunkd_stop
is "$SUNKD_EXIT" 0 "clean exit"

# ---- The module stops while calls wait ----------------------------------------
rm -f "$T/inside" "$T/release"
sunkd_start
ok "held in NVML again" wait_for_file "$T/inside"
ctl gres > "$T/b.out" 2>&1 &
B_PID=$!
ok "a call waits" wait_until 300 waiting 1
sunkd_config "modules:
  testmod: {}"
log_mark
ctl reload > /dev/null
wait $B_PID
is "$?" 1 "gres removed by a reload: the waiting call fails"
like "$(cat "$T/b.out")" "io.sunkd.Unavailable.*the gres module is stopping" "with Unavailable, saying why"
ok "the module is unloaded" wait_log "Module 'gres' stopped and unloaded"
is "$(ctl ping)" pong "sunkd runs on"

rm -f "$T/inside"
config
ctl reload > /dev/null
ok "gres is back, its discovery held in NVML" wait_for_file "$T/inside"
ctl gres > "$T/c.out" 2>&1 &
C_PID=$!
ok "a call waits" wait_until 300 waiting 1
sunkd_stop
wait $C_PID
is "$?" 1 "SIGTERM while a call waits: the call ends, failed"
# The module answers it Unavailable in its fini; sunkd sends what is queued
# before it closes its connections on exit.
like "$(cat "$T/c.out")" "io.sunkd.Unavailable.*the gres module is stopping" "with Unavailable, sent before sunkd exits"
is "$SUNKD_EXIT" 0 "and sunkd exits cleanly"

# ---- A first discovery that fails ---------------------------------------------
rm -f "$T/inside" "$T/release"
desc "init wait $T/release" "init fail"
config "    backend: nvml"
sunkd_start
ok "held in NVML" wait_for_file "$T/inside"
ctl gres > "$T/d.out" 2>&1 &
D_PID=$!
ok "a call waits" wait_until 300 waiting 1
touch "$T/release"
wait $D_PID
is "$?" 1 "the first discovery fails: the waiting call fails"
like "$(cat "$T/d.out")" "io.sunkd.Unavailable.*GPU discovery failed: nvmlInit_v2: Fake error" "saying why"
out=$(ctl gres 2>&1)
like "$out" "io.sunkd.Unavailable.*GPU discovery failed: nvmlInit_v2" "a later call is answered at once, the same way"
is "$(module_status gres list_waiting)" 0 "none waits"
sunkd_stop

# ---- NVML hangs: the call waits for /proc -------------------------------------
desc "init hang"
config "    timeout: 2s"
sunkd_start
out=$(ctl --json gres 2>&1); rc=$?
is "$rc" 0 "NVML hangs at start: sunkctl gres waits for the discovery through /proc"
printf '%s' "$out" > "$T/proc.json"
is "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["source"])' "$T/proc.json")" proc "and answers from it"
sunkd_stop
is "$SUNKD_EXIT" 0 "clean exit"
done_testing
