#!/bin/bash
# deadline: 1200
# sunkd-prolog and sunkd-epilog as slurm.conf's Prolog= and Epilog= under a
# real slurmd and slurmctld (Debian's, on 127.0.0.1): each script gets the
# environment slurmd passed to the client; the epilog runs after the job; a
# failing prolog drains the node with the script's name (sinfo -R), which
# slurmctld's "Prolog error" does not replace, and fails the job; a script
# past its timeout is killed with its children; slurmd's own
# PrologEpilogTimeout killing the client kills the script; with sunkd
# stopped the client runs the scripts itself; a group-writable script is
# refused; and all of it with PrologFlags=Alloc too.  A directory moved from
# slurmd's globbed Prolog=dir/* runs in slurmd's own order under
# `order: reverse`, with its partition's scripts (prolog.d/<partition>/)
# merged in by name.
#
# Prolog= names a two-line wrapper that records what slurmd passed and
# execs the client with this test's socket (an installed client finds
# sunkd's own socket by itself).
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/slurm.sh"
sunkd_setup
slurm_setup
for m in prolog health; do
        cp "$SUNKD_BUILDDIR/modules/$m/.libs/$m.so" "$MODDIR/" || bail_out "$m.so not built"
done
B="$SUNKD_BUILDDIR/modules/prolog"
NODE=pl-node-1
P="$S/prolog.d"
E="$S/epilog.d"
O="$S/out"
mkdir -p "$P" "$E" "$O" "$S/bin"
chmod 755 "$P" "$E" "$O" "$S/bin"
for k in prolog epilog; do
        printf '#!/bin/sh\nenv > %s/slurmd-%s-env.$SLURM_JOB_ID\ncat /proc/$$/environ > %s/slurmd-%s-environ.$SLURM_JOB_ID\nexec %s/sunkd-%s --socket %s\n' \
                "$O" "$k" "$O" "$k" "$B" "$k" "$SOCK" > "$S/bin/$k"
        chmod 755 "$S/bin/$k"
done
script() { # NAME BODY
        printf '#!/bin/sh\n%s\n' "$2" > "$1"
        chmod 755 "$1"
}
script "$P/10-env" "env > $O/script-env.\$SLURM_JOB_ID; cat /proc/\$\$/environ > $O/script-environ.\$SLURM_JOB_ID"
script "$P/50-check" "[ -e $O/fail ] && { echo 'checking GPUs'; echo 'GPU 3 missing'; exit 1; }; exit 0"
script "$E/10-done" "echo \$SLURM_JOB_ID >> $O/epilog-ran"

slurm_munge_start
start_slurm() { # extra slurm.conf lines
        slurm_conf "Prolog=$S/bin/prolog" "Epilog=$S/bin/epilog" "PrologEpilogTimeout=8" "$@"
        slurm_ctld_start
        slurm_node_start "$NODE"
}
start_slurm
sunkd_config "modules:
  prolog:
    prolog_dir: $P
    epilog_dir: $E
    script_timeout: 3s
    total_timeout: 60s
    kill_grace: 1s
  health:
    node_name: $NODE
    interval: 1h
    transport: scontrol
    slurm_conf: $SLURM_CONF
    checks:
      - name: ok
        type: file
        path: $SLURM_CONF"
sunkd_start
reason() { slurm_reason "$NODE"; }
# last_run FIELD: of the last prolog run (an epilog may have come since)
last_run() {
        ctl --json prolog | python3 -c "
import json, sys
r = [r for r in json.load(sys.stdin)['runs'] if r['kind'] == 'prolog']
print(r[0][sys.argv[1]] if r else '')" "$1"
}
job() { timeout 120 srun -N1 -w "$NODE" "$@"; }
# compare_env JOBID: the script's environment is what slurmd gave the client,
# plus PATH (slurmd gives none) and SUNKD_SCRIPT; the shell of the wrapper
# adds PWD.
compare_env() {
        diff <(grep -v -E '^(PWD|SHLVL|_|OLDPWD)=' "$O/slurmd-prolog-env.$1" | sort) \
             <(grep -v -E '^(PWD|SHLVL|_|OLDPWD|SUNKD_SCRIPT)=' "$O/script-env.$1" | grep -v -x "PATH=$PROLOG_PATH" | sort)
}
PROLOG_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
undrain() {
        ctl health undrain > /dev/null
        wait_until 600 eval '[ -z "$(reason)" ]' && slurm_wait_ready "$NODE"
}

