#!/bin/bash
# The cache writer killed or failing at every step of a publish: afterwards,
# and after the journal is finished as sunkd does at start, all maps and
# indexes are from one run (byte-identical to that run's reference), and no
# temporary file stays.  Runs in a private directory: no libnss-cache needed.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
: "${SUNKD_BUILDDIR:?}"

HELPER="$SUNKD_BUILDDIR/tests/lib/nsscache-publish"
[ -x "$HELPER" ] || bail_out "$HELPER not built"
[ "$(id -u)" = 0 ] || bail_out "must run as root: the shadow cache is chowned to group shadow"
getent group shadow >/dev/null || bail_out "no group shadow"
NOBODY=$(id -u nobody) || bail_out "no user nobody"

T=$(mktemp -d /tmp/sunkd-0211.XXXXXX) || bail_out "mktemp failed"
trap 'rm -rf "$T"' EXIT
FILES="passwd.cache passwd.cache.ixname passwd.cache.ixuid shadow.cache shadow.cache.ixname
group.cache group.cache.ixname group.cache.ixgid sshkey.cache sshkey.cache.ixname"

# Reference runs: generation 1 is variant 0, generation 2 variant 1.
mkdir -p "$T/ref1" "$T/ref2"
"$HELPER" -d "$T/ref1" -g 1 0 || bail_out "reference 1"
"$HELPER" -d "$T/ref2" -g 2 1 || bail_out "reference 2"

# generation DIR: "1" or "2" if every file equals that reference, else what differs.
generation() {
        local g f bad
        for g in 1 2; do
                bad=
                for f in $FILES; do
                        cmp -s "$T/ref$g/$f" "$1/$f" || bad="$bad $f"
                done
                [ -z "$bad" ] && { echo "$g"; return; }
        done
        echo "mixed:${bad}"
}

temps() { (cd "$1" && find . -maxdepth 1 -name '.sunkd-*' -printf '%f ') }

fresh() {
        rm -rf "$T/d" "$T/s"
        mkdir -p "$T/d" "$T/s"
        chmod 700 "$T/s"
        "$HELPER" -d "$T/d" -s "$T/s" -g 1 0 || bail_out "initial publish"
}

# Kill at each occurrence of each step of the commit.
for step in stage:1 stage:4 stage:10 journal rename-data:1 unlink-index:1 unlink-index:3 rename-index:1 \
            rename-data:2 rename-index:4 rename-data:4 rename-index:6 journal-remove; do
        fresh
        out=$("$HELPER" -d "$T/d" -s "$T/s" -g 2 -K "$step" 1 2>&1); rc=$?
        is "$rc" 137 "killed at $step"
        out=$("$HELPER" -R -d "$T/d" -s "$T/s" 2>&1); rc=$?
        is "$rc" 0 "killed at $step: the journal is finished ($out)"
        gen=$(generation "$T/d")
        case $step in
        stage:*|journal) is "$gen" 1 "killed at $step: every map from the old run" ;;
        *) is "$gen" 2 "killed at $step: every map from the new run" ;;
        esac
        is "$(temps "$T/d")" "" "killed at $step: no temporary file stays"
        ok "killed at $step: no journal stays" test ! -e "$T/s/publish-journal"
done

# A step failing for good: nothing is changed, or the journal stays and
# finishes the publish next time; the error names the file.
for step in stage:1 stage:6 journal; do
        fresh
        before=$(cd "$T/d" && ls -l --time-style=+%s $FILES)
        out=$("$HELPER" -d "$T/d" -s "$T/s" -g 2 -E "$step" 1 2>&1); rc=$?
        is "$rc" 1 "$step fails: the publish fails"
        like "$out" "$T/(d|s)/[a-z.-]+: .*Input/output error" "$step fails: the error names the file"
        is "$(generation "$T/d")" 1 "$step fails: the caches are unchanged"
        is "$(cd "$T/d" && ls -l --time-style=+%s $FILES)" "$before" "$step fails: not even rewritten"
        is "$(temps "$T/d")" "" "$step fails: no temporary file stays"
