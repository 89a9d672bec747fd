#!/bin/bash
# SIGHUP and Agent.Reload: a bad file never replaces a good one.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
sunkd_config "modules:
  testmod:
    interval: 1h"
sunkd_start
interval() { ctl --json jobs | python3 -c 'import json,sys; print([x for x in json.load(sys.stdin)["jobs"] if x["name"]=="testmod.ok"][0]["interval_usec"])'; }
is "$(interval)" 3600000000 "initial interval"

cp "$T/sunkd.yaml" "$T/good.yaml"
sunkd_config "modules:
  testmod:
    interval: [not, a, duration]"
sunkd_hup
like "$(log_since)" "key 'interval': expected a duration" "the bad file is reported with its location"
like "$(log_since)" "keeping the running one|keeping the running configuration" "and the running config stays"
is "$(interval)" 3600000000 "interval unchanged after a bad SIGHUP"
is "$(ctl ping)" "pong" "still serving"

sunkd_config "log_level: info
bogus_top: 1
modules:
  testmod: {}"
sunkd_hup
like "$(log_since)" "key 'bogus_top': unknown key" "unknown top-level key on reload reported"

err=$(ctl reload 2>&1); rc=$?
is "$rc" 2 "sunkctl reload of a bad file exits 2, as --check-config does"
like "$err" "io.sunkd.ReloadFailed" "with ReloadFailed"
like "$err" "refused; the running one stays: $T/sunkd.yaml:5:1: key 'bogus_top': unknown key" \
        "and prints the error with its file, line and column"
sunkd_config "modules:
  testmod:
    interval: often"
err=$(ctl reload 2>&1); rc=$?
is "$rc" 2 "a section its module refuses: sunkctl reload exits 2"
like "$err" "refused; the running one stays: $T/sunkd.yaml:6:5: key 'interval': 'often' is not a duration" \
        "and prints what the module said, located"

sunkd_config "modules:
  testmod:
    interval: 10m"
sunkd_hup
is "$(interval)" 600000000 "a good SIGHUP applies the new interval"
is "$(ctl --json status | python3 -c 'import json,sys; print(json.load(sys.stdin)["reloads"])')" 1 "one successful reload counted"

sunkd_config "max_connections: 17
idle_timeout: 7s
modules:
  testmod:
    interval: 10m"
log_mark
ctl reload >/dev/null
like "$(log_since)" "max_connections: the new value takes effect at restart" "a restart-only setting says so"
like "$(log_since)" "idle_timeout: the new value takes effect at restart" "each one"
unlike "$(cat "$T/sunkd.log")" "workers: the new value" "unchanged ones are not mentioned"

sunkd_config "modules: {}"
is "$(ctl reload)" "Configuration reloaded." "removing a module by reload"
status_without "^testmod" "module stopped after it left the config"

sunkd_config "modules:
  testmod:
    interval: 5m"
ctl reload >/dev/null
like "$(ctl status)" "^testmod +running" "module added back by reload"

