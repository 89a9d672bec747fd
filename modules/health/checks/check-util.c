#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/macro.h"

#include "check-util.h"

int check_path(char buf[static CHECK_PATH_MAX], const HealthEnv *env, const char *path) {
        const char *root = env && !isempty(env->root) && !streq(env->root, "/") ? env->root : "";
        int n = snprintf(buf, CHECK_PATH_MAX, "%s%s", root, path);

        return n < 0 || n >= CHECK_PATH_MAX ? -ENAMETOOLONG : 0;
}

void check_path_normalise(char *path) {
        char *w = path;

        for (const char *p = path; *p;) {
                if (*p == '/' && (p[1] == '/' || (p[1] == '.' && (p[2] == '/' || p[2] == 0)))) {
                        p += p[1] == '/' ? 1 : 2;
                        continue;
                }
                *w++ = *p++;
        }
        while (w > path + 1 && w[-1] == '/')
                w--;
        if (w == path) /* "/." and the like */
                *w++ = '/';
        *w = 0;
}

static int input_code(char code[static HEALTH_CODE_MAX], const char *type, const char *what) {
        snprintf(code, HEALTH_CODE_MAX, "%s-input-%s", type, what);
        return 0;
}

int check_input_error(HealthResult *ret, const char *type, const char *path, int r) {
        char code[HEALTH_CODE_MAX];

        if (r == -ENOENT || r == -ENOTDIR) {
                input_code(code, type, "missing");
                health_result_set(ret, HEALTH_UNKNOWN, code, "'%s' is missing", path);
        } else if (r == -EFBIG) {
                input_code(code, type, "bad");
                health_result_set(ret, HEALTH_UNKNOWN, code,
                                  "'%s' is too large for what the kernel writes there", path);
        } else if (r == -EINVAL) {
                input_code(code, type, "bad");
                health_result_set(ret, HEALTH_UNKNOWN, code, "'%s' is not a regular file", path);
        } else {
                input_code(code, type, "bad");
                health_result_set(ret, HEALTH_UNKNOWN, code, "'%s': %s", path, strerror(-r));
        }
        return 0;
}

int check_input_bad(HealthResult *ret, const char *type, const char *fmt, ...) {
        char code[HEALTH_CODE_MAX], detail[HEALTH_DETAIL_MAX];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(detail, sizeof(detail), fmt, ap);
        va_end(ap);
        input_code(code, type, "bad");
        health_result_set(ret, HEALTH_UNKNOWN, code, "%s", detail);
        return 0;
}

int check_read(const HealthEnv *env, const char *type, const char *path, size_t max, char **ret,
               size_t *ret_len, HealthResult *result) {
        char p[CHECK_PATH_MAX];
        int r;

        *ret = NULL;
        r = check_path(p, env, path);
        if (r >= 0)
                r = fileio_read(p, max, ret, ret_len);
        if (r == -ENOMEM) {
                health_result_set(result, HEALTH_UNKNOWN, "out-of-memory", "out of memory reading '%s'", p);
                return r;
        }
        if (r < 0)
                return check_input_error(result, type, r == -ENAMETOOLONG ? path : p, r);
        return 0;
}

int check_invalid(char **ret_error, const char *key, const char *fmt, ...) {
        _cleanup_free_ char *msg = NULL;
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vasprintf(&msg, fmt, ap);
        va_end(ap);
        if (n < 0 || asprintf(ret_error, "key '%s': %s", key, msg) < 0) {
                *ret_error = NULL;
                return -ENOMEM;
        }
        return -EINVAL;
}

int check_regcomp(regex_t *re, const char *key, const char *pattern, int flags, char **ret_error) {
        char why[256];
        int r;

        r = regcomp(re, pattern, REG_EXTENDED | flags);
        if (r == REG_ESPACE)
                return -ENOMEM;
        if (r != 0) {
                regerror(r, re, why, sizeof(why));
                return check_invalid(ret_error, key, "'%s' is not a POSIX extended regular expression: %s",
                                     pattern, why);
        }
        return 0;
}

int check_parse_id(const char *s, uint32_t *ret) {
        uint64_t v = 0;

        if (isempty(s) || strlen(s) > 10)
                return -EINVAL;
        for (const char *p = s; *p; p++) {
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                v = v * 10 + (uint64_t) (*p - '0');
        }
        if (v >= UINT32_MAX)
                return -EINVAL;
        *ret = (uint32_t) v;
        return 0;
}

int check_lookup_id(const char *name, bool group, uint32_t *ret) {
        _cleanup_free_ char *buf = NULL;
        struct passwd pw, *pf = NULL;
        struct group gr, *gf = NULL;
        size_t size = 4096;
        int r;

        for (;;) {
                free(buf);
                buf = malloc(size);
                if (!buf)
                        return -ENOMEM;
                r = group ? getgrnam_r(name, &gr, buf, size, &gf) : getpwnam_r(name, &pw, buf, size, &pf);
                if (r != ERANGE || size >= 1024 * 1024)
                        break;
                size *= 2;
        }
        if (r != 0)
                return -r;
        if (group ? !gf : !pf)
                return 0;
        *ret = group ? gf->gr_gid : pf->pw_uid;
        return 1;
}

