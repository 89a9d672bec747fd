# The files of the source tree (sourced after tap.sh).
#
# source_kind DIR    sets SOURCE_KIND to "git" (a clone) or "tarball"; a .git
#                    that git cannot read is a Bail out
# source_files DIR   its files, one per line, relative to DIR, sorted: git's
#                    tracked files in a clone, the files there (less build
#                    directories) in an unpacked tarball; source_kind first

source_kind() {
        if [ -e "$1/.git" ]; then
                command -v git >/dev/null || bail_out "git not found: install the Debian package git"
                [ "$(git -C "$1" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$1" && pwd -P)" ] \
                        || bail_out "$1 has .git but git does not read it as a work tree"
                SOURCE_KIND=git
        else
                SOURCE_KIND=tarball
        fi
}

source_files() {
        case "${SOURCE_KIND:?source_kind first}" in
        git) git -C "$1" ls-files ;;
        *) (cd "$1" && find . \( -name autom4te.cache -o -type d -exec test -e '{}/config.status' \; \) \
                -prune -o -type f -print) | sed 's|^\./||' ;;
        esac | LC_ALL=C sort
}