# ---- a job: prolog with slurmd's environment, then the epilog ----
job true
is "$?" 0 "a job runs with the prolog passing"
ID=$(ls "$O" | sed -n 's/^script-env\.//p' | head -1)
ok "the prolog's script ran for the job" test -n "$ID"
like "$(cat "$O/script-env.$ID")" "SLURM_JOB_ID=$ID" "with the job's id"
like "$(cat "$O/script-env.$ID")" "SLURM_JOB_USER=root" "and user"
is "$(compare_env "$ID")" "" "exactly the environment slurmd passed, with PATH and SUNKD_SCRIPT"
ok "the epilog runs after the job" wait_until 600 eval 'grep -qx "$ID" "$O/epilog-ran" 2>/dev/null'
ok "sunkctl prolog shows both" wait_until 300 eval 'ctl prolog | grep -q "$ID *epilog .* ok"'

# ---- any job's bytes and size: nobody's jobs pass, the scripts see them exactly ----
# compare_environ JOBID: the script's /proc environ against the client's,
# entry by entry as bytes (PATH, SUNKD_SCRIPT and the shell's own aside)
compare_environ() {
        python3 - "$O/slurmd-prolog-environ.$1" "$O/script-environ.$1" <<'PY'
import sys
ours = (b'PATH=', b'SUNKD_SCRIPT=', b'PWD=', b'SHLVL=', b'_=', b'OLDPWD=')
def entries(path):
    return sorted(e for e in open(path, 'rb').read().split(b'\0')[:-1] if not e.startswith(ours))
a, b = entries(sys.argv[1]), entries(sys.argv[2])
print('same' if a == b else 'differ: %r' % (set(a) ^ set(b)))
PY
}
NOBODY_DIR="$T/$(printf 'caf\xe9-\xff')"
mkdir -m 755 "$NOBODY_DIR" && chown 65534:65534 "$NOBODY_DIR"
as_nobody() { setpriv --reuid 65534 --regid 65534 --clear-groups "$@"; }
before=$(ls "$O" | grep -c '^script-environ\.')
as_nobody timeout 120 srun -N1 -w "$NODE" --comment="$(printf 'Latin-1 caf\xe9 \xff\xfe')" --chdir="$NOBODY_DIR" \
        --export="ALL,SUNKD_BIG=$(head -c 120000 /dev/zero | tr '\0' x),NOT_UTF8=$(printf '\xff')" true
is "$?" 0 "nobody's job with a Latin-1 --comment, a --chdir holding 0xff and a 120 KB --export runs"
ID=$(ls -t "$O" | sed -n 's/^script-environ\.//p' | head -1)
ok "its prolog ran" test "$(ls "$O" | grep -c '^script-environ\.')" -gt "$before"
like "$(tr '\0' '\n' < "$O/script-environ.$ID")" "SLURM_JOB_WORK_DIR=$NOBODY_DIR" "slurmd passed the --chdir"
ok "and the --comment, bytes as they were" python3 -c "
import sys
e = open(sys.argv[1], 'rb').read().split(b'\0')
sys.exit(0 if b'SLURM_JOB_COMMENT=Latin-1 caf\xe9 \xff\xfe' in e else 1)" "$O/script-environ.$ID"
is "$(compare_environ "$ID")" "same" "the script saw slurmd's environment byte for byte"
ok "the epilog ran for it" wait_until 600 eval 'grep -qx "$ID" "$O/epilog-ran" 2>/dev/null'
unlike "$(slurm_state "$NODE")" "DRAIN" "and the node is not drained"
is "$(reason)" "" "with no reason"
sunkd_stop
as_nobody timeout 120 srun -N1 -w "$NODE" --comment="$(printf 'Latin-1 caf\xe9 \xff\xfe')" --chdir="$NOBODY_DIR" true
is "$?" 0 "with sunkd stopped the client's fallback runs it too"
ID=$(ls -t "$O" | sed -n 's/^script-environ\.//p' | head -1)
is "$(compare_environ "$ID")" "same" "with the same bytes"
unlike "$(slurm_state "$NODE")" "DRAIN" "and the node is still not drained"
sunkd_start

# ---- a failing prolog drains the node, naming the script ----
touch "$O/fail"
job true > /dev/null 2>&1
isnt_zero=$?
ok "the job fails" test "$isnt_zero" -ne 0
ok "the node is drained with the script's name" \
        wait_until 600 eval '[ "$(reason)" = "sunkd: prolog 50-check rc=1: GPU 3 missing" ]'
like "$(sinfo -h -R -n "$NODE" -o '%E')" "50-check" "sinfo -R shows the script"
like "$(slurm_state "$NODE")" "DRAIN" "and the node drains"
rm "$O/fail"
ok "an operator undrains it" undrain

# ---- a script past its timeout is killed with its children ----
script "$P/60-hang" "sh -c 'trap \"\" TERM; echo \$\$ > $O/gc; exec sleep 1000' & sleep 1000"
job true > /dev/null 2>&1
ok "the hanging script fails the prolog" wait_until 600 eval 'reason | grep -q "^sunkd: prolog 60-hang timed out"'
ok "its child that ignores SIGTERM is gone" wait_until 300 eval '! kill -0 "$(cat "$O/gc")" 2>/dev/null'
rm "$P/60-hang"
ok "undrained" undrain