done
for step in unlink-index:1 rename-data:1 rename-data:3 rename-index:1 rename-index:5 journal-remove; do
        fresh
        out=$("$HELPER" -d "$T/d" -s "$T/s" -g 2 -E "$step" 1 2>&1); rc=$?
        is "$rc" 1 "$step fails: the publish fails"
        like "$out" "$T/(d|s)/[.a-zA-Z0-9-]+: .*Input/output error" "$step fails: the error names the file"
        ok "$step fails: the journal stays" test -e "$T/s/publish-journal"
        out=$("$HELPER" -d "$T/d" -s "$T/s" -g 2 1 2>&1); rc=$?
        is "$rc" 0 "$step fails: the next publish succeeds ($out)"
        is "$(generation "$T/d")" 2 "$step fails: then every map is from the new run"
        is "$(temps "$T/d")" "" "$step fails: then no temporary file stays"
        ok "$step fails: then no journal stays" test ! -e "$T/s/publish-journal"
done
fresh
out=$("$HELPER" -d "$T/d" -s "$T/s" -t "$T/ts" -g 2 -E timestamp:3 1 2>&1); rc=$?
is "$rc" 0 "a timestamp file that cannot be written does not fail the publish"
like "$out" "timestamp files not written: Input/output error" "but is reported"
is "$(generation "$T/d")" 2 "the maps are published"

# libnss-cache trusts an index only if the data is not newer, in whole
# seconds: each new data file must be newer than the index it replaces even
# when republished within the same second, and no newer than its own indexes.
fresh
for g in 2 1 2; do
        m_old=$(stat -c %Y "$T/d/passwd.cache.ixname" "$T/d/group.cache.ixname" | sort -n | tail -1)
        "$HELPER" -d "$T/d" -s "$T/s" -g "$g" "$((g - 1))" || bail_out "republish"
        ok "republished generation $g: data newer than the old indexes" \
           test "$(stat -c %Y "$T/d/passwd.cache")" -gt "$m_old" -a "$(stat -c %Y "$T/d/group.cache")" -gt "$m_old"
        is "$(cd "$T/d" && stat -c %Y $FILES | sort -u | wc -l)" 1 "republished generation $g: indexes as new as their data"
done

# Stale temporaries: ours (root's, our names) go before the next publish;
# anything else stays.
fresh
for f in .sunkd-passwd.cache.AbC123 .sunkd-group.cache.ixgid.xyz789 .sunkd-other.ab12cd \
         .sunkd-passwd.cache.ab12cd.x passwd.cache.AbC123 .sunkd-nobody.cache.zzzzzz; do
        echo junk > "$T/d/$f"
done
cp "$T/d/.sunkd-passwd.cache.AbC123" "$T/d/.sunkd-shadow.cache.n0b0dy"
chown "$NOBODY" "$T/d/.sunkd-shadow.cache.n0b0dy"
mkdir "$T/d/.sunkd-group.cache.d1rd1r"
ln -s "$T/ref1/passwd.cache" "$T/d/.sunkd-sshkey.cache.l1nk00"
"$HELPER" -d "$T/d" -s "$T/s" -g 2 1 || bail_out "publish"
is "$(temps "$T/d" | tr ' ' '\n' | sort | xargs)" \
   ".sunkd-group.cache.d1rd1r .sunkd-nobody.cache.zzzzzz .sunkd-other.ab12cd .sunkd-passwd.cache.ab12cd.x .sunkd-shadow.cache.n0b0dy .sunkd-sshkey.cache.l1nk00" \
   "only our own stale temporaries owned by root are removed"
ok "a name without our prefix stays" test -e "$T/d/passwd.cache.AbC123"
ok "the target of a link is untouched" cmp -s "$T/ref1/passwd.cache" "$T/d/.sunkd-sshkey.cache.l1nk00"

