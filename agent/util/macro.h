/* Small helpers shared by every file of the agent. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define CLAMP(x, lo, hi) MIN(MAX((x), (lo)), (hi))

/* The in-tree names of module.h's SUNKD_USEC_PER_SEC and kin (host-api.c
 * checks that they agree); a module built outside the tree uses those. */
#define USEC_PER_SEC UINT64_C(1000000)
#define USEC_PER_MSEC UINT64_C(1000)
#define NSEC_PER_USEC UINT64_C(1000)
#define USEC_INFINITY UINT64_MAX

/* Digits needed for any integer type, with sign and NUL. */
#define DECIMAL_STR_MAX(type)                                                                               \
        (2 + (sizeof(type) <= 1 ? 3 : sizeof(type) <= 2 ? 5 : sizeof(type) <= 4 ? 10 : 20))

static inline bool streq_ptr(const char *a, const char *b) {
        if (!a || !b)
                return a == b;
        return strcmp(a, b) == 0;
}
#define streq(a, b) (strcmp((a), (b)) == 0)

static inline bool isempty(const char *s) {
        return !s || !*s;
}

/* Turns a libc-style -1/errno return into a negative errno. */
static inline int negative_errno(void) {
        return errno > 0 ? -errno : -EIO;
}
#define RET_NERRNO(expr)                                                                                    \
        ({                                                                                                  \
                int _r_ = (expr);                                                                           \
                _r_ < 0 ? negative_errno() : _r_;                                                           \
        })

#define XSTRINGIFY(x) #x
#define STRINGIFY(x) XSTRINGIFY(x)

#define _unused_ __attribute__((unused))
/* Exempts a large scratch buffer that is always written before it is read
 * from -ftrivial-auto-var-init=zero, which would clear it on every call. */
#if defined(__has_attribute) && __has_attribute(uninitialized)
#define _uninitialized_ __attribute__((uninitialized))
#else
#define _uninitialized_
#endif
#define _printf_(a, b) __attribute__((format(printf, a, b)))