# ---- slurmd's PrologEpilogTimeout kills the client: the script goes too ----
sunkd_stop
sed -i 's/script_timeout: 3s/script_timeout: 60s/' "$T/sunkd.yaml"
sunkd_start
rm -f "$O/gc"
script "$P/60-hang" "sh -c 'trap \"\" TERM; echo \$\$ > $O/gc; exec sleep 1000' & sleep 1000"
job true > /dev/null 2>&1
ok "slurmd gives up on the prolog at its PrologEpilogTimeout" wait_until 900 eval '[ "$(last_run result)" = aborted ]'
ok "and the script's child is gone with the client" wait_until 300 eval '! kill -0 "$(cat "$O/gc")" 2>/dev/null'
rm "$P/60-hang"
wait_until 600 eval '[ -n "$(reason)" ]'
scontrol update nodename="$NODE" state=resume
slurm_wait_ready "$NODE"

# ---- a group-writable script is refused ----
chmod 775 "$P/50-check"
job true > /dev/null 2>&1
ok "a group-writable script fails the prolog" wait_until 600 eval 'reason | grep -q "^sunkd: prolog .*refused"'
chmod 755 "$P/50-check"
ok "undrained" undrain

# ---- sunkd stopped: the client runs the scripts itself ----
sunkd_stop
rm -f "$O"/script-env.*
job true
is "$?" 0 "with sunkd stopped the job still runs"
ok "and the prolog's scripts ran" test -n "$(ls "$O" | grep '^script-env\.')"
sunkd_start

# ---- PrologFlags=Alloc ----
slurm_node_stop "$NODE"
slurm_ctld_stop
start_slurm "PrologFlags=Alloc"
rm -f "$O"/script-env.*
job true
is "$?" 0 "with PrologFlags=Alloc a job runs"
ID=$(ls "$O" | sed -n 's/^script-env\.//p' | head -1)
ok "the prolog ran at allocation" test -n "$ID"
is "$(compare_env "$ID")" "" "with slurmd's environment"
touch "$O/fail"
job true > /dev/null 2>&1
ok "a failing prolog drains the node with the script's name" \
        wait_until 600 eval '[ "$(reason)" = "sunkd: prolog 50-check rc=1: GPU 3 missing" ]'
rm "$O/fail"
ok "undrained" undrain

# ---- a directory moved from Prolog=dir/*: its order, and the partition's scripts ----
# The same scripts under sunkd (order: reverse, with prolog.d/debug/) and
# under slurmd's own globbed Prolog=: sunkd runs them in slurmd's order,
# with the partition's script in its place by name.
R="$S/rules.d"
G="$S/glob.d"
mkdir -p "$R/debug" "$G"
chmod 755 "$R" "$R/debug" "$G"
note() { # DIR NAME FILE: a script that notes NAME in $O/FILE
        script "$1/$2" "echo $2 >> $O/$3"
}
for n in 10-first 20-second 3-third Z-upper a-lower; do
        note "$R" "$n" rules-order
        note "$G" "$n" glob-order
done
script "$R/debug/25-part" "echo debug/25-part >> $O/rules-order"
sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd exits cleanly"
sunkd_config "modules:
  prolog:
    prolog_dir: $R
    epilog_dir: $E
    order: reverse"
sunkd_start
job true
is "$?" 0 "a job in partition debug runs with order: reverse"
is "$(paste -s -d' ' < "$O/rules-order")" "a-lower Z-upper 3-third debug/25-part 20-second 10-first" \
        "its prolog ran the scripts z-a, Z-A, 9-0, the partition's merged in by name"
is "$(ctl prolog list SLURM_JOB_PARTITION=debug | awk '$1 == "run" { print $2 }' | paste -s -d' ')" \
        "$(paste -s -d' ' < "$O/rules-order")" "sunkctl prolog list shows that order"
sunkd_stop
is "$SUNKD_EXIT" 0 "and exits cleanly again"
slurm_node_stop "$NODE"
slurm_ctld_stop
slurm_conf "Prolog=$G/*" "Epilog=$S/bin/epilog" "PrologEpilogTimeout=8"
slurm_ctld_start
slurm_node_start "$NODE"
job true
is "$?" 0 "slurmd runs the same scripts by its own Prolog=dir/*"
is "$(paste -s -d' ' < "$O/glob-order")" "a-lower Z-upper 3-third 20-second 10-first" "in slurmd's order"
is "$(grep -v -x debug/25-part "$O/rules-order" | paste -s -d' ')" "$(paste -s -d' ' < "$O/glob-order")" \
        "which is sunkd's order: reverse"
done_testing
