#!/bin/bash
# deadline: 600
# The user_processes check against a real Slurm (munged, slurmctld and a
# slurmd on 127.0.0.1): the batch job of user `slurm` runs, and its
# processes, below the root slurmstepd slurmd started, are allowed, with
# and without lineage; a stray process of another non-system uid (started
# with setpriv, under no job) fails the check, named by pid and uid; a
# process of the job's user outside the job is allowed while that user has
# a job (NHC's check_ps_unauth_users) but not by lineage
# (check_ps_userproc_lineage); once the job is cancelled it is no longer.
# System uids (max_system_uid) and NHC's allowed users (root, nobody) are
# left out, so other tests' processes on this host do not count.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/slurm.sh"
sunkd_setup
slurm_setup
cp "$SUNKD_BUILDDIR/modules/health/.libs/health.so" "$MODDIR/" || bail_out "health.so not built"
command -v setpriv > /dev/null || bail_out "setpriv is needed (util-linux)"
command -v sbatch > /dev/null || bail_out "sbatch is needed (Debian package slurm-client)"
# The job's user: one no other test runs processes as, and not a system user
# below max_system_uid here; Debian's Slurm packages make it.
JU=$(id -u slurm 2> /dev/null) || bail_out "no user slurm (Debian package slurmctld makes it)"
JG=$(id -g slurm)
STRAY_UID=65533 # no name, no job, not a system uid here
NODE=up-node-1
MAXSYS=$((JU - 1))
strays=
stop_strays() { [ -n "$strays" ] && kill -KILL $strays 2> /dev/null; }
trap 'stop_strays; scancel -w "$NODE" 2> /dev/null; slurm_cleanup; sunkd_cleanup' EXIT

slurm_munge_start
slurm_conf
slurm_ctld_start
slurm_node_start "$NODE"

sunkd_config "modules:
  health:
    node_name: $NODE
    transport: none
    interval: 1h
    checks:
      - {name: users, type: user_processes, max_system_uid: $MAXSYS}
      - {name: lineage, type: user_processes, lineage: true, max_system_uid: $MAXSYS}"
sunkd_start
# as the job's user, as the stray uid: setpriv execs the command, so $! of
# one started in the background is the command's own pid
AS_JU=(setpriv --reuid "$JU" --regid "$JG" --clear-groups)
AS_STRAY=(setpriv --reuid "$STRAY_UID" --regid "$STRAY_UID" --clear-groups)

health_run users
is "$?" 0 "with no stray process the check passes"

# --- a batch job of user slurm: its processes are a job's
out=$(cd / && "${AS_JU[@]}" sbatch -N1 -w "$NODE" -o /dev/null -e /dev/null --chdir=/ --wrap 'exec sleep 4242' 2>&1)
like "$out" "^Submitted batch job [0-9]+" "user slurm's batch job is submitted"
JOB=$(sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p' <<< "$out")
ok "its process runs below slurmstepd" wait_until 1200 eval 'pgrep -u "$JU" -f "^sleep 4242\$" > /dev/null'
JPID=$(pgrep -u "$JU" -f '^sleep 4242$' | head -1)
like "$(ps -o comm= -p "$(ps -o ppid= -p "$JPID" | tr -d ' ')")" "slurmstepd|sh" "its parent is the job's"
health_run users
is "$?" 0 "the job's processes are allowed"
like "$(health_field users detail)" "no process of a user without a job \\([1-9][0-9]* of jobs" "counted as a job's"
health_run lineage
is "$?" 0 "and by lineage too"

# --- a stray process of a uid with no job
"${AS_STRAY[@]}" sleep 4343 > /dev/null 2>&1 &
STRAY=$!
strays="$strays $STRAY"
ok "the stray runs as uid $STRAY_UID" wait_until 300 eval '[ "$(ps -o uid=,comm= -p $STRAY | awk "{print \$1, \$2}")" = "$STRAY_UID sleep" ]'
health_run users
is "$?" 1 "a process of a uid with no job fails the check"
is "$(health_field users code)" "user_processes-unauthorized" "as user_processes-unauthorized"
like "$(health_field users detail)" "process 'sleep' \\(pid $STRAY\\) of uid $STRAY_UID whose user has no job on the node; 1 in all" \
        "naming its pid and uid"
health_run lineage
is "$?" 1 "by lineage too"
like "$(health_field lineage detail)" "\\(pid $STRAY\\) of uid $STRAY_UID was not started by a job; 1 in all" "saying so"
kill -KILL "$STRAY"
wait "$STRAY" 2> /dev/null
health_run users
is "$?" 0 "once it is gone the check passes again"

# --- the job's user outside the job
"${AS_JU[@]}" sleep 4444 > /dev/null 2>&1 &
OUTSIDE=$!
strays="$strays $OUTSIDE"
ok "user slurm runs a process outside the job" wait_until 300 eval '[ "$(ps -o uid=,comm= -p $OUTSIDE | awk "{print \$1, \$2}")" = "$JU sleep" ]'
health_run users
is "$?" 0 "allowed while its user has a job on the node"
health_run lineage
is "$?" 1 "but not by lineage"
like "$(health_field lineage detail)" "\\(pid $OUTSIDE\\) of uid $JU was not started by a job" "which names it"

# --- the job ends: its user has no job left
scancel "$JOB"
ok "the job's process is gone" wait_until 1200 eval '! kill -0 "$JPID" 2> /dev/null'
health_run users
is "$?" 1 "with the job over, the user's process outside it fails"
like "$(health_field users detail)" "\\(pid $OUTSIDE\\) of uid $JU whose user has no job on the node" "naming it"
done_testing
