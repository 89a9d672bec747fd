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
#include "prolog-select.h"

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
                free(s[i].why);
        }
        free(s);
        return NULL;
}

const PrologScript *prolog_scripts_refused(const PrologScript *s, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (s[i].error < 0)
                        return &s[i];
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
                return errmsg_set(ret_error, -EPERM,
                                  "refusing %s script '%s': not a regular file (mode %06o)", kind, s->path,
                                  (unsigned) st.st_mode);
        if (!(st.st_mode & 0111))
                return errmsg_set(ret_error, -EACCES, "refusing %s script '%s': not executable (mode %04o)",
                                  kind, s->path, (unsigned) (st.st_mode & 07777));
        if (st.st_mode & (S_IWGRP | S_IWOTH))
                return errmsg_set(
                        ret_error, -EPERM,
                        "refusing %s script '%s': group- or world-writable (owner uid %u, mode %04o)", kind,
                        s->path, (unsigned) st.st_uid, (unsigned) (st.st_mode & 07777));
        if (!uid_trusted(st.st_uid))
                return errmsg_set(ret_error, -EPERM,
                                  "refusing %s script '%s': owned by uid %u, not root (mode %04o)", kind,
                                  s->path, (unsigned) st.st_uid, (unsigned) (st.st_mode & 07777));
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

/* What @name in @dfd is, through its symlinks: 1 a regular executable
 * file; 0 a directory (passed over quietly: never a script); 2 anything
 * else, with why it is not run in *@ret_why (malloc'd); -errno.  Gone
 * meanwhile counts as a directory: nothing to say. */
static int candidate(int dfd, const char *name, char **ret_why) {
        struct stat st;
        int r = 2;

        if (fstatat(dfd, name, &st, 0) < 0) {
                if (errno == ENOENT && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
                        *ret_why = strdup("a dangling symlink");
                else if (errno == ELOOP)
                        *ret_why = strdup("a symlink loop");
                else
                        return errno == ENOENT ? 0 : negative_errno();
        } else if (S_ISDIR(st.st_mode))
                return 0;
        else if (!S_ISREG(st.st_mode))
                r = asprintf(ret_why, "not a regular file (mode %06o)", (unsigned) st.st_mode) < 0 ? -ENOMEM
                                                                                                   : 2;
        else if (!(st.st_mode & 0111))
                r = asprintf(ret_why, "not executable (mode %04o)", (unsigned) (st.st_mode & 07777)) < 0
                            ? -ENOMEM
                            : 2;
        else
                return 1;
        return r < 0 || !*ret_why ? -ENOMEM : r;
}

/* Checks the entry's path with its symlinks and their targets, and resolves
 * it once: 1 with *@ret filled (refused when a check failed: ret->error and
 * ret->why say so), 0 when it went away, or -errno. */
static int resolve(const char *dir, const char *name, const char *shown, PrologKind kind,
                   PrologScript *ret) {
        _cleanup_free_ char *path = NULL, *what = NULL, *resolved = NULL, *error = NULL;
        int r;

        r = script_what(kind, &what);
        if (r < 0)
                return r;
        if (asprintf(&path, "%s/%s", dir, name) < 0)
                return -ENOMEM;
        *ret = (PrologScript){ .kind = kind, .name = strdup(shown) };
        if (!ret->name)
                return -ENOMEM;
        /* the links on the way decide what runs: only root may set them */
        r = trusted_path_check(path, what, 0, &error);
        if (r == -ENOENT)
                return 0;
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                ret->error = r;
                ret->why = TAKE_PTR(error);
                return ret->why ? 1 : -ENOMEM;
        }
        /* checked through its links: what it resolves to was checked, and
         * prolog_script_open() checks it again before it runs */
        resolved = realpath(path, NULL);
        if (!resolved && errno == ENOENT)
                return 0;
        if (!resolved) {
                ret->error = negative_errno();
                return asprintf(&ret->why, "%s: %m", path) < 0 ? -ENOMEM : 1;
        }
        ret->path = TAKE_PTR(resolved);
        return 1;
}

typedef struct Entry {
        char *name;
        char *why;      /* not run, and why; NULL for a candidate */
        bool partition; /* of the partition's directory, not the common one */
} Entry;

static void entries_free(Entry *e, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(e[i].name);
                free(e[i].why);
        }
        free(e);
}

