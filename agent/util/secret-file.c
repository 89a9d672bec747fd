#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/errloc.h"
#include "util/macro.h"
#include "util/secret-file.h"
#include "util/trusted-path.h"

static int secret_refuse_owner(const char *path, const struct stat *st, char **ret_error) {
        char also[sizeof(" or uid ") + DECIMAL_STR_MAX(uid_t)] = "";

        if (geteuid() != 0)
                (void) snprintf(also, sizeof(also), " or uid %u", (unsigned) geteuid());
        return errmsg_set(ret_error, -EPERM,
                          "'%s': refused: the owner is wrong: uid %u, not root%s (chown root '%s')", path,
                          (unsigned) st->st_uid, also, path);
}

int secret_file_read(const char *path, size_t max, char **ret, char **ret_error) {
        _cleanup_close_ int fd = -1;
        _cleanup_erase_ char *buf = NULL;
        _cleanup_free_ char *why = NULL;
        struct stat st;
        size_t len = 0, size;
        int r;

        /* The file's own owner first, named as the fault it is: the walk's
         * message quotes the mode too, and an admin who reads a mode runs
         * chmod on a file whose owner is what is wrong. */
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid != 0 && st.st_uid != geteuid())
                return secret_refuse_owner(path, &st, ret_error);
        /* Whoever can change a directory on the way can swap the file
         * between two reads.  A path that cannot be looked up is left to
         * open() to report. */
        r = trusted_path_check(path, NULL, 0, &why);
        if (r == -ENOMEM)
                return r;
        if (r == -EPERM)
                return errmsg_set(ret_error, r, "'%s': refused: %s", path, why ?: strerror(-r));
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0 || fstat(fd, &st) < 0)
                return errmsg_set(ret_error, -errno, "'%s': %s", path, strerror(errno));
        if (S_ISREG(st.st_mode) && st.st_uid != 0 && st.st_uid != geteuid())
                return secret_refuse_owner(path, &st, ret_error);
        if (!S_ISREG(st.st_mode) || (st.st_mode & 077))
                return errmsg_set(
                        ret_error, -EPERM,
                        "'%s': refused: must be a regular file owned by root or uid %u with mode 0600 "
                        "or stricter (is %04o)",
                        path, (unsigned) geteuid(), (unsigned) (st.st_mode & 07777));
        if ((uint64_t) st.st_size > (uint64_t) max + 2) /* room for a final "\r\n" */
                return errmsg_set(ret_error, -EFBIG, "'%s': is longer than %zu bytes", path, max);
        /* One byte more than the file, and one for the NUL: a file that grew
         * since fstat() is caught by the read. */
        size = (size_t) st.st_size + 2;
        buf = calloc(1, size);
        if (!buf)
                return -ENOMEM;
        while (len < size - 1) {
                ssize_t k = read(fd, buf + len, size - 1 - len);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return errmsg_set(ret_error, -errno, "'%s': %s", path, strerror(errno));
                if (k == 0)
                        break;
                len += (size_t) k;
        }
        if (len > (size_t) st.st_size)
                return errmsg_set(ret_error, -EBUSY, "'%s': changed while being read", path);
        while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
                buf[--len] = '\0';
        if (len == 0)
                return errmsg_set(ret_error, -ENODATA, "'%s': is empty", path);
        if (memchr(buf, '\0', len))
                return errmsg_set(ret_error, -EBADMSG, "'%s': contains a NUL byte", path);
        if (len > max)
                return errmsg_set(ret_error, -EFBIG, "'%s': is longer than %zu bytes", path, max);
        *ret = TAKE_PTR(buf);
        return 0;
}
