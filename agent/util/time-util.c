/* Human durations and sizes for config files and status output. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util/macro.h"
#include "util/time-util.h"

typedef struct Unit {
        const char *suffix;
        uint64_t factor;
} Unit;

/* Longer suffixes first so "ms" is not read as "m". */
static const Unit duration_units[] = {
        { "usec", 1 },
        { "us", 1 },
        { "msec", USEC_PER_MSEC },
        { "ms", USEC_PER_MSEC },
        { "sec", USEC_PER_SEC },
        { "s", USEC_PER_SEC },
        { "min", 60 * USEC_PER_SEC },
        { "m", 60 * USEC_PER_SEC },
        { "h", 3600 * USEC_PER_SEC },
        { "d", 86400 * USEC_PER_SEC },
        { "w", 7 * 86400 * USEC_PER_SEC },
};

static const Unit size_units[] = {
        { "B", 1 },
        { "K", UINT64_C(1) << 10 },
        { "KiB", UINT64_C(1) << 10 },
        { "M", UINT64_C(1) << 20 },
        { "MiB", UINT64_C(1) << 20 },
        { "G", UINT64_C(1) << 30 },
        { "GiB", UINT64_C(1) << 30 },
        { "T", UINT64_C(1) << 40 },
        { "TiB", UINT64_C(1) << 40 },
};

static const Unit *match_unit(const Unit *units, size_t n, const char *s, size_t *ret_len) {
        const Unit *best = NULL;
        size_t best_len = 0;

        for (size_t i = 0; i < n; i++) {
                size_t l = strlen(units[i].suffix);
                if (l > best_len && strncmp(s, units[i].suffix, l) == 0 && !isalpha((unsigned char) s[l])) {
                        best = &units[i];
                        best_len = l;
                }
        }
        *ret_len = best_len;
        return best;
}

/* Digits after a decimal point as frac / 10^k, keeping the first six
 * (microseconds of a second); later digits must be digits but are dropped. */
static int parse_fraction(const char **s, uint64_t *ret_frac, uint64_t *ret_div) {
        uint64_t frac = 0, div = 1;

        if (!isdigit((unsigned char) **s))
                return -EINVAL;
        for (; isdigit((unsigned char) **s); (*s)++)
                if (div < 1000000) {
                        frac = frac * 10 + (uint64_t) (**s - '0');
                        div *= 10;
                }
        *ret_frac = frac;
        *ret_div = div;
        return 0;
}

/* Parses "<number><unit>..." sums; a bare number takes @default_factor.
 * With @fraction each number may have a decimal part ("2.5", "1.5h"). */
static int parse_units(const char *s, const Unit *units, size_t n, uint64_t default_factor, bool multi,
                       bool fraction, uint64_t *ret) {
        uint64_t total = 0;
        bool any = false;

        if (!s)
                return -EINVAL;
        while (isspace((unsigned char) *s))
                s++;
        if (*s == '\0')
                return -EINVAL;

        while (*s) {
                uint64_t v = 0, factor, frac = 0, frac_div = 1;
                const Unit *u;
                size_t ulen;

                if (!isdigit((unsigned char) *s))
                        return -EINVAL;
                while (isdigit((unsigned char) *s)) {
                        if (__builtin_mul_overflow(v, 10, &v) ||
                            __builtin_add_overflow(v, (uint64_t) (*s - '0'), &v))
                                return -ERANGE;
                        s++;
                }
                if (fraction && *s == '.') {
                        s++;
                        if (parse_fraction(&s, &frac, &frac_div) < 0)
                                return -EINVAL;
                }
                while (*s == ' ')
                        s++;
                u = match_unit(units, n, s, &ulen);
                if (u) {
                        factor = u->factor;
                        s += ulen;
                } else if (*s == '\0' && !any) {
                        factor = default_factor;
                } else
                        return -EINVAL;
                if (__builtin_mul_overflow(v, factor, &v) || __builtin_add_overflow(total, v, &total))
                        return -ERANGE;
                /* frac < frac_div <= 10^6 and factor < 2^43 (a week in usec): no overflow. */
                if (__builtin_add_overflow(total, frac * factor / frac_div, &total))
                        return -ERANGE;
                any = true;
                while (*s == ' ')
                        s++;
                if (*s && !multi)
                        return -EINVAL;
        }
        *ret = total;
        return 0;
}

int parse_duration(const char *s, uint64_t *ret) {
        return parse_units(s, duration_units, ELEMENTSOF(duration_units), USEC_PER_SEC, true, false, ret);
}

int parse_duration_fraction(const char *s, uint64_t *ret) {
        return parse_units(s, duration_units, ELEMENTSOF(duration_units), USEC_PER_SEC, true, true, ret);
}

int parse_size(const char *s, uint64_t *ret) {
        return parse_units(s, size_units, ELEMENTSOF(size_units), 1, false, false, ret);
}

char *format_duration(char *buf, size_t len, uint64_t usec) {
        static const Unit parts[] = {
                { "d", 86400 * USEC_PER_SEC }, { "h", 3600 * USEC_PER_SEC }, { "m", 60 * USEC_PER_SEC },
                { "s", USEC_PER_SEC },         { "ms", USEC_PER_MSEC },      { "us", 1 },
        };
        size_t off = 0;

        if (usec == 0) {
                snprintf(buf, len, "0");
                return buf;
        }
        if (usec == USEC_INFINITY) {
                snprintf(buf, len, "infinity");
                return buf;
        }
        for (size_t i = 0; i < ELEMENTSOF(parts) && usec > 0 && off < len; i++) {
                uint64_t n = usec / parts[i].factor;
                if (n == 0)
                        continue;
                int k = snprintf(buf + off, len - off, "%" PRIu64 "%s", n, parts[i].suffix);
                if (k < 0)
                        break;
                off += (size_t) k;
                usec -= n * parts[i].factor;
        }
        return buf;
}

uint64_t now_usec(clockid_t clock) {
        struct timespec ts;

        if (clock_gettime(clock, &ts) < 0)
                return 0;
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / NSEC_PER_USEC;
}
