/* What the built-in checks share: paths under the root they read through,
 * bounded reads of the node's /proc and /sys files, a line reader for tables
 * of any length (a mountinfo with thousands of mounts), the numbers they
 * parse and print, and the results every check gives the same way (an input
 * that is missing is UNKNOWN).  Nothing here keeps state between calls or
 * takes a lock beyond malloc's, so a check may run on a worker thread or in
 * a child forked from the threaded daemon.  Non-logging. */
#pragma once

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/macro.h"

#include "health-check.h"

#define CHECK_PATH_MAX 4096
/* The longest line the line reader returns: longer ones are skipped and
 * counted.  A mountinfo line is about 100 bytes; a mount point of PATH_MAX
 * bytes, every byte escaped as \ooo, fits. */
#define CHECK_LINE_MAX (64 * 1024)
/* The most a check reads of one input before calling it malformed. */
#define CHECK_INPUT_MAX (64 * 1024 * 1024)

/** check_path() - @root (NULL or "" as "/") and the absolute @path joined.  -ENAMETOOLONG. */
int check_path(char buf[static CHECK_PATH_MAX], const HealthEnv *env, const char *path);

/** check_path_normalise() - drop repeated and trailing slashes and "." components, in place. */
void check_path_normalise(char *path);

/**
 * check_input_error() - the result for an input file @path that could not be
 * read (@r, a negative errno): UNKNOWN, "<type>-input-missing" for a file
 * that is not there, "<type>-input-bad" for any other reason.  Return: 0.
 */
int check_input_error(HealthResult *ret, const char *type, const char *path, int r);

/** check_input_bad() - UNKNOWN "<type>-input-bad" with a detail of @fmt.  Return: 0. */
int check_input_bad(HealthResult *ret, const char *type, const char *fmt, ...) _printf_(3, 4);

/**
 * check_read() - the whole of the small file <root>@path, at most @max bytes,
 * NUL-terminated.  On failure the result is set by check_input_error() and
 * *ret is NULL.  Return: 0 either way, or -ENOMEM.
 */
int check_read(const HealthEnv *env, const char *type, const char *path, size_t max, char **ret,
               size_t *ret_len, HealthResult *result);

/** check_invalid() - "key '@key': ..." in *ret_error.  Return: -EINVAL, or -ENOMEM. */
int check_invalid(char **ret_error, const char *key, const char *fmt, ...) _printf_(3, 4);

/**
 * check_regcomp() - @pattern, a POSIX extended regular expression, compiled
 * into @re with REG_EXTENDED | @flags; one it cannot compile is refused with
 * "key '@key': ..." in *ret_error.  Only after 0 is @re to be regfree()d.
 * Return: 0, -EINVAL or -ENOMEM.
 */
int check_regcomp(regex_t *re, const char *key, const char *pattern, int flags, char **ret_error);

/** check_parse_id() - a decimal uid or gid below (uint32_t) -1, which is no id.  Return: 0 or -EINVAL. */
int check_parse_id(const char *s, uint32_t *ret);

/**
 * check_lookup_id() - the uid of the user (@group false) or the gid of the
 * group @name, looked up in NSS now: only where a config is read, never in
 * `run` (which may be a child forked from the threaded daemon).
 * Return: 1 with *ret set, 0 for no such name, -ENOMEM, or the lookup's
 * -errno.
 */
int check_lookup_id(const char *name, bool group, uint32_t *ret);

/* Reads a file line by line through one buffer of CHECK_LINE_MAX bytes. */
typedef struct CheckLines {
        int fd;
        char *buf;
        size_t start, end;
        uint64_t total;    /* bytes read */
        unsigned overlong; /* lines skipped for being longer than CHECK_LINE_MAX */
        bool eof, skipping;
} CheckLines;

#define CHECK_LINES_INIT                                                                                    \
        { .fd = -1 }

/** check_lines_open() - open @path, a regular file (never a FIFO waited on).  Return: 0 or -errno. */
int check_lines_open(CheckLines *l, const char *path);
/**
 * check_lines_next() - the next line, its newline replaced by a NUL; @ret_len
 * counts the bytes before it (a NUL byte inside makes strlen() shorter).
 * Return: 1 with a line, 0 at the end, -EFBIG past CHECK_INPUT_MAX, -errno.
 */
int check_lines_next(CheckLines *l, char **ret_line, size_t *ret_len);
void check_lines_close(CheckLines *l);

/**
 * check_parse_milli() - a decimal "12", "2.5" or "0.125" in thousandths
 * (further digits dropped), at most 10^12.  *ret_end, when not NULL, is set
 * to the first byte after the number, which must otherwise end @s.
 * Return: 0 or -EINVAL.
 */
int check_parse_milli(const char *s, const char **ret_end, uint64_t *ret);

/** check_format_milli() - "2.5", "40.125", "3". */
const char *check_format_milli(uint64_t milli, char buf[static 32]);

/** check_format_size() - @bytes as "512B", "1.5K", "7.3G", in powers of 1024 as the config writes them. */
const char *check_format_size(uint64_t bytes, char buf[static 32]);

struct statvfs;

/**
 * check_statvfs() - statvfs() of <root>@path.  A path that is not there is
 * UNKNOWN ("<type>-input-missing": the mount check says why); any other
 * error (EIO, ESTALE of a dead NFS server) is the fault itself: FAIL,
 * "<type>-error".  Return: 1 with *st filled, 0 with the result set.
 */
int check_statvfs(const HealthEnv *env, const char *type, const char *path, struct statvfs *st,
                  HealthResult *ret);
