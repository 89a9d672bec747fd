#!/bin/bash
# The health module's section refused at its line, with nothing started: an
# unknown check type (the types listed), a second check of a name, a name
# that is a job of the module's own or not a name, a bad action, a second
# gpu check, a transport that does not exist, a reason prefix too short, a
# node name Slurm cannot have, a bad xid_policy, a group-readable JWT key,
# and a script sunkd would run as root that is not root's alone (another
# uid's, group-writable, in another uid's directory, behind a symlink to one
# of these), that is missing, not executable or not a file; and repairs:
# an unknown action, a row for a code and a check, a script without its
# path, a zero verify_within.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/health/.libs/health.so" "$MODDIR/" || bail_out "health.so not built"
refused() { # DESCRIPTION PATTERN SECTION-LINES
        sunkd_config "modules:
  health:
    node_name: n1
    transport: none
$3"
        out=$("$SUNKD" --check-config -c "$T/sunkd.yaml" 2>&1)
        is "$?" 2 "$1: refused"
        like "$out" "sunkd.yaml:[0-9]+:[0-9]+: $2" "$1: located, saying why"
}
refused "unknown type" "key 'type': no check type 'disk'; there are: mount, .*script, gpu" "    checks:
      - {name: a, type: disk}"
refused "no type" "key 'type': required" "    checks:
      - {name: a}"
refused "a second name" "key 'name': a second check named 'a'" "    checks:
      - {name: a, type: memory, min_total: 1M}
      - {name: a, type: memory, min_total: 1M}"
refused "a job's name" "key 'name': 'signal' is not a check name" "    checks:
      - {name: signal, type: memory, min_total: 1M}"
refused "not a name" "key 'name': 'a b' is not a check name" "    checks:
      - {name: a b, type: memory, min_total: 1M}"
refused "bad action" "key 'action': 'panic' is not drain or report" "    checks:
      - {name: a, type: memory, min_total: 1M, action: panic}"
refused "two gpu checks" "key 'type': a second check of type gpu" "    checks:
      - {name: g1, type: gpu}
      - {name: g2, type: gpu}"
refused "an unknown key of a type" "key 'path': unknown key" "    checks:
      - {name: a, type: memory, min_total: 1M, path: /}"
refused "checks not a list" "key 'checks': expected a list" "    checks: {a: 1}"
refused "an unknown repair" "key 'action': 'reset' is not drain, reboot, reset-gpu or script" "    actions:
      - {code: gpu-xid, action: reset}"
refused "a repair for a code and a check" "key 'actions': each names a code or a check, one of the two" "    actions:
      - {code: gpu-xid, check: gpu, action: reboot}"
refused "a repair script without its path" "key 'path': required for action script" "    actions:
      - {check: nhc, action: script}"
refused "a repair bound under a second" "key 'verify_within': at least 1s" "    repair:
      verify_within: 0s"
sunkd_config "modules:
  health:
    node_name: n1
    transport: carrier-pigeon"
out=$("$SUNKD" --check-config -c "$T/sunkd.yaml" 2>&1)
is "$?" 2 "an unknown transport is refused"
like "$out" "sunkd.yaml:7:5: key 'transport': 'carrier-pigeon' is not scontrol, libslurm, slurmrestd or none" "at its line and column, with the ones there are"
sunkd_config "modules:
  health:
    node_name: n1
    reason_prefix: x"
out=$("$SUNKD" --check-config -c "$T/sunkd.yaml" 2>&1)
is "$?" 2 "a one-byte prefix is refused"
like "$out" "key 'reason_prefix': 2 to 32 characters" "saying why"
sunkd_config "modules:
  health:
    node_name: \"n1 n2\""
out=$("$SUNKD" --check-config -c "$T/sunkd.yaml" 2>&1)
is "$?" 2 "a node name with a blank is refused"
like "$out" "key 'node_name': 'n1 n2' is not a Slurm node name" "saying why"
sunkd_config "modules:
  health:
    node_name: n1
    transport: none
    xid_policy:
      overrides:
        - {xid: 79, action: explode}"
out=$("$SUNKD" --check-config -c "$T/sunkd.yaml" 2>&1)
is "$?" 2 "an unknown XID action is refused"
like "$out" "sunkd.yaml:[0-9]+:[0-9]+: key 'xid_policy" "at its line"
head -c 32 /dev/urandom > "$T/jwt.key"
chmod 644 "$T/jwt.key"
sunkd_config "modules:
  health:
    node_name: n1
    scontrol:
      jwt_key_file: $T/jwt.key"
out=$("$SUNKD" --check-config -c "$T/sunkd.yaml" 2>&1)
is "$?" 2 "a world-readable JWT key is refused"
like "$out" "key 'jwt_key_file': .*$T/jwt.key" "naming the file"

# --- the transport's program and library: there, or refused at the key
# that names them, saying what to do
sunkd_config "modules:
  health:
    node_name: n1
    scontrol:
      path: $T/no-scontrol"
out=$("$SUNKD" --check-config -c "$T/sunkd.yaml" 2>&1)
is "$?" 2 "a scontrol that is not there is refused"
like "$out" "sunkd.yaml:8:7: key 'path': '$T/no-scontrol': No such file or directory: the scontrol transport runs it" \
        "at its key, naming it"