# A reload checks the new file as --check-config does, and the settings that
# take effect at restart (socket, workers, state_dir, module_dir, ...) keep
# the values sunkd started with until then: status shows those, and both it
# and the reload's answer name the ones the file changes.
top_config() { # TOP-LEVEL-LINES: the file with these instead of sunkd_config's module_dir
        { echo "socket: $SOCK"; echo "state_dir: $T/state"; [ -n "$1" ] && printf '%s\n' "$1"
          printf 'modules:\n  testmod:\n    interval: 5m\n'; } > "$T/sunkd.yaml"
        chmod 644 "$T/sunkd.yaml"
}
status_field() { ctl --json status | python3 -c 'import json,sys; v=json.load(sys.stdin).get(sys.argv[1]); print(" ".join(v) if isinstance(v, list) else v)' "$1"; }
is "$(status_field module_dir)" "$MODDIR" "status shows the module_dir in force"
is "$(status_field pending_restart)" "" "and nothing waiting for a restart"
top_config "module_dir: $T/nowhere"
want=$("$SUNKD" -c "$T/sunkd.yaml" --check-config 2>&1); rc=$?
is "$rc" 2 "(--check-config refuses a module_dir that does not exist)"
want=$(sed -n 's/^sunkd: error: //p' <<< "$want" | head -n 1)
like "$want" "module 'testmod': module directory '$T/nowhere': No such file or directory" "(naming it)"
err=$(ctl reload 2>&1); rc=$?
is "$rc" 2 "a reload to a module_dir that does not exist is refused (exit 2)"
like "$err" "refused; the running one stays: " "the error is printed"
is "$(grep -cF -- "$want" <<< "$err")" 1 "with the words --check-config says it in" || diag "$err"
like "$(ctl status)" "^testmod +running" "the module runs on"
# The next start would load the modules from the default directory: a
# file without module_dir is checked there, not against the one in force.
top_config ""
"$SUNKD" -c "$T/sunkd.yaml" --check-config > /dev/null 2>&1; rc=$?
is "$rc" 2 "(--check-config refuses the file without module_dir: no testmod in the default directory)"
err=$(ctl reload 2>&1); rc=$?
is "$rc" 2 "so does a reload of it"
like "$err" "module 'testmod': " "naming the module"
is "$(status_field module_dir)" "$MODDIR" "the module_dir in force is unchanged"
# Another good module directory, another socket, state_dir and workers:
# the reload applies, names them, and they wait for a restart.
mkdir "$T/mods2" && cp -p "$MODDIR"/*.so "$T/mods2/"
top_config "module_dir: $T/mods2
workers: 3
socket_mode: '0600'"
log_mark
out=$(ctl reload 2>&1); rc=$?
is "$rc" 0 "a reload to another module_dir that holds the modules applies"
is "$out" "Configuration reloaded.
Settings that take effect at restart: socket_mode, workers, module_dir." "and names the settings that wait for a restart"
is "$(ctl --json reload | python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)["pending_restart"]))')" \
        "socket_mode workers module_dir" "the answer's pending_restart lists them"
is "$(status_field module_dir)" "$MODDIR" "status shows the module_dir in force, the one sunkd started with"
is "$(status_field pending_restart)" "socket_mode workers module_dir" "and what waits for a restart"
like "$(ctl status)" "^Settings that take effect at restart: socket_mode, workers, module_dir\.$" "sunkctl status says so"
like "$(log_since)" "module_dir: the new value takes effect at restart" "the log too"
sunkd_config "modules:
  testmod:
    interval: 5m"
is "$(ctl reload)" "Configuration reloaded." "back to the values in force: nothing waits"
is "$(status_field pending_restart)" "" "and status agrees"

sunkd_stop
is "$SUNKD_EXIT" 0 "clean exit"

# A Kubernetes ConfigMap mount: sunkd.yaml -> ..data/sunkd.yaml, and an
# update swaps ..data to a new directory.  Started with a relative path, the
# reload must follow the link again, not the directory it pointed to.
K="$T/cm"
mkdir -p "$K/..v1" "$K/..v2"
sunkd_config "modules:
  testmod:
    interval: 1h"
cp "$T/sunkd.yaml" "$K/..v1/sunkd.yaml"
sed 's/interval: 1h/interval: 20m/' "$T/sunkd.yaml" > "$K/..v2/sunkd.yaml"
chmod 644 "$K"/..v*/sunkd.yaml
ln -s ..v1 "$K/..data"
ln -s ..data/sunkd.yaml "$K/sunkd.yaml"
(cd "$K" && exec "$SUNKD" -c sunkd.yaml 2> "$T/sunkd.log") &
SUNKD_PID=$!
wait_for_file "$SOCK" || bail_out "sunkd did not start from the ConfigMap-style path"
like "$(ctl status)" "^config: +$K/sunkd.yaml$" "status shows the config path made absolute, links kept"
is "$(interval)" 3600000000 "the first version is in force"
ln -sfn ..v2 "$K/..data.tmp" && mv -T "$K/..data.tmp" "$K/..data"
rm -rf "$K/..v1"
is "$(ctl reload)" "Configuration reloaded." "reload after the ConfigMap update"
is "$(interval)" 1200000000 "the updated version is in force"
sunkd_stop
is "$SUNKD_EXIT" 0 "clean exit"
done_testing
