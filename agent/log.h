/* Logging: journald with structured fields when stderr is the journal,
 * "sunkd[module]: message" lines on stderr otherwise (s6-log, terminals).
 *
 * The log_*_errno() forms return -abs(error) so a handler can log and return
 * in one statement, and make "%m" print that error.  Log once, where an error
 * is handled; parsers and util/ never log above debug.
 */
#pragma once

#include <stdarg.h>
#include <syslog.h>

#include "util/macro.h"

typedef struct LogContext {
        const char *module; /* SUNKD_MODULE=, shown as sunkd[module] */
        const char *job;    /* SUNKD_JOB= */
        /* More journal fields, "SUNKD_<NAME>=value", NULL-terminated; the
         * stderr line carries the message only. */
        const char *const *fields;
} LogContext;

#define LOG_FIELDS_MAX 8

/** log_field_is_valid() - "SUNKD_[A-Z0-9_]+=..." other than the core's own fields. */
bool log_field_is_valid(const char *field);

/** log_open() - choose the sink: journal if $JOURNAL_STREAM names our stderr. */
void log_open(void);
void log_set_max_level(int level);
int log_get_max_level(void);
/** log_level_from_string() - "err", "warning", "notice", "info", "debug". */
int log_level_from_string(const char *s);
const char *log_level_to_string(int level);

/**
 * log_capture_begin() - until log_capture_end(), copy the first message of
 * LOG_ERR or worse logged on this thread into *@first_error (malloc'd, the
 * caller frees; left NULL if none), besides logging it: what a module's check
 * said, for the reply to `sunkctl reload`.
 */
void log_capture_begin(char **first_error);
void log_capture_end(void);

int log_internalv(int level, int error, const LogContext *ctx, const char *file, int line, const char *func,
                  const char *format, va_list ap) _printf_(7, 0);
int log_internal(int level, int error, const LogContext *ctx, const char *file, int line, const char *func,
                 const char *format, ...) _printf_(7, 8);

#define log_ctx_full_errno(ctx, level, error, ...)                                                          \
        log_internal((level), (error), (ctx), __FILE__, __LINE__, __func__, __VA_ARGS__)
#define log_full_errno(level, error, ...) log_ctx_full_errno(NULL, level, error, __VA_ARGS__)

#define log_error_errno(error, ...) log_full_errno(LOG_ERR, error, __VA_ARGS__)
#define log_warning_errno(error, ...) log_full_errno(LOG_WARNING, error, __VA_ARGS__)
#define log_notice_errno(error, ...) log_full_errno(LOG_NOTICE, error, __VA_ARGS__)
#define log_info_errno(error, ...) log_full_errno(LOG_INFO, error, __VA_ARGS__)
#define log_debug_errno(error, ...) log_full_errno(LOG_DEBUG, error, __VA_ARGS__)
#define log_error(...) log_full_errno(LOG_ERR, 0, __VA_ARGS__)
#define log_warning(...) log_full_errno(LOG_WARNING, 0, __VA_ARGS__)
#define log_notice(...) log_full_errno(LOG_NOTICE, 0, __VA_ARGS__)
#define log_info(...) log_full_errno(LOG_INFO, 0, __VA_ARGS__)
#define log_debug(...) log_full_errno(LOG_DEBUG, 0, __VA_ARGS__)
#define log_oom() log_error_errno(-ENOMEM, "Out of memory.")
