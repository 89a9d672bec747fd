# A real sshd on 127.0.0.1 whose AuthorizedKeysCommand is sunkd-authkeys
# (sourced after tap.sh and sunkd.sh, once sunkd_setup has made $T).
#
# sshd_setup               sunkd-authkeys where sshd accepts it ($AK_CMD), the
#                          AuthorizedKeysCommandUser ($AKUSER), a host key
# sshd_start VAR "ARGS" ["LINES"]  an sshd running `sunkd-authkeys ARGS -- %u %f`, its
#                          port in $VAR; LINES of sshd_config go first (the first value wins)
# ssh_login PORT USER KEY  prints logged-in-as-NAME when USER logs in with the key file KEY
# sshd_cleanup             stops every sshd and removes the command (call from the EXIT trap)

SSHD=/usr/sbin/sshd

sshd_setup() {
        [ -x "$SSHD" ] || bail_out "sshd is not installed (apt-get install openssh-server)"
        command -v ssh >/dev/null || bail_out "ssh is not installed (apt-get install openssh-client)"
        command -v ssh-keygen >/dev/null || bail_out "ssh-keygen is not installed (apt-get install openssh-client)"
        # sshd runs the command only if it and every directory above it are
        # root's and writable by root alone: not under /tmp.
        AK_DIR=$(mktemp -d /run/sunkd-authkeys-test.XXXXXX) || bail_out "mktemp in /run failed"
        chmod 755 "$AK_DIR"
        AK_CMD="$AK_DIR/sunkd-authkeys"
        install -m 755 "$SUNKD_BUILDDIR/modules/authkeys/sunkd-authkeys" "$AK_CMD" || bail_out "sunkd-authkeys not built"
        AKUSER=sunkd-akcmd
        getent passwd "$AKUSER" >/dev/null ||
                useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$AKUSER" ||
                bail_out "cannot create the AuthorizedKeysCommandUser $AKUSER"
        mkdir -p /run/sshd && chmod 755 /run/sshd
        mkdir -p "$T/ssh"
        ssh-keygen -q -t ed25519 -N '' -f "$T/ssh/host" || bail_out "ssh-keygen host key"
}

sshd_cleanup() {
        [ -n "${SSHD_PIDS:-}" ] && kill $SSHD_PIDS 2>/dev/null
        SSHD_PIDS=
        [ -n "${AK_DIR:-}" ] && rm -rf "$AK_DIR"
        AK_DIR=
}

sshd_start() { # PORTVAR CLIENT-ARGS [CONFIG-LINES]
        local port cfg="$T/ssh/sshd-$1.conf"
        port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        cat > "$cfg" <<EOF2
${3:-}
Port $port
ListenAddress 127.0.0.1
HostKey $T/ssh/host
PidFile none
UsePAM no
StrictModes yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
AuthorizedKeysFile none
AuthorizedKeysCommand $AK_CMD $2 -- %u %f
AuthorizedKeysCommandUser $AKUSER
LogLevel VERBOSE
EOF2
        "$SSHD" -D -e -f "$cfg" 2> "$T/ssh/sshd-$1.log" &
        SSHD_PIDS="${SSHD_PIDS:-} $!"
        wait_until 300 grep -q "Server listening on 127.0.0.1 port $port" "$T/ssh/sshd-$1.log" ||
                { sed 's/^/# /' "$T/ssh/sshd-$1.log"; bail_out "sshd did not start"; }
        eval "$1=$port"
}

ssh_login() { # PORT USER KEYFILE
        ssh -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
            -o IdentitiesOnly=yes -o ConnectTimeout=30 -o LogLevel=ERROR -i "$3" -p "$1" "$2@127.0.0.1" \
            echo logged-in-as-\$\(id -un\) 2>/dev/null
}
