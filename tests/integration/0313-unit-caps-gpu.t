#!/bin/bash
# deadline: 300
# On a machine with an NVIDIA GPU and its driver: sunkd confined as the
# service unit confines it (its CapabilityBoundingSet, no ambient or
# inheritable capabilities, NoNewPrivileges, run through setpriv since
# systemd need not be PID 1 here) still finds every GPU nvidia-smi lists,
# through the real NVML, and the health module's gpu check passes.  The
# unit's DevicePolicy is the cgroup's business (0312 holds the unit to it).
# Elsewhere the test reports itself skipped, saying why.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"

. "$SUNKD_SRCDIR/tests/lib/gpu.sh"
gpu_or_skip "the confined-unit check"

gpu_setup gres health
UNIT="$SUNKD_BUILDDIR/systemd/sunkd.service"
[ -f "$UNIT" ] || bail_out "the unit is not built ($UNIT)"
command -v setpriv >/dev/null || bail_out "setpriv is needed (util-linux)"
CAPS=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT")
[ -n "$CAPS" ] || bail_out "the unit has no CapabilityBoundingSet"
grep -qx 'NoNewPrivileges=yes' "$UNIT" || bail_out "the unit does not set NoNewPrivileges"
SETPRIV_CAPS=-all$(for c in $CAPS; do printf ',+%s' "$(tr 'A-Z' 'a-z' <<< "${c#CAP_}")"; done)

# sunkd_start runs $SUNKD: here a wrapper that confines it, then execs it
REAL="$SUNKD"
printf '#!/bin/sh\nexec setpriv --bounding-set=%s --inh-caps=-all --ambient-caps=-all --no-new-privs %s "$@"\n' \
        "$SETPRIV_CAPS" "$REAL" > "$T/sunkd-confined"
chmod 755 "$T/sunkd-confined"
SUNKD="$T/sunkd-confined"
gpu_health_config
sunkd_start
is "$(sed -n 's/^NoNewPrivs:[[:space:]]*//p' /proc/$SUNKD_PID/status)" 1 "sunkd runs with no_new_privs"
want=$(python3 -c '
import sys
bits = {"chown": 0, "dac_override": 1, "dac_read_search": 2, "fowner": 3, "kill": 5, "setgid": 6,
        "setuid": 7, "syslog": 34}
print("%016x" % sum(1 << bits[c.lower()[4:]] for c in sys.argv[1:]))' $CAPS)
is "$(sed -n 's/^CapBnd:[[:space:]]*//p' /proc/$SUNKD_PID/status)" "$want" "and the unit's capability bounding set"
ok "the first discovery" wait_runs gres.discover 1
is "$(ctl --json gres | python3 -c 'import json,sys; d=json.load(sys.stdin); d = d.get("parameters", d); print(d["source"], len(d["gpus"]))')" \
   "nvml $(nvidia-smi -L | grep -c '^GPU ')" "every GPU nvidia-smi lists, through NVML"
ok "the gpu check runs" wait_runs health.gpu 1
is "$(ctl --json health | python3 -c 'import json,sys; print([c for c in json.load(sys.stdin)["checks"] if c["name"] == "gpu"][0]["result"])')" \
   pass "and passes"
sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd exits cleanly"
done_testing
