/* What the node-hardware checks (cpu, dmi, edac, mce, ethernet, ib) share:
 * one small /proc or /sys value read whole, its one trailing newline
 * dropped, and strict decimal numbers.  A value that is not what the
 * kernel writes (a NUL byte, too long, not a number) is the type's
 * UNKNOWN "<type>-input-bad", never a guess.  Non-logging. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "check-util.h"

/* The most a sysfs attribute holds: one page. */
#define CHECK_SYSFS_MAX 4096

/**
 * check_sysfs_read() - <root>@rel, at most @max bytes, in *ret without its
 * trailing newline.  Return: 1 with *ret set; 0 with *ret NULL and the
 * result set (UNKNOWN "<type>-input-missing" or "-input-bad", a NUL byte
 * included); -ENOMEM (result set).
 */
int check_sysfs_read(const HealthEnv *env, const char *type, const char *rel, size_t max, char **ret,
                     HealthResult *result);

/**
 * check_sysfs_value() - like check_sysfs_read() but quiet: 0 with *ret
 * set, or -errno (-EBADMSG for a NUL byte) and no result.  For what is
 * looked at only if it is there (a DIMM's label).
 */
int check_sysfs_value(const HealthEnv *env, const char *rel, size_t max, char **ret);

/** check_parse_u64() - all of @s a decimal of at most 18 digits.  Return: 0 or -EINVAL. */
int check_parse_u64(const char *s, uint64_t *ret);

/** check_sysfs_name_ok() - @s a directory entry name sysfs could hold: 1 to @max - 1 bytes, no '/', not "."
 * or "..". */
bool check_sysfs_name_ok(const char *s, size_t max);

/**
 * check_genconf_text_ok() - @s fit to be pinned in a baseline: valid UTF-8
 * without control characters (C0, DEL, and the C1 ones U+0080..U+009F that
 * a YAML stream may not hold raw).  A value with them is left out.
 */
bool check_genconf_text_ok(const char *s);
