#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/macro.h"

#include "check-proc.h"

#define STAT_MAX 4096
#define STATUS_MAX (64 * 1024)
#define CMDLINE_MAX 4096
#define LOGIN_DEFS_MAX (256 * 1024)
/* NHC's MAX_SYS_UID where login.defs says nothing */
#define NHC_MAX_SYS_UID 99

int check_proc_resolve_user(const char *key, const char *user, uid_t *ret, char **ret_error) {
        int r;

        if (check_parse_id(user, ret) >= 0)
                return 0;
        if (isempty(user))
                return check_invalid(ret_error, key, "an empty user name");
        r = check_lookup_id(user, false, ret);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return check_invalid(ret_error, key, "cannot look up user '%s': %s", user, strerror(-r));
        if (r == 0)
                return check_invalid(ret_error, key, "no user '%s' (give a uid for a user not known yet)",
                                     user);
        return 0;
}

/* One decimal field of at most 20 digits, past the spaces before it. */
static int next_u64(const char **p, const char *end, uint64_t *ret) {
        uint64_t v = 0;
        const char *s = *p;
        unsigned n = 0;

        while (s < end && *s == ' ')
                s++;
        if (s < end && *s == '-') /* a signed field (priority, nice): taken as 0 */
                s++;
        for (; s < end && *s >= '0' && *s <= '9'; s++, n++) {
                if (v > (UINT64_MAX - 9) / 10)
                        return -EBADMSG;
                v = v * 10 + (uint64_t) (*s - '0');
        }
        if (n == 0 || (s < end && *s != ' ' && *s != '\n'))
                return -EBADMSG;
        *p = s;
        *ret = v;
        return 0;
}

int check_proc_parse_stat(const char *text, size_t len, CheckProc *ret) {
        const char *end = text + len, *open, *close = NULL, *p;
        uint64_t v[21]; /* fields 4 (ppid) to 24 (rss), 1-based as proc(5) counts them */
        uint64_t pid;
        size_t n;
        int r;

        *ret = (CheckProc){};
        open = memchr(text, '(', len);
        for (const char *q = end; q > text; q--)
                if (q[-1] == ')') {
                        close = q - 1;
                        break;
                }
        if (!open || !close || close < open)
                return -EBADMSG;
        p = text;
        r = next_u64(&p, open, &pid);
        if (r < 0 || pid == 0 || pid > UINT32_MAX)
                return -EBADMSG;
        n = MIN((size_t) (close - open - 1), sizeof(ret->comm) - 1);
        memcpy(ret->comm, open + 1, n);
        ret->comm[n] = 0;
        p = close + 1;
        if (end - p < 3 || p[0] != ' ' || p[1] == ' ' || p[1] == '\n' || p[2] != ' ')
                return -EBADMSG;
        ret->state = p[1];
        p += 2;
        for (size_t i = 0; i < ELEMENTSOF(v); i++)
                if (next_u64(&p, end, &v[i]) < 0)
                        return -EBADMSG;
        if (v[0] > UINT32_MAX)
                return -EBADMSG;
        ret->pid = (uint32_t) pid;
        ret->ppid = (uint32_t) v[0];
        ret->utime = v[14 - 4];
        ret->stime = v[15 - 4];
        ret->starttime = v[22 - 4];
        ret->vsize = v[23 - 4];
        ret->rss = v[24 - 4];
        return 0;
}

/* The effective uid of status's "Uid:\treal\teffective\tsaved\tfs". */
static int status_euid(const char *text, uid_t *ret) {
        char eff[16];
        const char *l;
        size_t n;

        for (l = text; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] ? 1 : 0))
                if (strncmp(l, "Uid:", 4) == 0)
                        break;
        if (!*l)
                return -EBADMSG;
        l += 4;
        l += strspn(l, " \t");
        n = strspn(l, "0123456789"); /* the real uid */
        if (n == 0 || (l[n] != ' ' && l[n] != '\t'))
                return -EBADMSG;
        l += n + strspn(l + n, " \t");
        n = strspn(l, "0123456789");
        if (n == 0 || n >= sizeof(eff))
                return -EBADMSG;
        memcpy(eff, l, n);
        eff[n] = 0;
        return check_parse_id(eff, ret) < 0 ? -EBADMSG : 0;
}

/* <root>/proc/@pid/@file, at most @max bytes; -ENOENT for a gone process. */
static int read_pid_file(const HealthEnv *env, const char *pid, const char *file, size_t max, char **ret,
                         size_t *ret_len) {
        char rel[64];
        HealthResult ignored;
        int r;

        if (snprintf(rel, sizeof(rel), "/proc/%s/%s", pid, file) >= (int) sizeof(rel))
                return -ENOENT; /* too long a name for a pid */
        r = check_read(env, "proc", rel, max, ret, ret_len, &ignored);
        if (r < 0)
                return r;
        if (!*ret)
                return streq(ignored.code, "proc-input-missing") ? -ENOENT : -EBADMSG;
        return 0;
}

