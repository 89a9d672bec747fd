/* Atomic file replacement.
 *
 * Readers of the files we publish (libnss-cache, node_exporter, slurmd) open
 * them at any moment, so a file is never written in place: the new content
 * goes to a temp file in the same directory, is fsync'ed, and is renamed over
 * the old name, after which the directory is fsync'ed so the rename itself
 * survives a crash.  A failure at any step unlinks the temp file, so the old
 * file is left exactly as it was.
 */
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/macro.h"

int fileio_write_all(int fd, const void *data, size_t len) {
        const char *p = data;

        while (len > 0) {
                ssize_t n = write(fd, p, len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (n == 0)
                        return -EIO;
                p += n;
                len -= (size_t) n;
        }
        return 0;
}

int fileio_mkdir_parents(const char *path, mode_t mode) {
        _cleanup_free_ char *p = strdup(path);

        if (!p)
                return -ENOMEM;
        for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
                *s = '\0';
                if (mkdir(p, mode) < 0 && errno != EEXIST)
                        return negative_errno();
                *s = '/';
        }
        return 0;
}

int fileio_mkdir_p(const char *path, mode_t mode) {
        int r = fileio_mkdir_parents(path, mode);

        if (r < 0)
                return r;
        return mkdir(path, mode) < 0 && errno != EEXIST ? negative_errno() : 0;
}

int fileio_pwrite_all(int fd, const void *data, size_t len, uint64_t offset) {
        const char *p = data;

        while (len > 0) {
                ssize_t n = pwrite(fd, p, len, (off_t) offset);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                p += n;
                len -= (size_t) n;
                offset += (uint64_t) n;
        }
        return 0;
}

ssize_t fileio_pread_full(int fd, void *buf, size_t len, uint64_t offset) {
        char *p = buf;
        size_t got = 0;

        while (got < len) {
                ssize_t n = pread(fd, p + got, len - got, (off_t) (offset + got));
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (n == 0)
                        break;
                got += (size_t) n;
        }
        return (ssize_t) got;
}

int fileio_fsync_dir(const char *path) {
        _cleanup_free_ char *copy = strdup(path);
        _cleanup_close_ int fd = -1;

        if (!copy)
                return -ENOMEM;
        fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        return RET_NERRNO(fsync(fd));
}

int fileio_stage(const char *path, const void *data, size_t len, mode_t mode, uid_t uid, gid_t gid,
                 char **ret_tmp) {
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int fd = -1;
        int r;

        if (asprintf(&tmp, "%s.XXXXXX", path) < 0)
                return -ENOMEM;
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return negative_errno();

        r = fileio_write_all(fd, data, len);
        if (r >= 0)
                r = RET_NERRNO(fchmod(fd, mode));
        if (r >= 0 && uid != (uid_t) -1)
                r = RET_NERRNO(fchown(fd, uid, gid));
        if (r >= 0)
                r = RET_NERRNO(fsync(fd));
        if (r < 0) {
                (void) unlink(tmp);
                return r;
        }
        *ret_tmp = TAKE_PTR(tmp);
        return 0;
}

int fileio_commit(const char *tmp, const char *path) {
        if (rename(tmp, path) < 0) {
                int r = negative_errno();
                (void) unlink(tmp);
                return r;
        }
        return fileio_fsync_dir(path);
}

int fileio_write_atomic(const char *path, const void *data, size_t len, mode_t mode, uid_t uid, gid_t gid) {
        _cleanup_free_ char *tmp = NULL;
        int r;

        r = fileio_stage(path, data, len, mode, uid, gid, &tmp);
        if (r < 0)
                return r;
        return fileio_commit(tmp, path);
}

int fileio_read(const char *path, size_t max, char **ret, size_t *ret_len) {
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, alloc = 0;

        struct stat st;

        /* O_NONBLOCK: a FIFO named as a file must not hang its reader. */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (!S_ISREG(st.st_mode))
                return -EINVAL; /* a FIFO, socket or device is no file to read a setting from */

        for (;;) {
                if (len + 1 >= alloc) {
                        size_t n = alloc ? alloc * 2 : 4096;
                        char *p;

                        if (alloc > max + 1)
                                return -EFBIG;
                        p = realloc(buf, n);
                        if (!p)
                                return -ENOMEM;
                        buf = p;
                        alloc = n;
                }
                ssize_t k = read(fd, buf + len, alloc - len - 1);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (k == 0)
                        break;
                len += (size_t) k;
                if (len > max)
                        return -EFBIG;
        }
        buf[len] = '\0';
        *ret = TAKE_PTR(buf);
        if (ret_len)
                *ret_len = len;
        return 0;
}
