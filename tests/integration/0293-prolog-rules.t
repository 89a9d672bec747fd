#!/bin/bash
# deadline: 600
# A prolog directory under the rules a site migrates from: `order: reverse`
# (slurmd's globbed Prolog=dir/*) and the name rules of run-parts(8), which
# select what run-parts 5.7 itself selects on the same directory; scripts of
# the job's partition (prolog.d/<partition>/) merged in by name, one of the
# same name replacing the common one, a partition name that could leave the
# directory selecting nothing; `sunkctl prolog list` shows what a run would
# do, in order, with what is skipped and why, and runs nothing; the client's
# fallback selects the same; a regex that does not compile is refused at
# --check-config at its line, and so is a partition's directory another uid
# owns; List is root's.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/prolog/.libs/prolog.so" "$MODDIR/" || bail_out "prolog.so not built"
B="$SUNKD_BUILDDIR/modules/prolog"
[ -x "$B/sunkd-prolog" ] || bail_out "sunkd-prolog not built"
command -v run-parts >/dev/null || bail_out "run-parts not found (debianutils): the rules are held to it"
SETTINGS="$T/run/prolog/client.json"
P="$T/p.d"
O="$T/out"
mkdir -p "$P/gpu" "$P/cpu" "$T/e.d" "$O"
chmod 755 "$P" "$P/gpu" "$P/cpu" "$T/e.d" "$O"

script() { # PATH: a root-owned 0755 script that notes its name (and dir) in $O/order
        printf '#!/bin/sh\necho %s >> %s/order\n' "${1#$P/}" "$O" > "$1"
        chmod 755 "$1"
}
for n in 10-a 20_b 30-Z 9z Abc-1 _x a- a.b-c a_b-c abc check.sh foo-bar foo-bar.dpkg-old lower.dot-x x~; do
        script "$P/$n"
done
script "$P/gpu/15-gpu"
script "$P/gpu/20_b"
script "$P/cpu/16-cpu"
config() { # ORDER NAMES
        sunkd_config "log_level: debug
modules:
  prolog:
    prolog_dir: $P
    epilog_dir: $T/e.d
    order: $1
    names: '$2'"
}
# list [KEY=VALUE...]: the names a run would run, in order, one line
listed() { ctl prolog list "$@" | awk '$1 == "run" { print $2 }' | paste -s -d' '; }
# what run-parts itself selects, in its order
runparts() { run-parts --test "$@" "$P" | sed "s|^$P/||" | paste -s -d' '; }
prolog() { env -i SLURM_JOB_ID=7 "$@" "$B/sunkd-prolog" --socket "$SOCK"; }

# ---- run-parts' default rule, reversed ----
config reverse run-parts
sunkd_start
wait_for_file "$SETTINGS" || bail_out "the module did not leave its settings for the client"
is "$(listed)" "$(runparts --reverse)" "names: run-parts, order: reverse: what run-parts --reverse runs, in its order"
is "$(listed)" "foo-bar abc a_b-c a- _x Abc-1 9z 30-Z 20_b 10-a" "  (those names, z-a, Z-A, 9-0)"
out=$(ctl prolog list)
like "$out" "prolog: $P \\(order: reverse, names: run-parts\\)" "list says the directory and its rules"
like "$out" "skip     check.sh: name not selected by names: run-parts" "a name the rule does not select is listed with why"
like "$out" "skip     lower.dot-x: name not selected by names: run-parts" "  (a dotted one too)"
ok "listing ran nothing" test ! -e "$O/order"

# ---- the job's partition ----
is "$(listed SLURM_JOB_PARTITION=gpu)" "foo-bar abc a_b-c a- _x Abc-1 9z 30-Z gpu/20_b gpu/15-gpu 10-a" \
        "the partition's scripts merged in by name, its 20_b in place of the common one"
like "$(ctl prolog list SLURM_JOB_PARTITION=gpu)" "skip     20_b: replaced by gpu/20_b" "the common script replaced is listed as such"
like "$(ctl prolog list SLURM_JOB_PARTITION=gpu)" "partition gpu: $P/gpu" "list names the partition's directory"
is "$(ctl prolog --list SLURM_JOB_PARTITION=gpu)" "$(ctl prolog list SLURM_JOB_PARTITION=gpu)" "sunkctl prolog --list is the same"
is "$(ctl prolog --list)" "$(ctl prolog list)" "  without a job environment too"
is "$(listed SLURM_JOB_PARTITION=cpu)" "foo-bar abc a_b-c a- _x Abc-1 9z 30-Z 20_b cpu/16-cpu 10-a" "another partition, its own scripts"
is "$(listed SLURM_JOB_PARTITION=none)" "$(listed)" "a partition without a directory: the common scripts"
for bad in .. . ../p.d gpu/.. cpu/../gpu; do
        is "$(listed "SLURM_JOB_PARTITION=$bad")" "$(listed)" "partition '$bad' selects no directory"
