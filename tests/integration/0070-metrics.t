#!/bin/bash
# Metrics: valid Prometheus text exposition, also as a node_exporter textfile.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
sunkd_config "metrics_textfile: $T/sunkd.prom
modules:
  testmod:
    interval: 1h"
sunkd_start
ctl run testmod.ok >/dev/null
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
sunkd_stop
done_testing
