/* Whether only root and sunkd's own uid decide what a path holds.  Non-logging.
 *
 * A file sunkd takes orders from (sunkd.yaml, a module, nsscache.conf), a
 * secret it reads (secret_file_read()) or a place it writes (gres.conf, the
 * socket, the state directory) is as safe as
 * the easiest way to change it: the file itself, every directory on the way
 * (whose owner can rename something else into its place) and every symlink
 * met, with its target.  So the path is walked as the kernel resolves it,
 * component by component, symlinks followed, and each of them checked:
 *
 *   - every directory: owned by root or by sunkd's uid, and not writable by
 *     its group or by others, except that a sticky directory (/tmp) may be
 *     passed through: there the kernel lets nobody but an entry's owner, the
 *     directory's owner and root rename or remove the entry, so the entry
 *     looked up in it must itself be root's or sunkd's;
 *   - a file read: owned by root or by sunkd's uid, not group- or
 *     world-writable;
 *   - the directory a path ends in, and the one a written file is created or
 *     replaced in: writable by its owner alone, sticky or not, since in a
 *     sticky directory anyone may create the name first.
 *
 * OpenSSH's safe_path() refuses sticky directories on the way outright; a
 * root-owned directory in /tmp is as fixed as one in /etc, which is what lets
 * a test keep its files under mktemp -d.
 */
#pragma once

enum {
        /* A path sunkd writes: a file it creates or replaces by rename, or a
         * directory it writes into.  It and directories above it may be
         * missing (sunkd creates them); the deepest existing directory must
         * then be writable by its owner alone.  An existing file there is not
         * checked: it is replaced, never written through. */
        TRUSTED_PATH_WRITTEN = 1u << 0,
};

/**
 * trusted_path_check() - refuse @path unless only root and sunkd's uid can
 * change it, by the rules above.
 * @what: what @path is, for the message ("config file", "module directory");
 *   NULL for a caller that names @path itself: -EPERM's message is then the
 *   reason alone, "['ITEM' is ]owned by uid U, not root (mode M)" or
 *   "['ITEM' is ]group- or world-writable (owner uid U, mode M)"
 * @flags: TRUSTED_PATH_WRITTEN or 0
 * Return: 0; -EPERM with "refusing WHAT 'PATH': ['ITEM' is ]owned by uid U,
 * not root (mode M)" or "...: ['ITEM' is ]group- or world-writable (owner
 * uid U, mode M)" in *ret_error, ITEM being the directory, symlink or target
 * at fault when it is not @path itself; or a lookup's -errno (-ENOENT,
 * -ENOTDIR, -ELOOP, -EACCES, ...) with "PATH: [ITEM: ]reason".  A relative
 * @path is walked from "/" through the working directory.
 * *ret_error may be NULL afterwards when out of memory; @ret_error may be NULL.
 */
int trusted_path_check(const char *path, const char *what, unsigned flags, char **ret_error);
