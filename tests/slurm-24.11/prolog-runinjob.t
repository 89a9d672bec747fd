#!/bin/bash
# deadline: 900
# sunkd-prolog as slurm.conf's Prolog= with PrologFlags=RunInJob (Slurm
# 24.05 and later; run by make check-slurm-24.11): slurmd's extern step
# (slurmstepd, not slurmd) runs the client, which hands the run to sunkd as
# under any other flag; each script gets the environment slurmd passed; a
# failing script drains the node with its name; with sunkd stopped the
# client runs the scripts itself and the job still runs.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/slurm.sh"
sunkd_setup
slurm_setup
for m in prolog health; do
        cp "$SUNKD_BUILDDIR/modules/$m/.libs/$m.so" "$MODDIR/" || bail_out "$m.so not built"
done
B="$SUNKD_BUILDDIR/modules/prolog"
NODE=rj-node-1
P="$S/prolog.d"
E="$S/epilog.d"
O="$S/out"
mkdir -p "$P" "$E" "$O" "$S/bin"
chmod 755 "$P" "$E" "$O" "$S/bin"
# the wrapper records what slurmd passed and which process ran it
printf '#!/bin/sh\nenv > %s/slurmd-env.$SLURM_JOB_ID\ncat /proc/$PPID/comm > %s/parent.$SLURM_JOB_ID\nexec %s/sunkd-prolog --socket %s\n' \
        "$O" "$O" "$B" "$SOCK" > "$S/bin/prolog"
chmod 755 "$S/bin/prolog"
script() { # NAME BODY
        printf '#!/bin/sh\n%s\n' "$2" > "$1"
        chmod 755 "$1"
}
script "$P/10-env" "env > $O/script-env.\$SLURM_JOB_ID"
script "$P/50-check" "[ -e $O/fail ] && { echo 'GPU 3 missing'; exit 1; }; exit 0"

slurm_munge_start
slurm_conf "Prolog=$S/bin/prolog" "PrologEpilogTimeout=30" "PrologFlags=RunInJob"
slurm_ctld_start
slurm_node_start "$NODE"
sunkd_config "modules:
  prolog:
    prolog_dir: $P
    epilog_dir: $E
    script_timeout: 10s
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
job() { timeout 120 srun -N1 -w "$NODE" "$@"; }
PROLOG_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
compare_env() {
        diff <(grep -v -E '^(PWD|SHLVL|_|OLDPWD)=' "$O/slurmd-env.$1" | sort) \
             <(grep -v -E '^(PWD|SHLVL|_|OLDPWD|SUNKD_SCRIPT)=' "$O/script-env.$1" | grep -v -x "PATH=$PROLOG_PATH" | sort)
}

job true
is "$?" 0 "a job runs with the prolog passing"
ID=$(ls "$O" | sed -n 's/^script-env\.//p' | head -1)
ok "the prolog's script ran for the job" test -n "$ID"
is "$(cat "$O/parent.$ID" 2>/dev/null)" "slurmstepd" "slurmd's extern step ran the client (RunInJob)"
is "$(compare_env "$ID")" "" "the script got the environment slurmd passed, with PATH and SUNKD_SCRIPT"
ok "sunkd ran it (sunkctl prolog shows the run)" wait_until 300 eval 'ctl prolog | grep -q "$ID *prolog .* ok"'

touch "$O/fail"
job true > /dev/null 2>&1
ok "a failing script fails the job" test "$?" -ne 0
ok "and drains the node with the script's name" \
        wait_until 600 eval '[ "$(reason)" = "sunkd: prolog 50-check rc=1: GPU 3 missing" ]'
rm "$O/fail"
ctl health undrain > /dev/null
wait_until 600 eval '[ -z "$(reason)" ]' && slurm_wait_ready "$NODE"

sunkd_stop
rm -f "$O"/script-env.*
job true
is "$?" 0 "with sunkd stopped the job still runs"
ID=$(ls "$O" | sed -n 's/^script-env\.//p' | head -1)
ok "the client ran the scripts itself" test -n "$ID"
is "$(cat "$O/parent.$ID" 2>/dev/null)" "slurmstepd" "from the extern step"
is "$(compare_env "$ID")" "" "with slurmd's environment"
done_testing
