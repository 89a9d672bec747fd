/* Listing a script directory: the name filter, the order, and the checks of
 * trusted_path_check() on each symlink chain and on what it resolves to. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/errloc.h"
#include "util/macro.h"
#include "util/trusted-path.h"
#include "prolog-dir.h"

static const char *const kind_names[_PROLOG_KIND_MAX] = {
        [PROLOG_KIND_PROLOG] = "prolog",
        [PROLOG_KIND_EPILOG] = "epilog",
};

const char *prolog_kind_name(PrologKind kind) {
        return kind >= 0 && kind < _PROLOG_KIND_MAX ? kind_names[kind] : "script";
}

static bool endswith(const char *s, const char *suffix) {
        size_t n = strlen(s), m = strlen(suffix);

        return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

bool prolog_name_skipped(const char *name) {
        return name[0] == '.' || endswith(name, "~") || endswith(name, ".disabled") ||
               strstr(name, ".dpkg-") || strstr(name, ".rpm");
}

PrologScript *prolog_scripts_free(PrologScript *s, size_t n) {
        for (size_t i = 0; s && i < n; i++) {
                free(s[i].name);
                free(s[i].path);
        }
        free(s);
        return NULL;
}

static int script_what(PrologKind kind, char **ret) {
        return asprintf(ret, "%s script", prolog_kind_name(kind)) < 0 ? -ENOMEM : 0;
}

static bool uid_trusted(uid_t uid) {
        return uid == 0 || uid == geteuid();
}

/* The open inode itself, after trusted_path_check() passed its path: what
 * is run is what was checked. */
static int check_inode(int fd, const PrologScript *s, char **ret_error) {
        const char *kind = prolog_kind_name(s->kind);
        struct stat st;

        if (fstat(fd, &st) < 0)
                return errmsg_set(ret_error, negative_errno(), "%s script '%s': %m", kind, s->path);
        if (!S_ISREG(st.st_mode))
                return errmsg_set(ret_error, -EPERM, "refusing %s script '%s': not a regular file (mode %06o)",
                                  kind, s->path, (unsigned) st.st_mode);
        if (!(st.st_mode & 0111))
                return errmsg_set(ret_error, -EACCES, "refusing %s script '%s': not executable (mode %04o)", kind,
                                  s->path, (unsigned) (st.st_mode & 07777));
        if (st.st_mode & (S_IWGRP | S_IWOTH))
                return errmsg_set(ret_error, -EPERM,
                                  "refusing %s script '%s': group- or world-writable (owner uid %u, mode %04o)",
                                  kind, s->path, (unsigned) st.st_uid, (unsigned) (st.st_mode & 07777));
        if (!uid_trusted(st.st_uid))
                return errmsg_set(ret_error, -EPERM, "refusing %s script '%s': owned by uid %u, not root (mode %04o)",
                                  kind, s->path, (unsigned) st.st_uid, (unsigned) (st.st_mode & 07777));
        return 0;
}

