#!/bin/bash
# ABI 1.2 in the running daemon, through testmod: a file watch on a
# Kubernetes-style Secret volume, a secret config value read from that
# volume, and facts published, read and subscribed to over the socket.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup

call() { python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" call "$@"; }
# Prints parameters[KEY] of the JSON reply on stdin, as JSON.
param() { python3 -c "import json,sys; print(json.dumps(json.load(sys.stdin)['parameters'].get('$1')))"; }

# Waits (up to 30s) until Watched reports at least $1 callbacks.
wait_changes() {
        local i=0 n
        while [ $i -lt 300 ]; do
                n=$(call io.sunkd.Test.Watched | param changes)
                [ "$n" -ge "$1" ] 2>/dev/null && return 0
                sleep 0.1
                i=$((i + 1))
        done
        return 1
}

# What the kubelet does: files live in a timestamped directory, `..data`
# points at it, each key is a link through `..data`; an update renames a
# new link over `..data`, then removes the old directory.
VOL="$T/vol"
mkdir -p "$VOL/..2026_11_23_10_00_00.1"
printf 'hunter2-s3cret\n' > "$VOL/..2026_11_23_10_00_00.1/token"
chmod 600 "$VOL/..2026_11_23_10_00_00.1/token"
ln -s ..2026_11_23_10_00_00.1 "$VOL/..data"
ln -s ..data/token "$VOL/token"

sunkd_config "modules:
  testmod:
    watch_path: $VOL/token
    secret: file:$VOL/token"
"$SUNKD" -c "$T/sunkd.yaml" --check-config > "$T/check.log" 2>&1
is "$?" 0 "a secret read through the volume's symlinks passes --check-config"

sunkd_start
is "$(call io.sunkd.Test.Watched | param secret_length)" 14 "the secret is read, its trailing newline dropped"
is "$(call io.sunkd.Test.Watched | param changes)" 0 "no change yet"

mkdir "$VOL/..2026_11_23_10_05_00.2"
printf 'rotated\n' > "$VOL/..2026_11_23_10_05_00.2/token"
ln -s ..2026_11_23_10_05_00.2 "$VOL/..data_tmp"
mv -T "$VOL/..data_tmp" "$VOL/..data"
rm -rf "$VOL/..2026_11_23_10_00_00.1"
ok "the ..data swap is seen" wait_changes 1
# Let the swap's burst settle: a write to an unrelated file in the volume is
# not a change of ours, so once the count is stable across it, it is final.
n=$(call io.sunkd.Test.Watched | param changes)
chmod 400 "$VOL/..2026_11_23_10_05_00.2/token"
ok "the new directory is followed" wait_changes $((n + 1))

# Facts.
is "$(call io.sunkd.Test.Publish '{"name":"testmod.echo","value":{"gpus":8}}' | param r)" 0 "publish under its own name"
is "$(call io.sunkd.Test.Fact '{"name":"testmod.echo"}' | param value)" '{"gpus": 8}' "fact_get returns it"
i=0
while [ "$(call io.sunkd.Test.Fact | param seen)" -lt 1 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
is "$(call io.sunkd.Test.Fact | param last)" '{"gpus": 8}' "the subscriber was told"
is "$(call io.sunkd.Test.Publish '{"name":"gres.gpus","value":1}' | param r)" -1 "another module's name is refused (EPERM)"
is "$(call io.sunkd.Test.Publish '{"name":"testmod..x","value":1}' | param r)" -22 "a malformed name is refused (EINVAL)"
is "$(call io.sunkd.Test.Fact '{"name":"gres.gpus"}' | param value)" null "nothing was stored"
is "$(call io.sunkd.Test.Publish '{"name":"testmod.echo"}' | param r)" 0 "withdraw"
i=0
while [ "$(call io.sunkd.Test.Fact | param seen)" -lt 2 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
is "$(call io.sunkd.Test.Fact | param last)" null "the subscriber is told with null"

sunkd_stop
is "$SUNKD_EXIT" 0 "clean exit with a watch and a subscription"
unlike "$(cat "$T/sunkd.log")" "hunter2|rotated" "the secret never reaches the log"

# A secret file others may read is refused, by key and file, without its value.
chmod 640 "$VOL/..2026_11_23_10_05_00.2/token"
out=$("$SUNKD" -c "$T/sunkd.yaml" --check-config 2>&1); rc=$?
is "$rc" 2 "a group-readable secret file is a config error"
like "$out" "key 'secret': file '$VOL/token': refused: must be a regular file owned by root" "naming key and file"
unlike "$out" "rotated" "without the secret"

done_testing
