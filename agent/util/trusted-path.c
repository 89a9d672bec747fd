/* The walk behind trusted_path_check(): one directory at a time, from "/",
 * as the kernel would resolve the path, so that what is checked is what
 * open() and rename() will reach. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/errloc.h"
#include "util/macro.h"
#include "util/trusted-path.h"

#define LINKS_MAX 40 /* the kernel's limit */

typedef struct Walk {
        const char *path, *what;
        unsigned flags;
        char *dir; /* the directory reached: canonical, no symlinks */
        struct stat dir_st;
        char *todo; /* what is left to resolve, relative to dir */
        size_t pos; /* ... from this offset */
        unsigned links;
} Walk;

static bool uid_trusted(uid_t uid) {
        return uid == 0 || uid == geteuid();
}

static bool others_write(const struct stat *st) {
        return st->st_mode & (S_IWGRP | S_IWOTH);
}

/* "'ITEM' is " when the fault is not @path itself, so the message says where. */
static char *subject(const Walk *w, const char *item) {
        char *s;

        if (streq(item, w->path))
                return strdup("");
        return asprintf(&s, "'%s' is ", item) < 0 ? NULL : s;
}

static int refuse_owner(const Walk *w, const char *item, const struct stat *st, char **ret_error) {
        _cleanup_free_ char *who = subject(w, item);
        char also[sizeof(" or uid ") + DECIMAL_STR_MAX(uid_t)] = "";

        if (!who)
                return -ENOMEM;
        if (geteuid() != 0)
                snprintf(also, sizeof(also), " or uid %u", (unsigned) geteuid());
        if (!w->what)
                return errmsg_set(ret_error, -EPERM, "%sowned by uid %u, not root%s (mode %04o)", who,
                                  (unsigned) st->st_uid, also, (unsigned) (st->st_mode & 07777));
        return errmsg_set(ret_error, -EPERM, "refusing %s '%s': %sowned by uid %u, not root%s (mode %04o)",
                          w->what, w->path, who, (unsigned) st->st_uid, also,
                          (unsigned) (st->st_mode & 07777));
}

static int refuse_writable(const Walk *w, const char *item, const struct stat *st, char **ret_error) {
        _cleanup_free_ char *who = subject(w, item);

        if (!who)
                return -ENOMEM;
        if (!w->what)
                return errmsg_set(ret_error, -EPERM, "%sgroup- or world-writable (owner uid %u, mode %04o)",
                                  who, (unsigned) st->st_uid, (unsigned) (st->st_mode & 07777));
        return errmsg_set(ret_error, -EPERM,
                          "refusing %s '%s': %sgroup- or world-writable (owner uid %u, mode %04o)", w->what,
                          w->path, who, (unsigned) st->st_uid, (unsigned) (st->st_mode & 07777));
}

static int lookup_error(const Walk *w, const char *item, int r, char **ret_error) {
        if (streq(item, w->path))
                return errmsg_set(ret_error, r, "%s: %s", w->path, strerror(-r));
        return errmsg_set(ret_error, r, "%s: %s: %s", w->path, item, strerror(-r));
}

/* A directory passed through may be sticky and writable by others; one
 * that is read or written in (@strict) may not. */
static int check_dir(const Walk *w, const char *dir, const struct stat *st, bool strict, char **ret_error) {
        if (others_write(st) && (strict || !(st->st_mode & S_ISVTX)))
                return refuse_writable(w, dir, st, ret_error);
        if (!uid_trusted(st->st_uid))
                return refuse_owner(w, dir, st, ret_error);
        return 0;
}

static int check_file(const Walk *w, const char *file, const struct stat *st, char **ret_error) {
        if (others_write(st))
                return refuse_writable(w, file, st, ret_error);
        if (!uid_trusted(st->st_uid))
                return refuse_owner(w, file, st, ret_error);
        return 0;
}

/* The next component of what is left in *ret: 1, or 0 at the end. */
static int next_component(Walk *w, char **ret) {
        size_t n;

        w->pos += strspn(w->todo + w->pos, "/");
        n = strcspn(w->todo + w->pos, "/");
        if (n == 0)
                return 0;
        w->pos += n;
        *ret = strndup(w->todo + w->pos - n, n);
        return *ret ? 1 : -ENOMEM;
}

static bool at_end(const Walk *w) {
        return w->todo[w->pos + strspn(w->todo + w->pos, "/")] == '\0';
}

/* Makes @dir (taken) the directory reached. */
static int enter(Walk *w, char *dir, char **ret_error) {
        _cleanup_free_ char *d = dir;

        if (!d)
                return -ENOMEM;
        if (lstat(d, &w->dir_st) < 0)
                return lookup_error(w, d, negative_errno(), ret_error);
        free(w->dir);
        w->dir = TAKE_PTR(d);
        return 0;
}