printf 'not a program\n' > "$T/scontrol.txt"
sed -i "s|path: .*|path: $T/scontrol.txt|" "$T/sunkd.yaml"
out=$("$SUNKD" --check-config -c "$T/sunkd.yaml" 2>&1)
is "$?" 2 "a scontrol that is not executable is refused"
like "$out" "key 'path': '$T/scontrol.txt': not an executable file" "saying so"
sed -i "s|^    node_name: n1$|&\n    transport: slurmrestd\n    slurmrestd: {url: 'http://127.0.0.1:9', token_file: $T/jwt.key}|" "$T/sunkd.yaml"
chmod 600 "$T/jwt.key"
"$SUNKD" --check-config -c "$T/sunkd.yaml" > "$T/rest.out" 2>&1
is "$?" 0 "another transport does not need it"
# The default, /usr/bin/scontrol, hidden: /usr/bin empty in a mount
# namespace of this check's own.
sunkd_config "modules:
  health:
    node_name: n1
    transport: scontrol"
out=$(unshare --mount --propagation private -- sh -c 'mount -t tmpfs tmpfs /usr/bin && exec "$0" --check-config -c "$1"' \
        "$SUNKD" "$T/sunkd.yaml" 2>&1)
is "$?" 2 "without /usr/bin/scontrol the default transport is refused"
like "$out" "sunkd.yaml:7:5: key 'transport': scontrol runs '/usr/bin/scontrol': No such file or directory: install Slurm's scontrol \(Debian: slurm-client\), name it in scontrol: path:, or choose transport: libslurm or slurmrestd" \
        "at the transport key, saying what to do"
# A module whose library is missing (libslurm, which health links for the
# libslurm transport and its Slurm types): refused at the module's line.
mkdir -m 755 "$T/nolib" && sed 's/libslurm\.so\./libslurx.so./' "$MODDIR/health.so" > "$T/nolib/health.so" ||
        bail_out "cannot make a health.so whose libslurm is missing"
sunkd_config "modules:
  health:
    node_name: n1
    transport: libslurm"
sed -i "s|^module_dir: .*|module_dir: $T/nolib|" "$T/sunkd.yaml"
grep -q "^module_dir: $T/nolib$" "$T/sunkd.yaml" || bail_out "sunkd_config wrote no module_dir to replace"
out=$("$SUNKD" --check-config -c "$T/sunkd.yaml" 2>&1)
is "$?" 2 "a health module whose libslurm is missing is refused"
like "$out" "sunkd.yaml:[0-9]+:3: module 'health': cannot load module '$T/nolib/health.so': libslurx\.so\.[0-9]+: cannot open shared object file" \
        "at the module's line, naming the library"

# --- a script: root's alone through every link, or refused at its key
S="$T/scripts"
mkdir -m 755 "$S" "$T/theirs"
printf '#!/bin/sh\nexit 0\n' > "$S/ok.sh"
chmod 755 "$S/ok.sh"
cp -p "$S/ok.sh" "$S/other.sh" && chown 65534 "$S/other.sh"
cp -p "$S/ok.sh" "$S/gw.sh" && chmod 775 "$S/gw.sh"
cp -p "$S/ok.sh" "$S/noexec.sh" && chmod 644 "$S/noexec.sh"
cp -p "$S/ok.sh" "$T/theirs/x.sh" && chown 65534 "$T/theirs"
ln -s "$S/other.sh" "$S/link.sh"
script() { printf '    checks:\n      - {name: s, type: script, path: %s}' "$1"; }
refused "another uid's script" "key 'path': refusing health script '$S/other.sh': owned by uid 65534" "$(script "$S/other.sh")"
refused "a group-writable script" "key 'path': refusing health script '$S/gw.sh': group- or world-writable" "$(script "$S/gw.sh")"
refused "a script in another uid's directory" "key 'path': refusing health script '$T/theirs/x.sh': '$T/theirs' is owned by uid 65534" "$(script "$T/theirs/x.sh")"
refused "a symlink to another uid's script" "key 'path': refusing health script '$S/link.sh': '$S/other.sh' is owned by uid 65534" "$(script "$S/link.sh")"
refused "a missing script" "key 'path': $S/missing.sh: No such file or directory" "$(script "$S/missing.sh")"
refused "a script that is not executable" "key 'path': refusing health script '$S/noexec.sh': not executable" "$(script "$S/noexec.sh")"
refused "a directory" "key 'path': refusing health script '$S': not a regular file" "$(script "$S")"
sunkd_config "modules:
  health:
    node_name: n1
    transport: none
$(script "$S/ok.sh")"
"$SUNKD" --check-config -c "$T/sunkd.yaml" > "$T/ok.out" 2>&1
is "$?" 0 "root's own script passes"
ok "nothing was written to the state directory" test -z "$(ls -A "$T/state")"
# Every error of the section in one round: the keys', the values between
# keys, and each check's, past the first.
sunkd_config "modules:
  health:
    node_name: \"n1 n2\"
    reason_prefix: x
    interval: often
    transport: carrier-pigeon
    checks:
      - {name: a, type: disk}
      - {name: b, type: memory, min_total: 1M, action: panic}
      - {name: c, type: memory, min_total: 1M}
      - {name: c, type: memory, min_total: 1M}"
out=$("$SUNKD" --check-config -c "$T/sunkd.yaml" 2>&1)
is "$?" 2 "one round: refused"
like "$out" "key 'interval': 'often' is not a duration" "one round: the key's type"
like "$out" "key 'reason_prefix': 2 to 32 characters" "one round: the prefix after it"
like "$out" "key 'node_name': 'n1 n2' is not a Slurm node name" "one round: the node name"
like "$out" "key 'transport': 'carrier-pigeon' is not" "one round: the transport"
like "$out" "key 'type': no check type 'disk'" "one round: the first check"
like "$out" "key 'action': 'panic' is not drain or report" "one round: the next check"
like "$out" "key 'name': a second check named 'c'" "one round: the check after that"

done_testing
