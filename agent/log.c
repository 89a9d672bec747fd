/* One log sink for the daemon and its modules.
 *
 * Under systemd stderr is connected to the journal; $JOURNAL_STREAM then
 * names stderr's device and inode, and we switch to sd_journal_send() so
 * each message carries SUNKD_MODULE=, SUNKD_JOB=, ERRNO= and CODE_* fields an
 * admin can filter on (journalctl SUNKD_MODULE=nsscache).  Elsewhere (s6-log,
 * a terminal, a test) a line "sunkd[module]: message" goes to stderr with one
 * write(), so lines from worker threads never interleave.
 *
 * The level and sink are process-wide by nature (the process has one stderr);
 * they are set once at startup and on reload, from the loop thread only.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>

#include "log.h"

/* Set on the loop at reload, read by workers as they log. */
static int max_level = LOG_INFO;
static bool use_journal = false;

static const char *const level_names[] = {
        [LOG_EMERG] = "emerg",     [LOG_ALERT] = "alert",   [LOG_CRIT] = "crit", [LOG_ERR] = "err",
        [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice", [LOG_INFO] = "info", [LOG_DEBUG] = "debug",
};

void log_open(void) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;

        use_journal = e && sscanf(e, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0 &&
                      (unsigned long long) st.st_dev == dev && (unsigned long long) st.st_ino == ino;
}

void log_set_max_level(int level) {
        __atomic_store_n(&max_level, level, __ATOMIC_RELAXED);
}

int log_get_max_level(void) {
        return __atomic_load_n(&max_level, __ATOMIC_RELAXED);
}

int log_level_from_string(const char *s) {
        for (size_t i = 0; i < ELEMENTSOF(level_names); i++)
                if (level_names[i] && streq(level_names[i], s))
                        return (int) i;
        if (streq(s, "error"))
                return LOG_ERR;
        if (streq(s, "warn"))
                return LOG_WARNING;
        return -EINVAL;
}

const char *log_level_to_string(int level) {
        if (level < 0 || (size_t) level >= ELEMENTSOF(level_names))
                return NULL;
        return level_names[level];
}

static void log_to_stderr(int level, const LogContext *ctx, const char *msg) {
        char *line = NULL;
        int n;

        if (ctx && ctx->module)
                n = asprintf(&line, "sunkd[%s]: %s%s\n", ctx->module,
                             level <= LOG_ERR       ? "error: "
                             : level == LOG_WARNING ? "warning: "
                                                    : "",
                             msg);
        else
                n = asprintf(&line, "sunkd: %s%s\n",
                             level <= LOG_ERR       ? "error: "
                             : level == LOG_WARNING ? "warning: "
                                                    : "",
                             msg);
        if (n < 0)
                return;
        /* One write per line: lines from worker threads must not interleave. */
        (void) !write(STDERR_FILENO, line, (size_t) n);
        free(line);
}

static __attribute__((format(printf, 3, 4))) bool add_field(char **fields, size_t *n, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&fields[*n], fmt, ap);
        va_end(ap);
        if (r < 0) {
                fields[*n] = NULL;
                return false;
        }
        (*n)++;
        return true;
}

/* Fields that do not apply (no job, no error) are left out rather than sent
 * empty, so "journalctl SUNKD_JOB=x" and "ERRNO=" mean what they say. */
static void log_to_journal(int level, int error, const LogContext *ctx, const char *file, int line,
                           const char *func, const char *msg) {
        const char *module = ctx && ctx->module ? ctx->module : NULL;
        char *fields[8 + LOG_FIELDS_MAX];
        struct iovec iov[8 + LOG_FIELDS_MAX];
        size_t n = 0;
        bool ok;

        ok = add_field(fields, &n, "MESSAGE=%s%s%s", module ?: "", module ? ": " : "", msg) &&
             add_field(fields, &n, "PRIORITY=%d", level) && add_field(fields, &n, "CODE_FILE=%s", file) &&
             add_field(fields, &n, "CODE_LINE=%d", line) && add_field(fields, &n, "CODE_FUNC=%s", func) &&
             add_field(fields, &n, "SUNKD_MODULE=%s", module ?: "core") &&
             (!ctx || !ctx->job || add_field(fields, &n, "SUNKD_JOB=%s", ctx->job)) &&
             (!error || add_field(fields, &n, "ERRNO=%d", error));
        for (size_t i = 0; ok && ctx && ctx->fields && ctx->fields[i] && i < LOG_FIELDS_MAX; i++)
                ok = add_field(fields, &n, "%s", ctx->fields[i]);
        if (ok) {
                for (size_t i = 0; i < n; i++)
                        iov[i] = (struct iovec){ .iov_base = fields[i], .iov_len = strlen(fields[i]) };
                (void) sd_journal_sendv(iov, (int) n);
        } else
                log_to_stderr(level, ctx, msg);
        for (size_t i = 0; i < n; i++)
                free(fields[i]);
}

bool log_field_is_valid(const char *field) {
        const char *eq = field ? strchr(field, '=') : NULL;

        if (!eq || strncmp(field, "SUNKD_", 6) != 0 || eq == field + 6)
                return false;
        for (const char *p = field + 6; p < eq; p++)
                if (!((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
                        return false;
        /* The core's own fields say who logged: a module cannot set them. */
        return strncmp(field, "SUNKD_MODULE=", 13) != 0 && strncmp(field, "SUNKD_JOB=", 10) != 0 &&
               !strchr(eq + 1, '\n');
}

/* Per thread: a check on the loop captures its own errors, never a worker's. */
static _Thread_local char **capture;

void log_capture_begin(char **first_error) {
        capture = first_error;
}

void log_capture_end(void) {
        capture = NULL;
}

int log_internalv(int level, int error, const LogContext *ctx, const char *file, int line, const char *func,
                  const char *format, va_list ap) {
        char *msg = NULL;

        if (error < 0)
                error = -error;
        if (level > log_get_max_level())
                return -error;

        /* %m prints the error we were handed, not whatever errno is now. */
        int saved = errno;
        errno = error;
        if (vasprintf(&msg, format, ap) < 0)
                msg = NULL;
        errno = saved;
        if (!msg)
                return -error;
        if (capture && !*capture && level <= LOG_ERR)
                *capture = strdup(msg);

        /* A message of several lines (every error of a config file) is
         * written as several, each with its prefix. */
        for (char *l = msg, *nl; l; l = nl) {
                nl = strchr(l, '\n');
                if (nl)
                        *nl++ = '\0';
                if (!*l && l != msg) /* the newline a message ends with */
                        continue;
                if (use_journal)
                        log_to_journal(level, error, ctx, file, line, func, l);
                else
                        log_to_stderr(level, ctx, l);
        }
        free(msg);
        return -error;
}

int log_internal(int level, int error, const LogContext *ctx, const char *file, int line, const char *func,
                 const char *format, ...) {
        va_list ap;
        int r;

        va_start(ap, format);
        r = log_internalv(level, error, ctx, file, line, func, format, ap);
        va_end(ap);
        return r;
}
