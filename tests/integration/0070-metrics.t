#!/bin/bash
# Metrics: valid Prometheus text exposition, also as a node_exporter textfile;
# a module's metrics are its own and leave with it.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
sunkd_config "metrics_textfile: $T/sunkd.prom
modules:
  testmod:
    interval: 1h
  abi10: {}"
sunkd_start
ctl run testmod.ok >/dev/null
like "$(ctl metrics)" 'sunkd_legacy_abi10_up 1' "a 1.0 module keeps a metric name without its own in front"
like "$(cat "$T/sunkd.log")" "Module 'abi10' \(ABI 1.0\) registers metric 'legacy_abi10_up' against the rule of ABI 1.3" \
        "with a warning"
ctl run testmod.fail >/dev/null

validate() {
        python3 - "$1" 2>&1 <<'PY'
import re, sys
text = open(sys.argv[1]).read()
assert text.endswith("\n"), "no final newline"
typed, helped = {}, set()
name_re = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*")(,[a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*")*\})? (-?[0-9]+(\.[0-9]+)?(e[+-]?[0-9]+)?|NaN|[+-]Inf)$')
for line in text.splitlines():
    if line.startswith("# HELP "):
        helped.add(line.split()[2]); continue
    if line.startswith("# TYPE "):
        _, _, name, kind = line.split()
        assert kind in ("counter", "gauge"), line
        assert name in helped, "TYPE before HELP: " + line
        typed[name] = kind; continue
    m = name_re.match(line)
    assert m, "bad sample line: " + line
    assert m.group(1) in typed, "sample without TYPE: " + line
print("valid", len(typed))
PY
}
ctl metrics > "$T/ctl.prom"
like "$(validate "$T/ctl.prom")" "^valid [0-9]+" "sunkctl metrics is valid exposition"
ok "textfile written" wait_for_file "$T/sunkd.prom"
like "$(validate "$T/sunkd.prom")" "^valid [0-9]+" "the textfile is valid exposition"
like "$(cat "$T/sunkd.prom")" 'sunkd_job_runs_total\{job="testmod.fail",result="failure"\} 1' "textfile counts the failure"
is "$(stat -c %a "$T/sunkd.prom")" 644 "textfile readable by node_exporter"
ls "$T"/sunkd.prom.* >/dev/null 2>&1; is "$?" 2 "no temp files left next to the textfile"
like "$(ctl metrics)" 'sunkd_build_info\{version="[0-9.]+",abi="1\.[0-9]+"\} 1' "build info"

# A module names its metrics after itself and may not take another's.
call() {
        python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" call "$@"
}
log_mark
is "$(call io.sunkd.Test.MetricAdd '{"name":"abi10_runs_total"}')" '{"parameters": {"r": -22}}' \
        "a metric named after another module is refused (EINVAL)"
like "$(log_since)" "Module 'testmod' may not register metric 'abi10_runs_total': .*'testmod_" \
        "the log names the module, the metric and the prefix"
is "$(call io.sunkd.Test.MetricAdd '{"name":"job_runs_total","labels":["job","result"]}')" '{"parameters": {"r": -22}}' \
        "so is one named like sunkd's own"
is "$(call io.sunkd.Test.MetricAdd '{"name":"testmod_runs_total"}')" '{"parameters": {"r": -17}}' \
        "its own name with other labels is EEXIST"
is "$(call io.sunkd.Test.MetricAdd '{"name":"testmod_runs_total","labels":["job"],"counter":true}')" '{"parameters": {"r": 0}}' \
        "its own name with the same labels is its family again"

# metric_remove drops one series.
like "$(ctl metrics)" 'sunkd_testmod_runs_total\{job="ok"\} [1-9]' "testmod counted its ok runs"
is "$(call io.sunkd.Test.MetricRemove '{"job":"ok"}')" '{"parameters": {"r": 0}}' "metric_remove of one series"
out=$(ctl metrics)
unlike "$out" 'sunkd_testmod_runs_total\{job="ok"\}' "the series is gone"
like "$out" 'sunkd_testmod_runs_total\{job="other"\} 1' "the family's other series stays"
is "$(call io.sunkd.Test.MetricRemove '{"job":"ok"}')" '{"parameters": {"r": -2}}' "a series that is not there: ENOENT"

# A reload that removes the module removes its metrics, also from the textfile.
for i in 1 2 3; do ctl run testmod.ok >/dev/null; done
ctl run abi10.work >/dev/null
out=$(ctl metrics)
like "$out" 'sunkd_testmod_runs_total\{job="ok"\} 3$' "the removed series counts anew: three runs"
like "$out" 'sunkd_abi10_runs_total 1' "abi10, built against the 1.0 header, has its metric"
sunkd_config "metrics_textfile: $T/sunkd.prom
modules:
  abi10: {}"
log_mark
is "$(ctl reload)" "Configuration reloaded." "reload without testmod"
ok "testmod is unloaded" wait_log "Module 'testmod' stopped and unloaded"
out=$(ctl metrics)
unlike "$out" "testmod" "none of testmod's series is left: its families, its jobs' and its module_up"
like "$out" 'sunkd_module_up\{module="abi10"\} 1' "the other module runs on"
textfile_without() {
        [ -s "$T/sunkd.prom" ] && ! grep -q "$1" "$T/sunkd.prom"
}
ok "the textfile is rewritten without testmod" wait_until 300 textfile_without testmod
like "$(validate "$T/sunkd.prom")" "^valid [0-9]+" "and still valid exposition"
# abi10's section did not change: the reload left it alone, counters and all.
ctl run abi10.work >/dev/null
like "$(ctl metrics)" 'sunkd_abi10_runs_total 2' "a module whose section is unchanged keeps its metrics"
# A changed section restarts abi10 (it has no reload hook): its families go
# with the stop and it registers them again, counting anew.
sunkd_config "metrics_textfile: $T/sunkd.prom
modules:
  abi10:
    note: changed"
is "$(ctl reload)" "Configuration reloaded." "reload with abi10's section changed"
ctl run abi10.work >/dev/null
like "$(ctl metrics)" 'sunkd_abi10_runs_total 1' "a restarted module registers its metrics again"

# Back again: a module of the same name registers its families afresh.
sunkd_config "metrics_textfile: $T/sunkd.prom
modules:
  testmod:
    interval: 1h
  abi10: {}"
is "$(ctl reload)" "Configuration reloaded." "reload with testmod again"
like "$(ctl status)" "^testmod +running" "testmod is running again"
ctl run testmod.ok >/dev/null
like "$(ctl metrics)" 'sunkd_testmod_runs_total\{job="ok"\} [12]$' "its counter started again from 0"
sunkd_stop
is "$SUNKD_EXIT" 0 "clean exit"
done_testing
