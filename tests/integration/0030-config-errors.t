#!/bin/bash
# Bad configuration files: exit 2 with file:line:column and the key.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup

check() { # check DESC REGEX CONFIG
        sunkd_config "$3"
        out=$("$SUNKD" -c "$T/sunkd.yaml" --check-config 2>&1); rc=$?
        is "$rc" 2 "$1: --check-config exits 2"
        like "$out" "$2" "$1: message"
        timeout 10 "$SUNKD" -c "$T/sunkd.yaml" > /dev/null 2>&1; rc=$?
        is "$rc" 2 "$1: sunkd refuses to start with 2"
}

C="$T/sunkd.yaml"
check "unknown key" "$C:4:1: key 'colour': unknown key" "colour: blue"
check "tab indentation" "$C:5:[0-9]+: .*tab" "modules:
	testmod: {}"
check "wrong type" "$C:4:1: key 'max_connections': 'many' is not an integer" "max_connections: many"
check "negative duration" "$C:4:1: key 'idle_timeout': '-1s' is negative" "idle_timeout: -1s"
check "bad duration" "$C:4:1: key 'shutdown_timeout': '10 parsecs' is not a duration" "shutdown_timeout: 10 parsecs"
# A FIFO in place of the file: refused at once, never waited on.
rm -f "$T/fifo.yaml"; mkfifo -m 600 "$T/fifo.yaml"
out=$(timeout 20 "$SUNKD" -c "$T/fifo.yaml" --check-config 2>&1); rc=$?
is "$rc" 2 "a FIFO as the config file: --check-config exits 2 at once"
like "$out" "fifo.yaml.*Invalid argument" "naming the file"
rm -f "$T/fifo.yaml"
check "missing module" "cannot load module '$MODDIR/nosuch.so'" "modules:
  nosuch: {}"
check "a misspelt module is located, with the modules there are" \
        "$C:5:3: module 'testmd': cannot load module '$MODDIR/testmd.so': No such file or directory; the modules in $MODDIR are: abi10, abi12, badabi, noreload, notmodule, testmod" "modules:
  testmd: {}"
check "module key" "$C:6:5: key 'bogus': unknown key" "modules:
  testmod:
    bogus: 1"
check "module value" "$C:6:5: key 'interval': 'often' is not a duration" "modules:
  testmod:
    interval: often"
check "duplicate key" "$C:5:1: key 'log_level': duplicate key" "log_level: info
log_level: debug"
check "bad log level" "key 'log_level': 'chatty' is not one of" "log_level: chatty"
check "unknown socket group" "$C:4:1: key 'socket_group': no such group 'sunkd-nosuch-group'" \
        "socket_group: sunkd-nosuch-group"
check "a module key at the top level" "$C:4:1: key 'enabled': unknown key" "enabled: banana"
check "module host keys are still checked" "$C:6:5: key 'required': 'maybe' is not a boolean" "modules:
  testmod:
    required: maybe"
check "bad socket mode" "$C:4:1: key 'socket_mode': '0999' is not an octal mode" "socket_mode: \"0999\""

# A misspelt key is answered with the known one it is a slip for.
check "a misspelt key" "$C:4:1: key 'socket_grop': unknown key; did you mean 'socket_group'\?" "socket_grop: x"
check "a misspelt module key" "$C:6:5: key 'intervall': unknown key; did you mean 'interval'\?" "modules:
  testmod:
    intervall: 5s"
check "a misspelt host key of a module" "$C:6:5: key 'requird': unknown key; did you mean 'required'\?" "modules:
  testmod:
    requird: true"
sunkd_config "colour: blue"
unlike "$("$SUNKD" -c "$C" --check-config 2>&1)" "did you mean" "a key near none is not given a suggestion"

# Every error of the file in one round, each located, the top level's and
# the module sections' alike; still exit 2.
sunkd_config "colour: blue
max_connections: many
log_level: chatty
modules:
  testmod:
    bogus: 1
    interval: often
    allow: [sunkd-nosuch-user, \"@sunkd-nosuch-group\"]
  nosuch: {}
  other: 5"
out=$("$SUNKD" -c "$C" --check-config 2>&1); rc=$?
is "$rc" 2 "one round: --check-config exits 2"
like "$out" "$C:4:1: key 'colour': unknown key" "one round: the unknown key"
like "$out" "$C:5:1: key 'max_connections': 'many' is not an integer" "one round: the wrong type after it"
like "$out" "$C:6:1: key 'log_level': 'chatty' is not one of" "one round: the derived value"
like "$out" "$C:9:5: key 'bogus': unknown key" "one round: the module's unknown key"
like "$out" "$C:10:5: key 'interval': 'often' is not a duration" "one round: the module's next key"
like "$out" "key 'allow': no such user 'sunkd-nosuch-user'" "one round: a user that does not exist"
like "$out" "key 'allow': no such group 'sunkd-nosuch-group'" "one round: and the group after it"
like "$out" "cannot load module '$MODDIR/nosuch.so'" "one round: the module that is not there"
like "$out" "$C:13:3: key 'other': a module section must be a mapping" "one round: a section that is no mapping"
is "$(printf '%s\n' "$out" | grep -c '^sunkd.*error: ')" "$(printf '%s\n' "$out" | wc -l)" \
        "one round: each error on its own line, with its prefix"

sunkd_config "modules: {}"
chmod 666 "$C"
out=$("$SUNKD" -c "$C" --check-config 2>&1); rc=$?
is "$rc" 2 "world-writable config refused"
like "$out" "refusing config file '$C': group- or world-writable \(owner uid 0, mode 0666\)" "and the reason is given"
chmod 644 "$C"

head -c 2000000 /dev/zero | tr '\0' '#' > "$C"
out=$("$SUNKD" -c "$C" --check-config 2>&1); rc=$?
is "$rc" 2 "oversized config refused"
like "$out" "file too large" "and says so"

printf 'a: \xff\xfe\n' > "$C"
"$SUNKD" -c "$C" --check-config > /dev/null 2>&1; is "$?" 2 "non-UTF-8 config refused"

done_testing