int prolog_script_open(const PrologScript *s, char **ret_error) {
        _cleanup_free_ char *what = NULL;
        _cleanup_close_ int fd = -1;
        int r;

        r = script_what(s->kind, &what);
        if (r < 0)
                return r;
        r = trusted_path_check(s->path, what, 0, ret_error);
        if (r < 0)
                return r;
        /* s->path has no symlinks: one now is a change, not the listed file */
        fd = open(s->path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return errmsg_set(ret_error, negative_errno(), "%s: %m", s->path);
        r = check_inode(fd, s, ret_error);
        return r < 0 ? r : TAKE_FD(fd);
}

/* Whether @name in @dfd is, through its symlinks, a regular executable file:
 * 1, 0 to pass it over (anything else, or gone meanwhile), or -errno. */
static int is_candidate(int dfd, const char *name) {
        struct stat st;

        if (fstatat(dfd, name, &st, 0) < 0)
                return errno == ENOENT || errno == ELOOP ? 0 : negative_errno(); /* dangling */
        return S_ISREG(st.st_mode) && (st.st_mode & 0111);
}

/* Checks the entry's path with its symlinks and their targets, and resolves
 * it once: 1 with *@ret filled, 0 when it went away, or -errno. */
static int resolve(const char *dir, const char *name, PrologKind kind, PrologScript *ret, char **ret_error) {
        _cleanup_free_ char *path = NULL, *what = NULL, *resolved = NULL;
        int r;

        r = script_what(kind, &what);
        if (r < 0)
                return r;
        if (asprintf(&path, "%s/%s", dir, name) < 0)
                return -ENOMEM;
        /* the links on the way decide what runs: only root may set them */
        r = trusted_path_check(path, what, 0, ret_error);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        /* checked through its links: what it resolves to was checked, and
         * prolog_script_open() checks it again before it runs */
        resolved = realpath(path, NULL);
        if (!resolved)
                return errno == ENOENT ? 0 : errmsg_set(ret_error, negative_errno(), "%s: %m", path);
        ret->name = strdup(name);
        if (!ret->name)
                return -ENOMEM;
        ret->kind = kind;
        ret->path = TAKE_PTR(resolved);
        return 1;
}

/* The names worth a look, unsorted, in *@ret. */
static int read_names(int dfd, char ***ret, size_t *ret_n) {
        _cleanup_closedir_ DIR *d = NULL;
        char **names = NULL;
        size_t n = 0, cap = 0;
        struct dirent *de;
        int r = 0, fd;

        fd = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return negative_errno();
        d = fdopendir(fd);
        if (!d) {
                r = negative_errno();
                close(fd);
                return r;
        }
        for (errno = 0; (de = readdir(d)); errno = 0) {
                if (prolog_name_skipped(de->d_name))
                        continue;
                r = is_candidate(dfd, de->d_name);
                if (r <= 0) {
                        if (r < 0)
                                break;
                        continue;
                }
                r = 0;
                if (n == cap) {
                        char **p = reallocarray(names, cap = cap ? cap * 2 : 16, sizeof(char *));

                        if (!p) {
                                r = -ENOMEM;
                                break;
                        }
                        names = p;
                }
                names[n] = strdup(de->d_name);
                if (!names[n]) {
                        r = -ENOMEM;
                        break;
                }
                n++;
        }
        if (r == 0 && errno != 0)
                r = negative_errno();
        if (r < 0) {
                while (n > 0)
                        free(names[--n]);
                free(names);
                return r;
        }
        *ret = names;
        *ret_n = n;
        return 0;
}

static int cmp_names(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The directory itself: 1 with it open in *@ret_fd, 0 when missing, or -errno. */
static int open_dir(const char *dir, PrologKind kind, int *ret_fd, char **ret_error) {
        _cleanup_free_ char *what = NULL;
        struct stat st;
        int r, fd;

        if (asprintf(&what, "%s directory", prolog_kind_name(kind)) < 0)
                return -ENOMEM;
        r = trusted_path_check(dir, what, 0, ret_error);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 && errno == ENOTDIR && stat(dir, &st) == 0)
                return errmsg_set(ret_error, -ENOTDIR, "refusing %s '%s': not a directory (owner uid %u, mode %04o)",
                                  what, dir, (unsigned) st.st_uid, (unsigned) (st.st_mode & 07777));
        if (fd < 0)
                return errmsg_set(ret_error, negative_errno(), "%s: %m", dir);
        *ret_fd = fd;
        return 1;
}

static void names_free(char **names, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
}

int prolog_dir_list(const char *dir, PrologKind kind, PrologScript **ret, size_t *ret_n, char **ret_error) {
        _cleanup_close_ int dfd = -1;
        PrologScript *scripts = NULL;
        char **names = NULL;
        size_t n_names = 0, n = 0;
        int r;

        *ret = NULL;
        *ret_n = 0;
        r = open_dir(dir, kind, &dfd, ret_error);
        if (r <= 0)
                return r;
        r = read_names(dfd, &names, &n_names);
        if (r < 0)
                return errmsg_set(ret_error, r, "%s: %s", dir, strerror(-r));
        if (n_names > 0) {
                qsort(names, n_names, sizeof(char *), cmp_names);
                scripts = calloc(n_names, sizeof(PrologScript));
                if (!scripts)
                        r = -ENOMEM;
        }
        for (size_t i = 0; r >= 0 && i < n_names; i++) {
                r = resolve(dir, names[i], kind, &scripts[n], ret_error);
                if (r > 0)
                        n++;
        }
        names_free(names, n_names);
        if (r < 0) {
                prolog_scripts_free(scripts, n);
                return r;
        }
        if (n == 0)
                scripts = mfree(scripts);
        *ret = scripts;
        *ret_n = n;
        return 0;
}
