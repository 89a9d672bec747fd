#!/bin/bash
# The README and the modules' README.md keep working as written.  Every
# fenced block is checked by what it is: sunkd.yaml with --check-config (as
# it is and with each "#key: value" line uncommented), sshd_config with
# sshd -t and the sunkd-authkeys it names, nsswitch.conf against the NSS
# modules installed, slurm.conf with slurmd -G and against a gres module on
# the fake NVML, sh line by line; a block of a kind nothing checks fails.
# Every command of a block or a code span that starts with sunkd, sunkctl,
# sunkd-authkeys or make names options, commands, methods, jobs and targets
# that exist; every path under /usr (and sunkd.yaml.example) it names is one
# `make install` installs; apt-get's packages cover what the installed
# programs link; links and manual pages lead somewhere.  Only module_dir, the
# nsscache.conf path, the token file, the prolog and epilog directories and
# the socket's group are changed in a sunkd.yaml, as 0003-etc-examples.t does.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
. "$SUNKD_SRCDIR/tests/lib/docs.sh"
for c in sshd slurmd scontrol getent readelf dpkg ssh-keygen systemctl; do
        command -v "$c" >/dev/null || PATH="$PATH:/usr/sbin" command -v "$c" >/dev/null ||
                bail_out "$c is needed (make deps)"
done
PATH="$PATH:/usr/sbin"
cp "$SUNKD_BUILDDIR/modules/nsscache/.libs/nsscache.so" "$SUNKD_BUILDDIR/modules/authkeys/.libs/authkeys.so" \
   "$SUNKD_BUILDDIR/modules/gres/.libs/gres.so" "$SUNKD_BUILDDIR/modules/prolog/.libs/prolog.so" \
   "$SUNKD_BUILDDIR/modules/health/.libs/health.so" \
   "$MODDIR/" || bail_out "modules not built"
NVML="$SUNKD_BUILDDIR/tests/fake-nvml/.libs/libnvidia-ml.so"
[ -f "$NVML" ] || bail_out "the fake NVML is not built"
SNIPPETS="$SUNKD_SRCDIR/tests/lib/md-snippets.py"

# What make install installs, where the README says it goes.
D="$T/root"
make -s -C "$SUNKD_BUILDDIR" install DESTDIR="$D" > "$T/install.log" 2>&1 ||
        { sed 's/^/# /' "$T/install.log"; bail_out "make install failed"; }
# The README's paths are the top-level Makefile's configuration (--prefix=/usr
# --sysconfdir=/etc); make distcheck configures a prefix of its own.  inst
# PATH: where this build installs the README's PATH (itself under /usr and /etc).
mkvar() {
        local v
        v=$(sed -n "s/^$1 = //p" "$SUNKD_BUILDDIR/Makefile")
        while [[ $v == *'${'* ]]; do v=$(prefix=$PREFIX eval echo "$v"); done
        echo "$v"
}
PREFIX=$(mkvar prefix)
SYSCONFDIR=$(mkvar sysconfdir)
[ -n "$PREFIX" ] && [ -n "$SYSCONFDIR" ] || bail_out "cannot read prefix and sysconfdir from $SUNKD_BUILDDIR/Makefile"
inst() {
        case "$1" in
        /usr/*) echo "$D$PREFIX${1#/usr}" ;;
        /etc/*) echo "$D$SYSCONFDIR${1#/etc}" ;;
        *) echo "$D$1" ;;
        esac
}

# The example nsscache.conf with a SCIM server in place of its placeholder,
# and a token file, for the sunkd.yaml blocks that name them.
sed -e 's|^scim_base_url=.*|scim_base_url=http://127.0.0.1:9/api/organizations/example/scim/v2|' \
        "$SUNKD_SRCDIR/etc/nsscache.conf.example" > "$T/nsscache.conf"
install -d -m 0755 "$T/prolog.d" "$T/epilog.d"
printf 'readme-token\n' > "$T/token"
chmod 644 "$T/nsscache.conf"
chmod 600 "$T/token"
# A signing key, its public half and an export directory, for the fleet's blocks.
(umask 077 && openssl genpkey -algorithm ed25519 -out "$T/maps.key" 2>/dev/null) || bail_out "openssl genpkey failed"
MAPS_PUB=$(openssl pkey -in "$T/maps.key" -pubout | sed -n 2p)
mkdir -p "$T/export"

# adapt FILE OUT: this build's modules, the nsscache.conf above, the token
# file, a group this machine has, the signing key and export directory above.
# root's group by its gid: a test that runs alongside may publish a user named
# "0" through libnss-cache, which `id -gn 0` would take for a name.
adapt() {
        { grep -qE '^#?module_dir:' "$1" || echo "module_dir: $MODDIR"
          sed -E -e "s|^#?module_dir: .*|module_dir: $MODDIR|" \
                -e "s|^socket_group: .*|socket_group: $(getent group 0 | cut -d: -f1)|" \
                -e "s|^( *)nsscache_conf: .*|\1nsscache_conf: $T/nsscache.conf|" \
                -e "s|^( *)#?prolog_dir: .*|\1prolog_dir: $T/prolog.d|" \
                -e "s|^( *)#?epilog_dir: .*|\1epilog_dir: $T/epilog.d|" \
                -e "s|^( *)token_file: .*|\1token_file: $T/token|" \
                -e "s|^( *)export_dir: .*|\1export_dir: $T/export|" \
                -e "s|^( *)export_signing_key: .*|\1export_signing_key: $T/maps.key|" \
                -e "s|^( *)manifest_public_key: .*|\1manifest_public_key: $MAPS_PUB|" "$1"; } > "$2"
        chmod 644 "$2"
}
uncomment() {
        sed -E 's/^( *)#( *[A-Za-z_][A-Za-z0-9_]*:( |$))/\1\2/' "$1"
}
check_config() {
        local out rc
        out=$("$SUNKD" --check-config -c "$1" 2>&1); rc=$?
        [ $rc -eq 0 ] || printf '%s\n' "$out" | sed 's/^/# /'
        return $rc
}
# allow_list YAML: the users of the authkeys section's allow: list.
allow_list() {
        awk '/^  authkeys:/ { a = 1; next } a && /^  [^ ]/ { a = 0 } a && /^ +allow:/ { print }' "$1" |
                sed -E 's/^ *allow: *\[(.*)\].*/\1/' | tr ',' ' '
}