int check_proc_read(const HealthEnv *env, const char *pid, CheckProc *ret) {
        _cleanup_free_ char *stat = NULL, *status = NULL;
        size_t len;
        int r;

        r = read_pid_file(env, pid, "stat", STAT_MAX, &stat, &len);
        if (r < 0)
                return r;
        r = check_proc_parse_stat(stat, len, ret);
        if (r < 0)
                return r;
        if (snprintf(NULL, 0, "%u", ret->pid) != (int) strlen(pid) || strtoul(pid, NULL, 10) != ret->pid)
                return -EBADMSG; /* a stat that names another process */
        r = read_pid_file(env, pid, "status", STATUS_MAX, &status, NULL);
        if (r < 0)
                return r;
        return status_euid(status, &ret->euid);
}

int check_proc_cmdline(const HealthEnv *env, const CheckProc *p, bool first, char *buf, size_t size) {
        _cleanup_free_ char *text = NULL;
        char pid[16], rel[64], path[CHECK_PATH_MAX];
        _cleanup_close_ int fd = -1;
        ssize_t n;
        size_t len;

        if (size == 0)
                return -EINVAL;
        snprintf(pid, sizeof(pid), "%u", p->pid);
        snprintf(rel, sizeof(rel), "/proc/%s/cmdline", pid);
        if (check_path(path, env, rel) < 0)
                return -ENOENT;
        /* only the head: a command line may be megabytes long */
        text = malloc(CMDLINE_MAX + 1);
        if (!text)
                return -ENOMEM;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -ENOENT;
        do
                n = read(fd, text, CMDLINE_MAX);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -ENOENT;
        len = (size_t) n;
        while (len > 0 && text[len - 1] == 0)
                len--;
        text[len] = 0;
        if (len == 0) {
                snprintf(buf, size, "[%s]", p->comm);
                return 0;
        }
        if (first)
                len = strlen(text);
        for (size_t i = 0; i < len; i++)
                if (text[i] == 0)
                        text[i] = ' ';
        snprintf(buf, size, "%s", text);
        return 0;
}

int check_proc_scan(const HealthEnv *env, const char *type, check_proc_fn fn, void *userdata,
                    HealthResult *ret) {
        _cleanup_closedir_ DIR *d = NULL;
        char dir[CHECK_PATH_MAX];
        struct dirent *de;
        int r;

        r = check_path(dir, env, "/proc");
        if (r < 0)
                return check_input_error(ret, type, "/proc", r);
        d = opendir(dir);
        if (!d)
                return check_input_error(ret, type, dir, negative_errno());
        while ((errno = 0, de = readdir(d))) {
                size_t n = strlen(de->d_name);

                if (de->d_name[0] < '1' || de->d_name[0] > '9' || n > 10 ||
                    strspn(de->d_name, "0123456789") != n)
                        continue;
                r = fn(de->d_name, userdata);
                if (r < 0)
                        return r;
        }
        if (errno != 0)
                return check_input_error(ret, type, dir, negative_errno());
        return 1;
}

int check_proc_uptime(const HealthEnv *env, uint64_t *ret_ticks) {
        _cleanup_free_ char *text = NULL;
        HealthResult ignored;
        uint64_t milli;
        long hz = sysconf(_SC_CLK_TCK);
        int r;

        r = check_read(env, "proc", "/proc/uptime", 4096, &text, NULL, &ignored);
        if (r < 0)
                return r;
        if (!text)
                return streq(ignored.code, "proc-input-missing") ? -ENOENT : -EBADMSG;
        if (check_parse_milli(text, &(const char *){ NULL }, &milli) < 0 || hz <= 0)
                return -EBADMSG;
        *ret_ticks = milli * (uint64_t) hz / 1000;
        return 0;
}

/* The digits of a "KEY<blank>value" line of login.defs, as NHC takes them. */
static bool defs_value(const char *line, const char *key, uint64_t *ret) {
        size_t n = strlen(key);
        uint64_t v = 0;
        unsigned digits = 0;

        if (strncmp(line, key, n) != 0 || (line[n] != ' ' && line[n] != '\t'))
                return false;
        for (const char *p = line + n; *p; p++)
                if (*p >= '0' && *p <= '9' && digits++ < 10)
                        v = v * 10 + (uint64_t) (*p - '0');
        if (digits == 0 || digits > 10 || v >= UINT32_MAX)
                return false;
        *ret = v;
        return true;
}

uid_t check_proc_max_system_uid(const HealthEnv *env) {
        _cleanup_free_ char *text = NULL;
        HealthResult ignored;
        uint64_t uid_min = 0, sys_uid_max = 0, v;
        bool have_min = false, have_max = false;
        char *save = NULL;

        if (check_read(env, "proc", "/etc/login.defs", LOGIN_DEFS_MAX, &text, NULL, &ignored) < 0 || !text)
                return NHC_MAX_SYS_UID;
        for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                l += strspn(l, " \t");
                if (defs_value(l, "UID_MIN", &v)) {
                        uid_min = v;
                        have_min = true;
                } else if (defs_value(l, "SYS_UID_MAX", &v)) {
                        sys_uid_max = v;
                        have_max = true;
                        break;
                }
        }
        if (have_max && sys_uid_max > 0)
                return (uid_t) sys_uid_max;
        if (!have_max && have_min && uid_min > 1)
                return (uid_t) (uid_min - 1);
        return NHC_MAX_SYS_UID;
}