done
like "$(ctl prolog list SLURM_JOB_PARTITION=..)" "partition \.\.: not a plain partition name" "  and list says why"
like "$(ctl prolog list kind=epilog)" "^epilog: $T/e.d " "kind=epilog lists the epilog's directory"
like "$(ctl prolog list kind=5 2>&1)" "kind" "a kind that is not a string is refused, naming it"
like "$(ctl prolog list SLURM_JOB_PARTITION=5 2>&1)" "SLURM_JOB_PARTITION" "an environment value that is not a string is refused, naming it"
ok "still nothing ran" test ! -e "$O/order"

# A run does what list showed.
prolog SLURM_JOB_PARTITION=gpu
is "$?" 0 "the prolog of a job in partition gpu passes"
is "$(paste -s -d' ' < "$O/order")" "$(listed SLURM_JOB_PARTITION=gpu)" "it ran what list showed, in that order"
skipped=$(ctl --json prolog status | python3 -c "
import json, sys
r = json.load(sys.stdin)['runs'][0]
print(' '.join(s['name'] + '=' + s['skipped'] for s in r['scripts'] if 'skipped' in s))")
like "$skipped" "check.sh=name not selected by names: run-parts" "the run's record lists what it skipped and why"
like "$skipped" "20_b=replaced by gpu/20_b" "  the common script replaced too"
rm -f "$O/order"

# The client's fallback (sunkd down) selects the same, from its settings.
sunkd_stop
env -i SLURM_JOB_ID=8 SLURM_JOB_PARTITION=gpu "$B/sunkd-prolog" --socket "$SOCK" --settings "$SETTINGS" --local
is "$?" 0 "the client's own run passes"
is "$(paste -s -d' ' < "$O/order")" "foo-bar abc a_b-c a- _x Abc-1 9z 30-Z gpu/20_b gpu/15-gpu 10-a" \
        "the client's own run selects as the module does (order, names, partition)"
rm -f "$O/order"

# ---- lsbsysinit, forward; sunkd's rule; a regex ----
config forward lsbsysinit
sunkd_start
is "$(listed)" "$(runparts --lsbsysinit)" "names: lsbsysinit: what run-parts --lsbsysinit runs"
is "$(listed)" "10-a 9z a- a.b-c a_b-c abc foo-bar lower.dot-x" "  (those names)"
sunkd_stop
config forward sunkd
sunkd_start
is "$(listed)" "10-a 20_b 30-Z 9z Abc-1 _x a- a.b-c a_b-c abc check.sh foo-bar lower.dot-x" \
        "names: sunkd: today's rule (leftovers passed over quietly)"
unlike "$(ctl prolog list)" "foo-bar.dpkg-old" "  without a word for them"
sunkd_stop
config reverse '^[0-9]+-'
sunkd_start
is "$(listed)" "$(runparts --reverse --regex='^[0-9]+-')" "names: REGEX: what run-parts --regex runs"
is "$(listed)" "30-Z 10-a" "  (those names)"

# ---- List is root's ----
like "$(setpriv --reuid 65534 --regid 65534 --clear-groups "$SUNKCTL" --socket "$SOCK" prolog list 2>&1)" \
        "PermissionDenied" "List is refused to a user"
sunkd_stop

# ---- a regex that does not compile, at its line ----
config forward '([a-z'
out=$("$SUNKD" --check-config -c "$T/sunkd.yaml" 2>&1)
is "$?" 2 "--check-config refuses names: a regex that does not compile"
like "$out" "sunkd.yaml:[0-9]+:[0-9]+: key 'names': not a POSIX extended regular expression" "naming file:line and the key"
config backwards sunkd
like "$("$SUNKD" --check-config -c "$T/sunkd.yaml" 2>&1)" "key 'order': forward or reverse, not 'backwards'" "an unknown order is refused, naming the key"

# ---- a partition's directory is checked where the mistake is made ----
mkdir "$P/theirs"
chown 65534:65534 "$P/theirs"
config forward sunkd
like "$("$SUNKD" --check-config -c "$T/sunkd.yaml" 2>&1)" "key 'prolog_dir': refusing prolog directory '$P/theirs': owned by uid 65534" \
        "a partition directory another uid owns is refused at --check-config"
done_testing