# A malformed journal is discarded, not applied.
fresh
printf 'sunkd-publish-journal 1\ndir %s\ndata ../../etc/passwd\nend\n' "$T/d" > "$T/s/publish-journal"
out=$("$HELPER" -R -d "$T/d" -s "$T/s" 2>&1); rc=$?
is "$rc" 1 "a malformed journal is reported"
like "$out" "$T/s/publish-journal: malformed journal, discarded" "and named"
ok "and removed" test ! -e "$T/s/publish-journal"
is "$(generation "$T/d")" 1 "and nothing was renamed"
for j in "" "sunkd-publish-journal 1" "sunkd-publish-journal 2\ndir $T/d\ndata .sunkd-passwd.cache.abcdef\nend" \
         "sunkd-publish-journal 1\ndir relative\ndata .sunkd-passwd.cache.abcdef\nend" \
         "sunkd-publish-journal 1\ndir $T/d\nindex .sunkd-passwd.cache.ixname.abcdef\nend" \
         "sunkd-publish-journal 1\ndir $T/d\ndata .sunkd-passwd.cache.abcdef" \
         "sunkd-publish-journal 1\ndir $T/d\ndata passwd.cache\nend" \
         "sunkd-publish-journal 1\ndir $T/d\ndata .sunkd-passwd.cache.abcdef\nend\ndata .sunkd-group.cache.abcdef"; do
        printf "$j" > "$T/s/publish-journal"
        out=$("$HELPER" -R -d "$T/d" -s "$T/s" 2>&1); rc=$?
        is "$rc" 1 "malformed journal refused: $(printf "$j" | tr '\n' '|' | cut -c1-60)"
done
head -c 100000 /dev/zero | tr '\0' 'a' > "$T/s/publish-journal"
out=$("$HELPER" -R -d "$T/d" -s "$T/s" 2>&1); rc=$?
is "$rc" 1 "an oversized journal is refused"
{ echo "sunkd-publish-journal 1"; echo "dir $T/d"; for i in $(seq 20); do echo "data .sunkd-passwd.cache.a$(printf %05d $i)"; done; echo end; } > "$T/s/publish-journal"
out=$("$HELPER" -R -d "$T/d" -s "$T/s" 2>&1); rc=$?
is "$rc" 1 "a journal with too many entries is refused"
is "$(generation "$T/d")" 1 "no malformed journal changed anything"

# Durable before visible: every map and index is fsync'ed before the rename
# that puts it in place (a crash between them never leaves a short or empty
# map), and the directory after the renames.
command -v strace > /dev/null || bail_out "strace is needed to watch the publish's fsync and rename calls: make deps"
mkdir -p "$T/traced" "$T/st"
"$HELPER" -d "$T/traced" -g 1 0 || bail_out "the traced directory's first publish"
# (LeakSanitizer stops the world with ptrace, which strace holds already:
# an ASan build's helper runs without it here)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
        strace -f -y -qq -e trace=fsync,fdatasync,rename,renameat,renameat2 -o "$T/trace" \
        "$HELPER" -d "$T/traced" -s "$T/st" -g 2 1 || bail_out "the traced publish failed"
is "$(generation "$T/traced")" 2 "the traced publish put generation 2 in place"
order=$(python3 - "$T/trace" "$T/traced" $FILES <<'PY'
import os, re, sys
trace, d, files = sys.argv[1], sys.argv[2], set(sys.argv[3:])
synced, renamed, late = set(), [], []
dir_synced = False
for line in open(trace):
    m = re.search(r"\b(?:fsync|fdatasync)\(\d+<([^>]*)>\) = 0", line)
    if m:
        synced.add(m.group(1))
        dir_synced = dir_synced or (m.group(1) == d and bool(renamed))
        continue
    m = re.search(r'\brename(?:at2?)?\((?:AT_FDCWD, )?"([^"]+)", (?:AT_FDCWD, )?"([^"]+)"', line)
    if m and os.path.dirname(m.group(2)) == d and os.path.basename(m.group(2)) in files:
        renamed.append(os.path.basename(m.group(2)))
        if m.group(1) not in synced:
            late.append(os.path.basename(m.group(2)))
print("renamed %d, unsynced: %s, directory synced after: %s" % (len(renamed), " ".join(late) or "none", dir_synced))
PY
)
is "$order" "renamed $(echo $FILES | wc -w), unsynced: none, directory synced after: True" \
        "each of the files was fsync'ed before its rename, the directory after them"

done_testing
