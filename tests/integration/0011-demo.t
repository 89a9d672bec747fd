#!/bin/bash
# deadline: 400
# make demo as someone runs it: on a terminal (a pseudo-terminal here), until
# Ctrl-C.  Nothing fails in it but what it shows failing on purpose, and
# Ctrl-C ends it, the make that ran it included, with exit status 0.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup

# run-on-pty OUT: make demo on a pseudo-terminal; the ^C byte once it says
# it keeps running; its output in OUT, its exit status printed.
OUT="$T/demo.out"
rc=$(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u DEMO_SECONDS python3 - "$SUNKD_BUILDDIR" "$OUT" <<'EOF'
import os, pty, select, sys, time

build, out = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    os.execvp("make", ["make", "-s", "-C", build, "demo"])
buf, sent, deadline = b"", False, time.monotonic() + 300
while time.monotonic() < deadline:
    r, _, _ = select.select([fd], [], [], 1)
    if r:
        try:
            d = os.read(fd, 65536)
        except OSError:  # EIO: every process on the terminal has closed it
            break
        if not d:
            break
        buf += d
    if not sent and b"Ctrl-C stops it" in buf:
        os.write(fd, b"\x03")
        sent = True
open(out, "wb").write(buf)
if not sent:
    os.kill(pid, 9)
_, st = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(st) if sent else "no prompt for Ctrl-C")
EOF
)
is "$rc" 0 "make demo ends with exit status 0 at Ctrl-C"
[ "$rc" = 0 ] || tail -n 20 "$OUT" | sed 's/^/# /'
out=$(tr -d '\r' < "$OUT")
like "$out" "sunkctl prolog" "the demo ran to its last step"

# What the demo shows failing on purpose: the SCIM user with uid 0, a key
# that is not base64, the health check it breaks, the prolog script it
# makes fail.  Every other warning or failed job is a fault.
meant="Rejected passwd entry 'mallory'|user 'grace': key 1 dropped: bad-base64|Check 'node-ok'|Job 'health\.node-ok' failed|prolog script '20-scratch' of job 102|prolog of job 102 failed|warning: scratch is full"
is "$(grep -E "warning:|error:|Job '[^']*' failed" <<< "$out" | grep -vE "$meant")" "" \
        "no warning, error or failed job but those it shows on purpose"
unlike "$out" "Not reading XID errors" "gres reads the fake node's kernel log"
like "$(grep -E '^gres\.kmsg ' <<< "$out" | head -n 1)" " [0-9]+/0$" "the gres.kmsg job has not failed"
ok "the demo removed its temp directories" test -z "$(grep -oE '/tmp/sunkd-demo\.[A-Za-z0-9]+' <<< "$out" | sort -u | xargs -r ls -d 2>/dev/null)"

done_testing
