#!/bin/bash
# deadline: 300
# debounce: a code known to be a false positive at boot counts only after
# that many observations in a row since the start; a check that passed once
# counts its next failure at once; a code not named is never held back; a
# bad count is refused at its line.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/health/.libs/health.so" "$MODDIR/" || bail_out "health.so not built"
printf '#!/bin/sh\n[ -e "%s/fault" ] && { echo "link down"; exit 1; }\nexit 0\n' "$T" > "$T/flag.sh"
chmod 755 "$T/flag.sh"
mkdir -p "$T/root/proc/self"
printf '1 0 8:1 / / rw - ext4 /dev/sda1 rw\n' > "$T/root/proc/self/mountinfo"
touch "$T/fault"
sunkd_config "modules:
  health:
    node_name: n1
    transport: none
    interval: 1h
    fail_after: 1
    root: $T/root
    debounce:
      script-failed: 3
    checks:
      - name: link
        type: script
        path: $T/flag.sh
      - name: scratch
        type: mount
        path: /scratch"
sunkd_start
LOG_MARKED="$T/sunkd.log"
ok "the checks ran at the start" wait_until 300 eval '[ "$(job_field health.link runs)" -ge 1 ] 2>/dev/null && [ "$(job_field health.scratch runs)" -ge 1 ] 2>/dev/null'
is "$(health_field link result)" fail "the first observation is a failure"
is "$(health_field link failing)" false "but it does not count yet (1 of 3)"
ok "the log says so" wait_until 300 grep -q "Check 'link': script-failed not counted yet: 1 of 3 in a row since the start" "$T/sunkd.log"
is "$(health_field scratch failing)" true "a code not named counts at once (fail_after 1)"
ctl run health.link > /dev/null
is "$(health_field link failing)" false "2 of 3: still not"
ctl run health.link > /dev/null
is "$(health_field link failing)" true "the third in a row counts"
rm "$T/fault"
ctl run health.link > /dev/null
is "$(health_field link failing)" false "it passes"
touch "$T/fault"
ctl run health.link > /dev/null
is "$(health_field link failing)" true "after the start-up a failure counts at once"
sunkd_stop

sunkd_config "modules:
  health:
    node_name: n1
    transport: none
    debounce:
      script-failed: 0"
out=$("$SUNKD" --check-config -c "$T/sunkd.yaml" 2>&1)
is "$?" 2 "a count of 0 is refused"
like "$out" "sunkd.yaml:[0-9]+:[0-9]+: key 'debounce': script-failed: a count from 1 to 100" "at its line"
done_testing