static int go_up(Walk *w, char **ret_error) {
        char *slash = strrchr(w->dir, '/');

        return enter(w, slash == w->dir ? strdup("/") : strndup(w->dir, (size_t) (slash - w->dir)),
                     ret_error);
}

/* Resolution goes on in the link's target, from "/" if it is absolute. */
static int follow(Walk *w, const char *link, char **ret_error) {
        _cleanup_free_ char *target = NULL;
        char *todo;
        ssize_t n;

        if (++w->links > LINKS_MAX)
                return lookup_error(w, link, -ELOOP, ret_error);
        target = malloc(PATH_MAX);
        if (!target)
                return -ENOMEM;
        n = readlink(link, target, PATH_MAX - 1);
        if (n < 0)
                return lookup_error(w, link, negative_errno(), ret_error);
        target[n] = '\0';
        if (asprintf(&todo, "%s/%s", target, w->todo + w->pos) < 0)
                return -ENOMEM;
        free(w->todo);
        w->todo = todo;
        w->pos = 0;
        if (strlen(todo) >= PATH_MAX)
                return lookup_error(w, link, -ENAMETOOLONG, ret_error);
        return target[0] == '/' ? enter(w, strdup("/"), ret_error) : 0;
}

/* One step from w->dir to @name: 1 to go on, 0 when the path is found
 * good, or a negative errno. */
static int step(Walk *w, const char *name, char **ret_error) {
        bool last = at_end(w), written = w->flags & TRUSTED_PATH_WRITTEN;
        char *next;
        struct stat st;
        int r;

        if (asprintf(&next, "%s%s%s", w->dir, streq(w->dir, "/") ? "" : "/", name) < 0)
                return -ENOMEM;
        _cleanup_free_ char *item = next;
        if (lstat(item, &st) < 0) {
                r = negative_errno();
                /* sunkd creates the rest itself, in a directory only it can write */
                if (r == -ENOENT && written)
                        return check_dir(w, w->dir, &w->dir_st, true, ret_error);
                return lookup_error(w, item, r, ret_error);
        }
        if (others_write(&w->dir_st) && !uid_trusted(st.st_uid))
                return refuse_owner(w, item, &st, ret_error);
        if (last && written && !S_ISDIR(st.st_mode)) {
                /* replaced by a rename in w->dir */
                r = check_dir(w, w->dir, &w->dir_st, true, ret_error);
                if (r < 0 || !S_ISLNK(st.st_mode))
                        return r;
        }
        if (S_ISLNK(st.st_mode))
                return follow(w, item, ret_error) ?: 1;
        if (S_ISDIR(st.st_mode)) {
                r = check_dir(w, item, &st, false, ret_error);
                if (r < 0)
                        return r;
                free(w->dir);
                w->dir = TAKE_PTR(item);
                w->dir_st = st;
                return 1;
        }
        if (!last)
                return lookup_error(w, item, -ENOTDIR, ret_error);
        return check_file(w, item, &st, ret_error);
}

static int walk(Walk *w, char **ret_error) {
        int r;

        r = enter(w, strdup("/"), ret_error);
        if (r < 0)
                return r;
        r = check_dir(w, w->dir, &w->dir_st, false, ret_error);
        if (r < 0)
                return r;
        for (;;) {
                _cleanup_free_ char *name = NULL;

                r = next_component(w, &name);
                if (r <= 0)
                        break;
                if (streq(name, "."))
                        continue;
                if (streq(name, "..")) {
                        r = go_up(w, ret_error);
                        if (r < 0)
                                return r;
                        continue;
                }
                r = step(w, name, ret_error);
                if (r <= 0)
                        return r;
        }
        if (r < 0)
                return r;
        /* @path is a directory, read or written in. */
        return check_dir(w, w->dir, &w->dir_st, true, ret_error);
}

int trusted_path_check(const char *path, const char *what, unsigned flags, char **ret_error) {
        Walk w = { .path = path, .what = what, .flags = flags };
        int r;

        if (isempty(path))
                return errmsg_set(ret_error, -EINVAL, "an empty path");
        if (strlen(path) >= PATH_MAX)
                return errmsg_set(ret_error, -ENAMETOOLONG, "%s: %s", path, strerror(ENAMETOOLONG));
        if (path[0] == '/')
                w.todo = strdup(path);
        else {
                /* from the working directory, whose own path is walked too */
                _cleanup_free_ char *cwd = get_current_dir_name();

                if (!cwd)
                        return errmsg_set(ret_error, negative_errno(), "%s: %m", path);
                if (asprintf(&w.todo, "%s/%s", cwd, path) < 0)
                        w.todo = NULL;
        }
        if (!w.todo)
                return -ENOMEM;
        r = walk(&w, ret_error);
        free(w.todo);
        free(w.dir);
        return r;
}