static int entry_add(Entry **e, size_t *n, size_t *cap, const char *name, char *why, bool partition) {
        if (*n == *cap) {
                Entry *p = reallocarray(*e, *cap = *cap ? *cap * 2 : 16, sizeof(Entry));

                if (!p) {
                        free(why);
                        return -ENOMEM;
                }
                *e = p;
        }
        (*e)[*n] = (Entry){ .name = strdup(name), .why = why, .partition = partition };
        if (!(*e)[*n].name) {
                free(why);
                return -ENOMEM;
        }
        (*n)++;
        return 0;
}

/* The entry @name by @sel's name rule: 0 passed over quietly, 1 listed,
 * with why it does not run in *@why (replaced by the name rule's words
 * when that does not select it), or -errno. */
static int entry_judge(int dfd, const PrologSelect *sel, const char *name, char **why) {
        char *rule_why = NULL;
        int r, k;

        if (!sel || sel->names == PROLOG_NAMES_SUNKD) {
                if (prolog_name_skipped(name))
                        return 0;
                r = candidate(dfd, name, why);
                return r < 0 ? r : r > 0;
        }
        r = candidate(dfd, name, why);
        if (r <= 0)
                return r;
        k = prolog_select_name(sel, name, &rule_why);
        if (k < 0)
                return k;
        if (k == 2) {
                free(*why);
                *why = rule_why;
        }
        return 1;
}

/* The entries worth a look, unsorted, added to *@ret: candidates, and what
 * is not run with why (names passed over on purpose and directories not
 * among them). */
static int read_entries(int dfd, const PrologSelect *sel, bool partition, Entry **ret, size_t *ret_n,
                        size_t *cap) {
        _cleanup_closedir_ DIR *d = NULL;
        Entry *e = *ret;
        size_t n = *ret_n;
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
                char *why = NULL;

                r = entry_judge(dfd, sel, de->d_name, &why);
                if (r < 0) {
                        free(why);
                        break;
                }
                r = r == 0 ? 0 : entry_add(&e, &n, cap, de->d_name, why, partition);
                if (r < 0)
                        break;
        }
        if (r == 0 && errno != 0)
                r = negative_errno();
        *ret = e;
        *ret_n = n;
        return r;
}

/* By name in @sel's order; one name twice (a common script and the
 * partition's that replaces it): the common one first. */
static int cmp_entries(const void *a, const void *b, void *sel) {
        const Entry *x = a, *y = b;
        int c = prolog_select_cmp(sel, x->name, y->name);

        return c != 0 ? c : (int) x->partition - (int) y->partition;
}

/* A common entry whose name the partition's directory has too does not
 * run: the partition's replaces it, whatever that one is. */
static int entries_replace(Entry *e, size_t n, const char *partition) {
        for (size_t i = 0; i < n; i++) {
                if (!e[i].partition)
                        continue;
                for (size_t k = 0; k < n; k++) {
                        if (e[k].partition || !streq(e[k].name, e[i].name))
                                continue;
                        free(e[k].why);
                        if (asprintf(&e[k].why, "replaced by %s/%s", partition, e[i].name) < 0) {
                                e[k].why = NULL;
                                return -ENOMEM;
                        }
                }
        }
        return 0;
}

/* The directory itself, open in *@ret_fd, or -errno (-ENOENT: missing). */
static int open_dir(const char *dir, PrologKind kind, int *ret_fd, char **ret_error) {
        _cleanup_free_ char *what = NULL;
        struct stat st;
        int r, fd;

        if (asprintf(&what, "%s directory", prolog_kind_name(kind)) < 0)
                return -ENOMEM;
        r = trusted_path_check(dir, what, 0, ret_error);
        if (r == -ENOENT)
                return errmsg_set(ret_error, r, "%s '%s' does not exist", what, dir);
        if (r < 0)
                return r;
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 && errno == ENOTDIR && stat(dir, &st) == 0)
                return errmsg_set(ret_error, -ENOTDIR,
                                  "refusing %s '%s': not a directory (owner uid %u, mode %04o)", what, dir,
                                  (unsigned) st.st_uid, (unsigned) (st.st_mode & 07777));
        if (fd < 0)
                return errmsg_set(ret_error, negative_errno(), "%s: %m", dir);
        *ret_fd = fd;
        return 0;
}

