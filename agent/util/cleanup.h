/* Scope-bound cleanup and ownership transfer.
 *
 * Every heap object has one owner; a local that owns one is declared with a
 * _cleanup_ attribute and handed on with TAKE_PTR()/TAKE_FD(), so each early
 * return frees what it must and nothing else.  Destructors used here accept
 * NULL (and -1 for fds).
 */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))

static inline void freep(void *p) {
        free(*(void **) p);
}
#define _cleanup_free_ _cleanup_(freep)

static inline void *mfree(void *p) {
        free(p);
        return NULL;
}

static inline void closep(int *fd) {
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
        }
}
#define _cleanup_close_ _cleanup_(closep)

static inline void fclosep(FILE **f) {
        if (*f)
                fclose(*f);
}
#define _cleanup_fclose_ _cleanup_(fclosep)

static inline void closedirp(DIR **d) {
        if (*d)
                closedir(*d);
}
#define _cleanup_closedir_ _cleanup_(closedirp)

/* Wipes a NUL-terminated secret before freeing it. */
static inline void erase_and_free(char *s) {
        if (s) {
                explicit_bzero(s, strlen(s));
                free(s);
        }
}
static inline void erase_and_freep(char **s) {
        erase_and_free(*s);
}
#define _cleanup_erase_ _cleanup_(erase_and_freep)

#define TAKE_PTR(p)                                                                                         \
        ({                                                                                                  \
                __typeof__(p) _p_ = (p);                                                                    \
                (p) = NULL;                                                                                 \
                _p_;                                                                                        \
        })
#define TAKE_FD(fd)                                                                                         \
        ({                                                                                                  \
                int _fd_ = (fd);                                                                            \
                (fd) = -1;                                                                                  \
                _fd_;                                                                                       \
        })

/* Define foo_freep() for a destructor `Foo *foo_free(Foo *)`. */
#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)                                                             \
        static inline void func##p(type *p) {                                                               \
                if (*p)                                                                                     \
                        *p = func(*p);                                                                      \
        }
