# Publishing into /etc for libnss-cache, safely (sourced after tap.sh).
#
# libnss-cache reads only fixed paths under /etc.  etc_cache_claim takes the
# lock every such test shares, backs up the cache files and nsswitch.conf,
# and restores them at exit (etc_cache_restore, called from the EXIT trap).

ETC_CACHE_LOCK=/run/lock/sunkd-etc-nss-cache.lock
ETC_CACHE_FILES="passwd.cache passwd.cache.ixname passwd.cache.ixuid group.cache group.cache.ixname
group.cache.ixgid shadow.cache shadow.cache.ixname sshkey.cache sshkey.cache.ixname nsswitch.conf netgroup"

etc_cache_claim() {
        [ "$(id -u)" = 0 ] || bail_out "must run as root: libnss-cache reads only /etc"
        ls /usr/lib/*/libnss_cache.so.2 >/dev/null 2>&1 || bail_out "libnss-cache is not installed (apt-get install libnss-cache)"
        exec 8>"$ETC_CACHE_LOCK" || bail_out "cannot open $ETC_CACHE_LOCK"
        flock -w 600 8 || bail_out "cannot lock $ETC_CACHE_LOCK"
        ETC_BACKUP="$T/etc-backup"
        mkdir -p "$ETC_BACKUP"
        for f in $ETC_CACHE_FILES; do
                [ -e "/etc/$f" ] && { cp -a "/etc/$f" "$ETC_BACKUP/$f" || bail_out "cannot back up /etc/$f"; }
        done
}

etc_cache_restore() {
        [ -n "${ETC_BACKUP:-}" ] || return 0
        for f in $ETC_CACHE_FILES; do
                rm -f "/etc/$f" "/etc/$f".??????
                [ -e "$ETC_BACKUP/$f" ] && cp -a "$ETC_BACKUP/$f" "/etc/$f"
        done
        ETC_BACKUP=
}