int check_lines_open(CheckLines *l, const char *path) {
        struct stat st;
        int r = 0;

        *l = (CheckLines) CHECK_LINES_INIT;
        l->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (l->fd < 0)
                return negative_errno();
        if (fstat(l->fd, &st) < 0)
                r = negative_errno();
        else if (!S_ISREG(st.st_mode))
                r = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
        else if (!(l->buf = malloc(CHECK_LINE_MAX + 1)))
                r = -ENOMEM;
        if (r < 0)
                check_lines_close(l);
        return r;
}

void check_lines_close(CheckLines *l) {
        l->buf = mfree(l->buf);
        if (l->fd >= 0)
                close(l->fd);
        l->fd = -1;
}

/* More bytes after the unreturned ones, moved to the front; a buffer full
 * of one line is dropped and the rest of that line skipped. */
static int lines_fill(CheckLines *l) {
        ssize_t k;

        if (l->start > 0) {
                memmove(l->buf, l->buf + l->start, l->end - l->start);
                l->end -= l->start;
                l->start = 0;
        }
        if (l->end == CHECK_LINE_MAX) {
                l->end = 0;
                l->skipping = true;
        }
        do
                k = read(l->fd, l->buf + l->end, CHECK_LINE_MAX - l->end);
        while (k < 0 && errno == EINTR);
        if (k < 0)
                return negative_errno();
        if (k == 0)
                l->eof = true;
        l->total += (uint64_t) k;
        l->end += (size_t) k;
        return l->total > CHECK_INPUT_MAX ? -EFBIG : 0;
}

int check_lines_next(CheckLines *l, char **ret_line, size_t *ret_len) {
        for (;;) {
                char *line = l->buf + l->start, *nl = memchr(line, '\n', l->end - l->start);
                size_t len = nl ? (size_t) (nl - line) : l->end - l->start;
                int r;

                if (nl || (l->eof && len > 0)) {
                        line[len] = 0;
                        l->start += len + (nl ? 1 : 0);
                        if (l->skipping) {
                                l->skipping = false;
                                l->overlong++;
                                continue;
                        }
                        *ret_line = line;
                        *ret_len = len;
                        return 1;
                }
                if (l->eof) {
                        l->overlong += l->skipping; /* a long last line, cut where the buffer was */
                        l->skipping = false;
                        return 0;
                }
                r = lines_fill(l);
                if (r < 0)
                        return r;
        }
}

int check_parse_milli(const char *s, const char **ret_end, uint64_t *ret) {
        uint64_t v = 0, scale = 1000;
        const char *p = s;

        if (*p < '0' || *p > '9')
                return -EINVAL;
        for (; *p >= '0' && *p <= '9'; p++) {
                v = v * 10 + (uint64_t) (*p - '0');
                if (v > UINT64_C(1000000000000))
                        return -EINVAL;
        }
        v *= 1000;
        if (*p == '.') {
                p++;
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                for (; *p >= '0' && *p <= '9'; p++)
                        if (scale > 1) {
                                scale /= 10;
                                v += scale * (uint64_t) (*p - '0');
                        }
        }
        if (ret_end)
                *ret_end = p;
        else if (*p)
                return -EINVAL;
        *ret = v;
        return 0;
}

const char *check_format_milli(uint64_t milli, char buf[static 32]) {
        int n = snprintf(buf, 32, "%" PRIu64 ".%03u", milli / 1000, (unsigned) (milli % 1000));

        while (n > 0 && buf[n - 1] == '0')
                buf[--n] = 0;
        if (n > 0 && buf[n - 1] == '.')
                buf[--n] = 0;
        return buf;
}

const char *check_format_size(uint64_t bytes, char buf[static 32]) {
        static const char units[] = "KMGTPE";
        unsigned shift = 10, u = 0;

        if (bytes < 1024) {
                snprintf(buf, 32, "%" PRIu64 "B", bytes);
                return buf;
        }
        while (u + 1 < sizeof(units) - 1 && bytes >> (shift + 10) > 0) {
                shift += 10;
                u++;
        }
        /* Tenths rounded down: "9.9G" free never reads as the 10G wanted. */
        snprintf(buf, 32, "%" PRIu64 ".%u%c", bytes >> shift,
                 (unsigned) (((bytes >> (shift - 10)) & 1023) * 10 / 1024), units[u]);
        return buf;
}

int check_statvfs(const HealthEnv *env, const char *type, const char *path, struct statvfs *st,
                  HealthResult *ret) {
        char p[CHECK_PATH_MAX], code[HEALTH_CODE_MAX];
        int r;

        r = check_path(p, env, path);
        if (r >= 0)
                r = RET_NERRNO(statvfs(p, st));
        if (r >= 0)
                return 1;
        if (r == -ENOENT || r == -ENOTDIR || r == -ENAMETOOLONG)
                return check_input_error(ret, type, r == -ENAMETOOLONG ? path : p, r);
        snprintf(code, sizeof(code), "%s-error", type);
        health_result_set(ret, HEALTH_FAIL, code, "'%s': %s", path, strerror(-r));
        return 0;
}