have() { # GLOB: something matches
        compgen -G "$1" > /dev/null
}
have_user() {
        getent passwd "$1" > /dev/null
}

# The sunkd.yaml blocks: valid as they are, and with every #key line uncommented.
check_yaml() { # WHERE FILE
        adapt "$2" "$T/b.yaml"
        ok "$1: the sunkd.yaml passes --check-config" check_config "$T/b.yaml"
        if grep -qE '^ *#( *[A-Za-z_][A-Za-z0-9_]*:( |$))' "$2"; then
                uncomment "$2" > "$T/b-all.in"
                adapt "$T/b-all.in" "$T/b-all.yaml"
                ok "$1: and with its #key lines uncommented" check_config "$T/b-all.yaml"
        fi
}

# sshd_config: sshd takes it, the command is the installed sunkd-authkeys
# with its options and sshd's tokens for AuthorizedKeysCommand
# (sshd_config(5): %% %C %D %f %h %k %t %U %u), and its user may call the
# authkeys module.
check_sshd() { # WHERE FILE YAML-BLOCKS...
        local where=$1 f=$2 cmd user tok allowed=
        shift 2
        [ -f "$T/sshd_host" ] || ssh-keygen -q -t ed25519 -N '' -f "$T/sshd_host" || bail_out "ssh-keygen"
        { echo "HostKey $T/sshd_host"; cat "$f"; } > "$T/sshd_config"
        # sshd -t wants its privilege separation directory, which only a
        # started ssh.service (or tests/lib/sshd.sh) makes
        mkdir -p /run/sshd && chmod 755 /run/sshd
        out=$(sshd -t -f "$T/sshd_config" 2>&1)
        is "$?:$out" "0:" "$where: sshd -t takes the sshd_config lines"
        cmd=$(sed -n 's/^AuthorizedKeysCommand //p' "$f")
        user=$(sed -n 's/^AuthorizedKeysCommandUser //p' "$f")
        [ -n "$cmd" ] && [ -n "$user" ] || { ok "$where: AuthorizedKeysCommand and its user are given" false; return; }
        read -r -a words <<< "$cmd"
        ok "$where: ${words[0]} is installed, mode 0755" test "$(stat -c %a "$(inst "${words[0]}")" 2>/dev/null)" = 755
        for tok in $(grep -oE '%.' <<< "$cmd"); do
                ok "$where: sshd has the token $tok for AuthorizedKeysCommand" grep -qxF -- "$tok" <<< $'%%\n%C\n%D\n%f\n%h\n%k\n%t\n%U\n%u'
        done
        r=$(authkeys_check "${words[@]:1}")
        is "$?:$r" "0:" "$where: sunkd-authkeys takes ${words[*]:1}"
        ok "$where: AuthorizedKeysCommandUser $user exists" have_user "$user"
        for y in "$@"; do
                allowed="$allowed $(allow_list "$y")"
        done
        like " $allowed " " $user " "$where: $user is in the authkeys module's allow: list"
}

