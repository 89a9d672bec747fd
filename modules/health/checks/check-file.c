/* The `file` check: a path exists and, with `match`, the first MiB of it (a
 * regular file) holds a line that matches a POSIX extended regular
 * expression (REG_NEWLINE: ^ and $ match at each line).  A NUL byte ends a
 * piece of text and the match goes on after it, so a binary file is
 * searched to the end of what is read.  The regex is compiled with the
 * config, so a bad one is refused there; regexec() takes no lock a fork
 * could leave held (glibc locks a regex only during a match, and nothing
 * else matches this one).  Here the file is the thing checked: missing is a
 * failure, not UNKNOWN.
 *
 * `owner`, `group` (a name, resolved when the config is read as the
 * process check resolves its user, or a number) and `mode` (the octal
 * permission bits, "0644", all of them equal) are LBNL NHC's
 * check_file_stat -u/-U, -g/-G and -m: the file's stat(), a symbolic link
 * followed to what it names.  NHC compares a group by name when given one;
 * sunkd compares the gid the name has when the config is read, so a group
 * renamed since then still counts as itself. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/macro.h"

#include "check-util.h"

#define FILE_READ_MAX (1024 * 1024)

typedef struct FileConf {
        HealthCheckCommon common;
        char *path;
        char *match;
        char *owner, *group, *mode;
        /* from validate */
        regex_t re;
        bool compiled;
        uid_t uid;
        gid_t gid;
        mode_t perm;
} FileConf;

static const sunkd_cfg_key file_keys[] = {
        HEALTH_COMMON_KEYS,
        { "path", SUNKD_CFG_PATH, offsetof(FileConf, path), SUNKD_CFG_REQUIRED, 0, 0 },
        { "match", SUNKD_CFG_STRING, offsetof(FileConf, match), 0, 0, 0 },
        { "owner", SUNKD_CFG_STRING, offsetof(FileConf, owner), 0, 0, 0 },
        { "group", SUNKD_CFG_STRING, offsetof(FileConf, group), 0, 0, 0 },
        { "mode", SUNKD_CFG_STRING, offsetof(FileConf, mode), 0, 0, 0 },
};

/* @name's uid (@group false) or gid, looked up now: `run` may be in a
 * child forked from the threaded daemon, where NSS is no place to be. */
static int resolve_id(const char *key, const char *name, bool group, uint32_t *ret, char **ret_error) {
        const char *what = group ? "group" : "user";
        int r;

        if (check_parse_id(name, ret) >= 0)
                return 0;
        r = check_lookup_id(name, group, ret);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return check_invalid(ret_error, key, "cannot look up %s '%s': %s", what, name, strerror(-r));
        if (r == 0)
                return check_invalid(ret_error, key, "no %s '%s' (give a number for one not known yet)",
                                     what, name);
        return 0;
}

/* "0644", "644", "1777": octal permission bits, at most 07777. */
static int parse_mode(const char *s, mode_t *ret) {
        unsigned v = 0;

        if (isempty(s) || strlen(s) > 5 || strspn(s, "01234567") != strlen(s))
                return -EINVAL;
        for (const char *p = s; *p; p++)
                v = v * 8 + (unsigned) (*p - '0');
        if (v > 07777)
                return -EINVAL;
        *ret = (mode_t) v;
        return 0;
}

static int file_validate(void *conf, char **ret_error) {
        FileConf *c = conf;
        int r;

        if (c->owner && (r = resolve_id("owner", c->owner, false, &c->uid, ret_error)) < 0)
                return r;
        if (c->group && (r = resolve_id("group", c->group, true, &c->gid, ret_error)) < 0)
                return r;
        if (c->mode && parse_mode(c->mode, &c->perm) < 0)
                return check_invalid(ret_error, "mode", "'%s' is not octal permission bits such as 0644",
                                     c->mode);
        if (!c->match)
                return 0;
        r = check_regcomp(&c->re, "match", c->match, REG_NOSUB | REG_NEWLINE, ret_error);
        if (r < 0)
                return r;
        c->compiled = true;
        return 0;
}

static void file_release(void *conf) {
        FileConf *c = conf;

        if (c->compiled)
                regfree(&c->re);
        c->compiled = false;
}

