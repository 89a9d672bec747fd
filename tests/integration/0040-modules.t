#!/bin/bash
# The loader: ABI refusals, init failures isolated, required modules.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup

sunkd_config "modules:
  badabi: {}"
out=$("$SUNKD" -c "$T/sunkd.yaml" --check-config 2>&1); rc=$?
is "$rc" 2 "module with another ABI major refused by --check-config"
like "$out" "module '$MODDIR/badabi.so' was built for ABI 2\.0, this sunkd speaks ABI 1\.[0-9]+" "message names file and both versions"

sunkd_config "modules:
  notmodule: {}"
out=$("$SUNKD" -c "$T/sunkd.yaml" --check-config 2>&1); rc=$?
is "$rc" 2 "shared object without the module symbol refused"
like "$out" "'$MODDIR/notmodule.so' is not a sunkd module .*sunkd_module_v1" "message names the symbol"

echo "garbage" > "$MODDIR/junk.so"
sunkd_config "modules:
  junk: {}"
out=$("$SUNKD" -c "$T/sunkd.yaml" --check-config 2>&1); rc=$?
is "$rc" 2 "a file that is not a shared object is refused"
like "$out" "cannot load module '$MODDIR/junk.so': .*(invalid ELF|too short)" "with dlerror()"

chmod 777 "$MODDIR"
sunkd_config "modules:
  testmod: {}"
out=$("$SUNKD" -c "$T/sunkd.yaml" --check-config 2>&1); rc=$?
is "$rc" 2 "world-writable module directory refused"
like "$out" "refusing module directory '$MODDIR': group- or world-writable" "and named"
chmod 755 "$MODDIR"

# A module that cannot be loaded is a configuration error at start too.
sunkd_config "modules:
  badabi: {}"
timeout 10 "$SUNKD" -c "$T/sunkd.yaml" 2> "$T/badabi.log"; rc=$?
is "$rc" 2 "sunkd refuses to start with a module it cannot load"
like "$(cat "$T/badabi.log")" "built for ABI 2\.0" "and says why"

# An init failure at run time: the module is shown failed, the daemon runs.
sunkd_config "modules:
  testmod:
    init_fail: true"
sunkd_start
is "$(ctl ping)" "pong" "sunkd runs although a module failed"
out=$(ctl status)
like "$out" "^testmod +failed .*init failed" "a module whose init failed is shown failed"
is "$(ctl --json jobs | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["jobs"]))')" 0 "failed init left no jobs"
out=$(ctl metrics)
like "$out" 'sunkd_module_up\{module="testmod"\} 0' "module_up is 0"
sunkd_stop
is "$SUNKD_EXIT" 0 "clean exit"

sunkd_config "modules:
  testmod:
    init_fail: true
    required: true"
"$SUNKD" -c "$T/sunkd.yaml" 2> "$T/req.log"; rc=$?
is "$rc" 1 "a required module that fails init makes sunkd exit 1"
like "$(cat "$T/req.log")" "Required module 'testmod' failed" "and says which"

sunkd_config "modules:
  testmod:
    enabled: false"
sunkd_start
status_without "^testmod" "enabled: false skips the module"
sunkd_stop

done_testing