# nsswitch.conf: database: services, each an NSS module this machine has,
# cache after files.
check_nsswitch() { # WHERE FILE
        local where=$1 f=$2 db services s n=0
        while read -r db services; do
                case "$db" in ''|'#'*) continue ;; esac
                n=$((n + 1))
                ok "$where: '$db' names a database" grep -qxE '(passwd|group|shadow|gshadow|initgroups):' <<< "$db"
                db=${db%:}
                for s in $services; do
                        case "$s" in '['*) continue ;; esac
                        ok "$where: $db: the NSS module '$s' is installed" have "/usr/lib/*/libnss_$s.so.2"
                done
                like " $services " " files cache( |$)" "$where: $db: cache right after files"
        done < "$f"
        ok "$where: it names databases" test "$n" -gt 0
}

# slurm.conf: slurmd parses it (slurmd -G: the GRES configuration, then
# exit), framed by the two lines every slurm.conf has.
check_slurm() { # WHERE FILE
        local where=$1 f=$2 hosts out rc
        { echo "ClusterName=readme"; echo "SlurmctldHost=localhost"; cat "$f"; } > "$T/slurm.conf"
        hosts=$(sed -n -E 's/^NodeName=([^ ]+).*/\1/p' "$f" | grep -v '^DEFAULT$' | head -n 1)
        NODE=$(SLURM_CONF="$T/slurm.conf" scontrol show hostnames "$hosts" 2>/dev/null | head -n 1)
        ok "$where: it has a node line" test -n "$NODE"
        out=$(cd "$T" && timeout 60 slurmd -G -f "$T/slurm.conf" -N "${NODE:-none}" 2>&1); rc=$?
        is "$rc" 0 "$where: slurmd -G parses it"
        [ $rc -eq 0 ] || printf '%s\n' "$out" | sed 's/^/# /'
}

# The gres module, as the yaml block configures it (its gres_conf and the
# rest of the daemon in a temp directory, the other modules disabled), on
# the fake NVML's 8 H100s, agrees with the slurm.conf block check_slurm read.
check_gres_agrees() { # WHERE YAML SLURM
        local where=$1 gres out rc
        sed -E -e "s|^( *)gres_conf: .*|\1gres_conf: $T/gres.conf\n\1nvml_library: $NVML\n\1slurm_conf: $T/slurm.conf\n\1node_name: $NODE\n\1interval: 1h|" \
                -e '/^  gres:$/!s/^  [a-z_-]+:$/&\n    enabled: false/' "$2" > "$T/gres.yaml"
        like "$(cat "$T/gres.yaml")" "gres_conf: $T/gres.conf" "$where: the gres section names a gres_conf"
        sunkd_config "$(cat "$T/gres.yaml")"
        FAKE_NVML_CONFIG="$SUNKD_SRCDIR/tests/data/gres/nvml-h100-8.desc" sunkd_start
        out=$(ctl -t 120 gres --check 2>&1); rc=$?
        is "$rc" 0 "$where: sunkctl gres --check finds slurm.conf's node line matching"
        [ $rc -eq 0 ] || printf '%s\n' "$out" | sed 's/^/# /'
        gres=$(grep -oE 'Gres=[^ ]+' "$3" | head -n 1)
        is "$(ctl -t 120 gres --slurmd-conf)" "$gres" "$where: sunkctl gres --slurmd-conf prints slurm.conf's $gres"
        sunkd_stop
        is "$SUNKD_EXIT" 0 "$where: sunkd stops cleanly"
}