/* Up to FILE_READ_MAX bytes of the regular file @path, and whether there was more. */
static int read_head(const char *path, char **ret, size_t *ret_len, bool *ret_more) {
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        char extra;
        ssize_t k;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0 || fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
        buf = malloc(FILE_READ_MAX + 1);
        if (!buf)
                return -ENOMEM;
        k = fileio_pread_full(fd, buf, FILE_READ_MAX, 0);
        if (k < 0)
                return (int) k;
        buf[k] = 0;
        *ret_len = (size_t) k;
        *ret_more = (size_t) k == FILE_READ_MAX && fileio_pread_full(fd, &extra, 1, FILE_READ_MAX) == 1;
        *ret = TAKE_PTR(buf);
        return 0;
}

/* Whether a piece of @text between NUL bytes matches; runs of NUL bytes
 * give one empty piece, not one regexec() each. */
static bool matches(const regex_t *re, const char *text, size_t len) {
        bool tried_empty = false;

        for (const char *p = text; p <= text + len; p += strlen(p) + 1) {
                if (*p == 0 && tried_empty)
                        continue;
                tried_empty = tried_empty || *p == 0;
                if (regexec(re, p, 0, NULL, 0) == 0)
                        return true;
        }
        return false;
}

/* 1 with the result set when owner, group or mode is not as asked; 0 otherwise. */
static int file_stat_judge(const FileConf *c, const struct stat *st, HealthResult *ret) {
        if (c->owner && st->st_uid != c->uid)
                health_result_set(ret, HEALTH_FAIL, "file-owner",
                                  "'%s' is owned by uid %" PRIu32 ", want %s", c->path,
                                  (uint32_t) st->st_uid, c->owner);
        else if (c->group && st->st_gid != c->gid)
                health_result_set(ret, HEALTH_FAIL, "file-group", "'%s' has gid %" PRIu32 ", want %s",
                                  c->path, (uint32_t) st->st_gid, c->group);
        else if (c->mode && (st->st_mode & 07777) != c->perm)
                health_result_set(ret, HEALTH_FAIL, "file-mode", "'%s' has mode %04o, want %04o", c->path,
                                  (unsigned) (st->st_mode & 07777), (unsigned) c->perm);
        else
                return 0;
        return 1;
}

static int file_run(const void *conf, const HealthEnv *env, HealthResult *ret) {
        const FileConf *c = conf;
        _cleanup_free_ char *text = NULL;
        char p[CHECK_PATH_MAX];
        struct stat st;
        size_t len = 0;
        bool more = false;
        int r;

        r = check_path(p, env, c->path);
        if (r >= 0)
                r = RET_NERRNO(stat(p, &st));
        if (r >= 0 && (r = file_stat_judge(c, &st, ret)) > 0)
                return 0;
        if (r >= 0 && c->compiled)
                r = read_head(p, &text, &len, &more);
        if (r == -ENOMEM) {
                health_result_set(ret, HEALTH_UNKNOWN, "out-of-memory", "out of memory reading '%s'",
                                  c->path);
                return r;
        }
        if (r == -ENOENT || r == -ENOTDIR)
                health_result_set(ret, HEALTH_FAIL, "file-missing", "'%s' is missing", c->path);
        else if (r == -EISDIR || r == -EINVAL)
                health_result_set(ret, HEALTH_FAIL, "file-unreadable", "'%s' is not a regular file",
                                  c->path);
        else if (r < 0)
                health_result_set(ret, HEALTH_FAIL, "file-unreadable", "'%s': %s", c->path, strerror(-r));
        else if (c->compiled && !matches(&c->re, text, len))
                health_result_set(ret, HEALTH_FAIL, "file-mismatch", "'%s' does not match '%s'%s", c->path,
                                  c->match, more ? " in its first MiB" : "");
        else
                health_result_set(
                        ret, HEALTH_PASS, "ok", "'%s' %s%s", c->path, c->compiled ? "matches" : "exists",
                        c->owner || c->group || c->mode ? ", of the owner, group and mode asked" : "");
        return 0;
}

const HealthCheckType health_check_file = {
        .name = "file",
        .keys = file_keys,
        .n_keys = ELEMENTSOF(file_keys),
        .conf_size = sizeof(FileConf),
        .validate = file_validate,
        .release = file_release,
        .run = file_run,
        .child = true,
};