/* One sorted entry as a script: resolved and checked, or not run and why.
 * 1 when it is one, 0 when it went away. */
static int entry_script(const char *dir, const char *partition, PrologKind kind, Entry *e,
                        PrologScript *ret) {
        _cleanup_free_ char *subdir = NULL, *shown = NULL;

        if (e->partition) {
                if (asprintf(&subdir, "%s/%s", dir, partition) < 0)
                        return subdir = NULL, -ENOMEM;
                if (asprintf(&shown, "%s/%s", partition, e->name) < 0)
                        return shown = NULL, -ENOMEM;
        }
        if (!e->why)
                return resolve(subdir ?: dir, e->name, shown ?: e->name, kind, ret);
        *ret = (PrologScript){ .kind = kind,
                               .name = shown ? TAKE_PTR(shown) : TAKE_PTR(e->name),
                               .why = TAKE_PTR(e->why) };
        return 1;
}

/* The partition's directory, added to the entries; none (0) when the name
 * is not a plain one or the directory is not there. */
static int read_partition(const char *dir, PrologKind kind, const PrologSelect *sel, const char *partition,
                          Entry **e, size_t *n, size_t *cap, char **ret_error) {
        _cleanup_free_ char *path = NULL, *error = NULL;
        _cleanup_close_ int pfd = -1;
        int r;

        if (!prolog_select_partition_valid(partition))
                return 0;
        if (asprintf(&path, "%s/%s", dir, partition) < 0)
                return path = NULL, -ENOMEM;
        r = open_dir(path, kind, &pfd, &error);
        if (r == -ENOENT || r == -ENOTDIR)
                return 0;
        if (r < 0) {
                if (ret_error && !*ret_error)
                        *ret_error = TAKE_PTR(error);
                return r;
        }
        r = read_entries(pfd, sel, true, e, n, cap);
        if (r < 0)
                return errmsg_set(ret_error, r, "%s: %s", path, strerror(-r));
        return entries_replace(*e, *n, partition);
}

int prolog_dir_list(const char *dir, PrologKind kind, PrologScript **ret, size_t *ret_n, char **ret_error) {
        return prolog_dir_select(dir, kind, NULL, NULL, ret, ret_n, ret_error);
}

int prolog_dir_select(const char *dir, PrologKind kind, const PrologSelect *sel, const char *partition,
                      PrologScript **ret, size_t *ret_n, char **ret_error) {
        _cleanup_close_ int dfd = -1;
        PrologScript *scripts = NULL;
        Entry *entries = NULL;
        size_t n_entries = 0, cap = 0, n = 0;
        int r;

        *ret = NULL;
        *ret_n = 0;
        r = open_dir(dir, kind, &dfd, ret_error);
        if (r < 0)
                return r;
        r = read_entries(dfd, sel, false, &entries, &n_entries, &cap);
        if (r < 0) {
                entries_free(entries, n_entries);
                return errmsg_set(ret_error, r, "%s: %s", dir, strerror(-r));
        }
        r = partition ? read_partition(dir, kind, sel, partition, &entries, &n_entries, &cap, ret_error) : 0;
        if (r < 0) {
                entries_free(entries, n_entries);
                return r;
        }
        if (n_entries > 0) {
                qsort_r(entries, n_entries, sizeof(Entry), cmp_entries, (void *) sel);
                scripts = calloc(n_entries, sizeof(PrologScript));
                if (!scripts)
                        r = -ENOMEM;
        }
        for (size_t i = 0; r >= 0 && i < n_entries; i++) {
                r = entry_script(dir, partition, kind, &entries[i], &scripts[n]);
                if (r > 0)
                        n++;
                else if (r == 0) { /* gone meanwhile: resolve() may have named it */
                        free(scripts[n].name);
                        scripts[n] = (PrologScript){};
                }
        }
        entries_free(entries, n_entries);
        if (r < 0) {
                prolog_scripts_free(scripts, n + 1);
                return r;
        }
        if (n == 0)
                scripts = mfree(scripts);
        *ret = scripts;
        *ret_n = n;
        return 0;
}
