/* One line of /proc/self/mountinfo, read the one way every check that
 * reads the table reads it (the mount check, the baseline of mounts), so
 * that a baseline never names a mount its check cannot see.  Non-logging. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* The longest file system type told apart. */
#define CHECK_MOUNTINFO_FSTYPE_MAX 256

typedef struct CheckMountinfoLine {
        unsigned long id, parent;
        char *path;          /* the mount point, its \ooo escapes decoded */
        const char *fs_type; /* shorter than CHECK_MOUNTINFO_FSTYPE_MAX */
        char *opts;          /* the mount's options, as listed */
        char *sb_opts;       /* its super block's */
} CheckMountinfoLine;

/**
 * check_mountinfo_parse() - split @line (@len bytes, NUL-terminated, changed
 * in place) as "36 35 98:0 /root /mnt/point rw,noatime master:1 - ext4
 * /dev/sda1 rw,errors=remount-ro".  Return: false for a line that does not
 * read so (a NUL inside, a field missing, an id that is not a number, a
 * mount point that is not absolute).
 */
bool check_mountinfo_parse(char *line, size_t len, CheckMountinfoLine *ret);

/** check_mountinfo_has_option() - whether the comma-separated @opts holds @opt. */
bool check_mountinfo_has_option(const char *opts, const char *opt);