FILES="README.md $(cd "$SUNKD_SRCDIR" && ls modules/*/README.md)"
for file in $FILES; do
        src="$SUNKD_SRCDIR/$file"
        B="$T/blocks/$file"
        mkdir -p "$B"
        list=$(python3 "$SNIPPETS" blocks "$src" "$B") || bail_out "cannot read the blocks of $file"
        yamls=() sshd=() slurm=
        while read -r n kind line; do
                [ -n "$n" ] || continue
                case "$kind" in
                yaml) check_yaml "$file:$line" "$B/$n.$kind"; yamls+=("$B/$n.$kind") ;;
                sh) ;; # line by line, below
                sshd_config) sshd+=("$file:$line $B/$n.$kind") ;;
                nsswitch.conf) check_nsswitch "$file:$line" "$B/$n.$kind" ;;
                slurm.conf) check_slurm "$file:$line" "$B/$n.$kind"; slurm="$file:$line $B/$n.$kind" ;;
                *) ok "$file:$line: a block of kind '$kind' has a check in $(basename "$0")" false ;;
                esac
        done <<< "$list"
        for s in "${sshd[@]}"; do
                check_sshd ${s% *} ${s#* } "${yamls[@]}"
        done
        if [ -n "$slurm" ]; then
                gres_yaml=$(grep -l '^  gres:$' "${yamls[@]}" /dev/null | head -n 1)
                [ -z "$gres_yaml" ] || check_gres_agrees "${slurm% *}" "$gres_yaml" "${slurm#* }"
        fi
        [ "$file" = README.md ] && README_KINDS=$(printf '%s\n' "$list" | cut -d' ' -f2 | sort -u)
done

# Deploying on a node takes each of these; the Quick start these commands.
for k in yaml sh sshd_config nsswitch.conf slurm.conf; do
        ok "README.md has a $k block" grep -qx -- "$k" <<< "$README_KINDS"
done
README_CMDS=$(python3 "$SNIPPETS" commands "$SUNKD_SRCDIR/README.md" | cut -f3)
for c in "make deps demo" "make check" "make install" "systemctl enable --now sunkd" "sunkd --check-config" \
         "sunkctl status" "getent -s cache passwd ada"; do
        ok "README.md says: $c" grep -qx -- "$c" <<< "$README_CMDS"
done

# Commands.
make_check() {
        local w
        for w in "$@"; do
                case "$w" in -*|*=*) continue ;; esac
                grep -qE "^$w:" "$SUNKD_SRCDIR/Makefile" || { echo "the Makefile has no target '$w'"; return 1; }
        done
}
systemctl_check() {
        local verb=$1 u
        shift
        systemctl --help 2>/dev/null | grep -qE "^  $verb( |\$)" || { echo "systemctl has no verb '$verb'"; return 1; }
        for u in "$@"; do
                case "$u" in -*) continue ;; *.*) ;; *) u=$u.service ;; esac
                [ -f "$(inst "/usr/lib/systemd/system/$u")" ] || [ -f "/lib/systemd/system/$u" ] ||
                        [ -f "/usr/lib/systemd/system/$u" ] || { echo "no unit $u"; return 1; }
        done
}
apt_check() {
        local p n
        [ "$1" = install ] || { echo "apt-get $1?"; return 1; }
        shift
        for p in "$@"; do
                case "$p" in -*) continue ;; esac
                # the packages make deb builds: one packaging/deb/control declares
                if [[ $p == ./build-deb/*_\*.deb ]]; then
                        n=${p#./build-deb/}
                        n=${n%%_*}
                        grep -qx "Package: $n" "$SUNKD_SRCDIR/packaging/deb/control" ||
                                { echo "make deb builds no package $n"; return 1; }
                        continue
                fi
                dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
                        { echo "no package $p is installed"; return 1; }
                APT_PACKAGES="$APT_PACKAGES $p"
        done
}
install_check() {
        local args=() a dirs=
        while [ $# -gt 0 ]; do
                case "$1" in
                -m|-o|-g) shift 2 ;;
                -d) dirs=1; shift ;;
                -*) shift ;;
                *) args+=("$1"); shift ;;
                esac
        done
        # install -d DIR...: what it makes are absolute paths
        if [ -n "$dirs" ]; then
                [ ${#args[@]} -ge 1 ] || { echo "install -d DIR..."; return 1; }
                for a in "${args[@]}"; do
                        case "$a" in /*) ;; *) echo "$a is not an absolute path"; return 1 ;; esac
                done
                return 0
        fi
        [ ${#args[@]} -ge 2 ] || { echo "install SOURCE... DEST"; return 1; }
        # what it copies is installed (the README's deploy steps need
        # nothing from the source tree), or the host's own (/dev/null)
        for a in "${args[@]:0:${#args[@]}-1}"; do
                case "$a" in
                /usr/*|/etc/sunkd/*) [ -e "$(inst "$a")" ] || { echo "make install does not install $a"; return 1; } ;;
                /*) [ -e "$a" ] || { echo "no $a"; return 1; } ;;
                *) echo "$a is a path in the source tree: deploying needs only what is installed"; return 1 ;;
                esac
        done
}
check_command() {
        local prog=$1 rc
        shift
        case "$prog" in
        sunkctl) sunkctl_check "$@" ;;
        sunkd) sunkd_check "$@" ;;
        sunkd-authkeys) authkeys_check "$@" ;;
        /*/sunkd-authkeys)
                [ -x "$(inst "$prog")" ] || { echo "make install does not install $prog"; return 1; }
                authkeys_check "$@" ;;
        make) make_check "$@" ;;
        systemctl) systemctl_check "$@" ;;
        apt-get) apt_check "$@" ;;
        install) install_check "$@" ;;
        getent)
                getent "$@" > /dev/null; rc=$?
                [ $rc -eq 0 ] || [ $rc -eq 2 ] || { echo "exits $rc"; return 1; } ;;
        *) command -v "$prog" > /dev/null || { echo "no command $prog"; return 1; } ;;
        esac
}
APT_PACKAGES=
for file in $FILES; do
        cmds=$(python3 "$SNIPPETS" commands "$SUNKD_SRCDIR/$file") || bail_out "cannot read the commands of $file"
        while IFS=$'\t' read -r line where words; do
                [ -n "$line" ] || continue
                eval "set -- $words"
                r=$(check_command "$@"; echo "rc=$?")
                is "$r" "rc=0" "$file:$line: $*"
        done <<< "$cmds"
