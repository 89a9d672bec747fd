/* The owner and mode checks for what the module reads its orders from.
 * Worded as the main config's check (agent/conf.c), with the owner too. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/macro.h"

#include "trusted-path.h"

int trusted_path_check(const char *path, const char *what, char **ret_error) {
        struct stat st;
        const char *why;

        if (stat(path, &st) < 0) {
                int r = negative_errno();
                if (ret_error && asprintf(ret_error, "%s: %s", path, strerror(-r)) < 0)
                        *ret_error = NULL;
                return r;
        }
        if (st.st_mode & (S_IWGRP | S_IWOTH))
                why = "group- or world-writable";
        else if (st.st_uid != 0 && st.st_uid != geteuid())
                why = "not owned by root";
        else
                return 0;
        if (ret_error && asprintf(ret_error, "%s: refusing a %s that is %s (owner uid %u, mode %04o)", path, what,
                                  why, (unsigned) st.st_uid, (unsigned) (st.st_mode & 07777)) < 0)
                *ret_error = NULL;
        return -EPERM;
}
