/* Durations, sizes and clocks.  Non-logging. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/**
 * parse_duration() - "30s", "15m", "1h", "2d", "500ms", "1h30m", "0".
 * A bare number is seconds.  Negative values, unknown units and overflow are
 * -EINVAL / -ERANGE.  Return: 0 and microseconds in *ret.
 */
int parse_duration(const char *s, uint64_t *ret);
/**
 * parse_duration_fraction() - parse_duration() where each number may carry a
 * decimal fraction: "2.5" (seconds), "0.5ms", "1.5h", "1h 0.5m".  Digits past
 * the sixth after the point are accepted and ignored.  For files written for
 * other tools (nsscache.conf's timeouts are float seconds).
 */
int parse_duration_fraction(const char *s, uint64_t *ret);

/** parse_size() - "64K", "1M", "2G", "512" (bytes; K = 1024). */
int parse_size(const char *s, uint64_t *ret);

/** format_duration() - shortest exact form ("1h30m", "250ms", "0"). */
char *format_duration(char *buf, size_t len, uint64_t usec);
#define FORMAT_DURATION_MAX 64

uint64_t now_usec(clockid_t clock);