done

# The run-time packages the README lists cover what the installed programs
# and modules link (the C library, and the sanitizers' of an ASan build, aside).
APT_PACKAGES=$(python3 "$SNIPPETS" commands "$SUNKD_SRCDIR/README.md" | cut -f3 | sed -n 's/^apt-get install //p' | tr '\n' ' ')
ok "README.md lists the packages a node needs" test -n "$APT_PACKAGES"
for f in "$(inst /usr/sbin/sunkd)" "$(inst /usr/bin/sunkctl)" "$(inst /usr/libexec/sunkd)"/* "$(inst /usr/lib/sunkd)"/*.so; do
        for so in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
                case "$so" in libc.so.*|ld-linux*|libasan.so.*|libubsan.so.*|libm.so.*|libresolv.so.*) continue ;; esac
                path=$(ldconfig -p | awk -v so="$so" '$1 == so { print $NF; exit }')
                pkg=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -n 1 | cut -d: -f1)
                [ -n "$pkg" ] || pkg=$(dpkg -S "$path" 2>/dev/null | head -n 1 | cut -d: -f1)
                like " $APT_PACKAGES " " ${pkg:-unknown-package} " "${f#$D}: $so (${pkg:-not from a package}) is in README.md's apt-get line"
        done
done

# Paths: what README.md says make install installs, it installs.
for file in $FILES; do
        for p in $(grep -oE '(/usr|/etc/sunkd)/[A-Za-z0-9_./*-]*' "$SUNKD_SRCDIR/$file" | sed 's/\.$//' | sort -u); do
                case "$p" in
                /etc/sunkd/*.example|/usr/*sunk*) ;;
                *) continue ;;
                esac
                ok "$file: make install installs $p" have "$(inst "$p")"
        done
done

# Links and manual pages, also of the other README.md files.
slugs() { # the GitHub anchors of a Markdown file's headings
        sed -n 's/^#\{1,6\} //p' "$1" | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9 _-]//g; s/ /-/g'
}
for file in $FILES agent/README.md modules/README.md tests/README.md tests/bench/README.md s6/README.md; do
        dir=$(dirname "$SUNKD_SRCDIR/$file")
        while IFS=$'\t' read -r line target; do
                [ -n "$line" ] || continue
                path=${target%%#*}
                ok "$file:$line: $target leads to a file" test -e "$dir/$path"
                case "$target" in
                *'#'*) ok "$file:$line: $target leads to a heading" grep -qx -- "${target#*#}" <<< "$(slugs "$dir/$path")" ;;
                esac
        done <<< "$(python3 "$SNIPPETS" links "$SUNKD_SRCDIR/$file")"
        for m in $(grep -oE '\bsunk[a-z.-]*\([1-8]\)' "$SUNKD_SRCDIR/$file" | sort -u); do
                page=${m%(*}
                sec=${m#*(}
                ok "$file: the manual $m is in man/" test -f "$SUNKD_SRCDIR/man/$page.${sec%)}.in"
        done
done

done_testing
