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
