/* Path watches on one inotify fd.
 *
 * inotify watches inodes, and what a module cares about is a path: a file
 * replaced by rename is a new inode, and in a Kubernetes Secret volume the
 * file `x` is a symlink to `..data/x` where `..data` is itself a symlink that
 * is swapped atomically to a new timestamped directory.  So each watch
 * resolves its path component by component, as realpath() would, and
 * records an "interest" (directory watch, name) for the last component and
 * for every symlink met on the way; an event naming one of those, or on one
 * of those directories itself, marks the watch.  Relative and absolute link
 * targets, chains of links and links in the middle of the path all work the
 * same way.  A component that does not exist yet is waited for in the
 * directory that would hold it.
 *
 * Bursts are coalesced with a short timer armed by the first event and not
 * pushed back by later ones: a writer's open-write-close-rename, or the
 * symlink dance of a volume update, span several inotify reads, and a defer
 * source would fire between them; a fixed delay sees the whole update and
 * still bounds the latency under a continuous stream of writes.  When the
 * timer fires, each marked watch resolves its path again (the set of
 * directories may have changed: a new `..2026_...` directory, a created
 * parent) and only then is called, so a change made after the re-resolve
 * raises a new event and a new callback.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "util/cleanup.h"
#include "util/macro.h"
#include "watch.h"

#define WATCH_DIR_MASK                                                                                      \
        (IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB |                 \
         IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_EXCL_UNLINK)

typedef struct Interest {
        int wd;
        char *name;
} Interest;

/* inotify hands out one wd per directory inode; watches share it. */
typedef struct DirRef {
        int wd;
        unsigned refs;
} DirRef;

struct sunkd_watch {
        WatchSet *set;
        Watch *prev, *next;
        char *path;
        WatchFn cb;
        void *userdata;
        const void *owner;
        Interest *interests;
        size_t n_interests;
        bool pending; /* an event arrived since the last callback */
        bool deliver; /* to be called by the running timer dispatch */
};

struct WatchSet {
        sd_event *event;
        int fd;
        sd_event_source *io, *timer;
        Watch *watches;
        unsigned n_watches;
        DirRef *dirs;
        size_t n_dirs;
};

static int dir_ref(WatchSet *s, const char *dir) {
        DirRef *d;
        int wd;

        wd = inotify_add_watch(s->fd, isempty(dir) ? "/" : dir, WATCH_DIR_MASK);
        if (wd < 0)
                return -errno;
        for (size_t i = 0; i < s->n_dirs; i++)
                if (s->dirs[i].wd == wd) {
                        s->dirs[i].refs++;
                        return wd;
                }
        d = reallocarray(s->dirs, s->n_dirs + 1, sizeof(*d));
        if (!d) {
                inotify_rm_watch(s->fd, wd);
                return -ENOMEM;
        }
        s->dirs = d;
        s->dirs[s->n_dirs++] = (DirRef){ .wd = wd, .refs = 1 };
        return wd;
}

static void dir_unref(WatchSet *s, int wd) {
        for (size_t i = 0; i < s->n_dirs; i++) {
                if (s->dirs[i].wd != wd)
                        continue;
                if (--s->dirs[i].refs > 0)
                        return;
                /* Fails harmlessly when the directory is gone (IN_IGNORED came). */
                (void) inotify_rm_watch(s->fd, wd);
                s->dirs[i] = s->dirs[--s->n_dirs];
                return;
        }
}

static void interests_free(WatchSet *s, Interest *v, size_t n) {
        for (size_t i = 0; i < n; i++) {
                dir_unref(s, v[i].wd);
                free(v[i].name);
        }
        free(v);
}

typedef struct Resolve {
        WatchSet *set;
        Interest *v;
        size_t n;
} Resolve;

static int resolve_add(Resolve *rs, const char *dir, const char *name, size_t name_len) {
        Interest *v;
        char *copy;
        int wd;

        copy = strndup(name, name_len);
        if (!copy)
                return -ENOMEM;
        v = reallocarray(rs->v, rs->n + 1, sizeof(*v));
        if (!v) {
                free(copy);
                return -ENOMEM;
        }
        rs->v = v;
        wd = dir_ref(rs->set, dir);
        if (wd < 0) {
                free(copy);
                return wd;
        }
        rs->v[rs->n++] = (Interest){ .wd = wd, .name = copy };
        return 0;
}

/* Replaces @rest with "<target>/<rest after the link>"; an absolute target
 * restarts @cur at the root. */
static int resolve_follow(const char *link, char *cur, char **rest, const char *after) {
        char target[PATH_MAX];
        ssize_t n;
        char *r;

        n = readlink(link, target, sizeof(target));
        if (n < 0)
                return -errno;
        if ((size_t) n >= sizeof(target) || n == 0)
                return -ENAMETOOLONG;
        if (asprintf(&r, "%.*s/%s", (int) n, target, after) < 0)
                return -ENOMEM;
        if (strlen(r) >= PATH_MAX) {
                free(r);
                return -ENAMETOOLONG;
        }
        if (target[0] == '/')
                cur[0] = '\0';
        free(*rest);
        *rest = r;
        return 0;
}

/* Walks @path like realpath(), adding an interest for each symlink met and
 * for where the walk ends: the last component, or the first missing one. */
static int resolve_walk(Resolve *rs, const char *path) {
        _cleanup_free_ char *rest = strdup(path);
        char cur[PATH_MAX] = "", next[PATH_MAX];
        unsigned links = 0;
        const char *p;
        struct stat st;
        int r;

        if (!rest)
                return -ENOMEM;
        p = rest;
        for (;;) {
                size_t len, n_cur;
                bool last;

                p += strspn(p, "/");
                if (*p == '\0')
                        return 0;
                len = strcspn(p, "/");
                last = p[len + strspn(p + len, "/")] == '\0';
                if (len == 1 && p[0] == '.') {
                        p += len;
                        continue;
                }
                if (len == 2 && p[0] == '.' && p[1] == '.') {
                        char *slash = strrchr(cur, '/');
                        if (slash)
                                *slash = '\0';
                        p += len;
                        continue;
                }
                n_cur = strlen(cur);
                if (n_cur + 1 + len >= sizeof(next))
                        return -ENAMETOOLONG;
                memcpy(next, cur, n_cur);
                next[n_cur] = '/';
                memcpy(next + n_cur + 1, p, len);
                next[n_cur + 1 + len] = '\0';

                if (lstat(next, &st) < 0) {
                        if (errno != ENOENT && errno != ENOTDIR)
                                return -errno;
                        return resolve_add(rs, cur, p, len); /* wait for it to appear */
                }
                if (S_ISLNK(st.st_mode)) {
                        if (++links > WATCH_SYMLINKS_MAX)
                                return -ELOOP;
                        r = resolve_add(rs, cur, p, len);
                        if (r < 0)
                                return r;
                        r = resolve_follow(next, cur, &rest, p + len);
                        if (r < 0)
                                return r;
                        p = rest;
                        continue;
                }
                if (last || !S_ISDIR(st.st_mode))
                        return resolve_add(rs, cur, p, len);
                memcpy(cur, next, strlen(next) + 1);
                p += len;
        }
}

/* Replaces @w's interests with those of its path as it is now; on failure
 * the old ones stay. */
static int watch_resolve(Watch *w) {
        Resolve rs = { .set = w->set };
        int r;

        r = resolve_walk(&rs, w->path);
        if (r >= 0 && rs.n == 0)
                r = -EINVAL; /* "/" or only dots */
        if (r < 0) {
                interests_free(w->set, rs.v, rs.n);
                return r;
        }
        interests_free(w->set, w->interests, w->n_interests);
        w->interests = rs.v;
        w->n_interests = rs.n;
        return 0;
}

static void watch_mark(Watch *w) {
        WatchSet *s = w->set;
        int enabled = SD_EVENT_OFF;

        w->pending = true;
        (void) sd_event_source_get_enabled(s->timer, &enabled);
        if (enabled != SD_EVENT_OFF)
                return;
        if (sd_event_source_set_time_relative(s->timer, WATCH_DEBOUNCE_USEC) < 0 ||
            sd_event_source_set_enabled(s->timer, SD_EVENT_ONESHOT) < 0)
                log_warning("Failed to arm the file watch timer; changes to '%s' are reported late.",
                            w->path);
}

static bool interest_matches(const Interest *in, const struct inotify_event *ev) {
        /* No name: the event is about the directory itself (deleted, moved). */
        return in->wd == ev->wd && (ev->len == 0 || streq(in->name, ev->name));
}

static void watch_set_event(WatchSet *s, const struct inotify_event *ev) {
        for (Watch *w = s->watches; w; w = w->next) {
                if (w->pending)
                        continue;
                if (ev->mask & IN_Q_OVERFLOW) {
                        watch_mark(w);
                        continue;
                }
                for (size_t i = 0; i < w->n_interests; i++)
                        if (interest_matches(&w->interests[i], ev)) {
                                watch_mark(w);
                                break;
                        }
        }
}

static int on_inotify(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        WatchSet *s = userdata;
        union {
                struct inotify_event ev;
                char buf[16 * 1024];
        } u;

        /* A bounded number of reads per dispatch; the source stays ready. */
        for (unsigned n_reads = 0; n_reads < 16; n_reads++) {
                ssize_t n = read(fd, u.buf, sizeof(u.buf));

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno != EAGAIN)
                                log_warning_errno(-errno, "Failed to read file watch events: %m");
                        return 0;
                }
                for (char *p = u.buf; p < u.buf + n;) {
                        const struct inotify_event *ev = (const struct inotify_event *) p;
                        watch_set_event(s, ev);
                        p += sizeof(*ev) + ev->len;
                }
        }
        return 0;
}

static Watch *watch_next_to_deliver(WatchSet *s) {
        for (Watch *w = s->watches; w; w = w->next)
                if (w->deliver)
                        return w;
        return NULL;
}

static int on_timer(sd_event_source *src, uint64_t usec, void *userdata) {
        WatchSet *s = userdata;
        Watch *w;
        int r;

        for (w = s->watches; w; w = w->next) {
                w->deliver = w->pending;
                w->pending = false;
        }
        /* Rescanned after each callback: it may remove any watch, itself included. */
        while ((w = watch_next_to_deliver(s))) {
                w->deliver = false;
                r = watch_resolve(w);
                if (r < 0)
                        log_warning_errno(r, "Failed to follow '%s' again, changes may be missed: %m",
                                          w->path);
                w->cb(w->userdata, w->path);
        }
        return 0;
}

int watch_set_new(sd_event *event, WatchSet **ret) {
        WatchSet *s;
        int r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->event = sd_event_ref(event);
        s->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (s->fd < 0) {
                r = -errno;
                watch_set_free(s);
                return r;
        }
        r = sd_event_add_io(event, &s->io, s->fd, EPOLLIN, on_inotify, s);
        if (r >= 0)
                /* Accuracy 0 would mean sd-event's default of 250ms. */
                r = sd_event_add_time_relative(event, &s->timer, CLOCK_MONOTONIC, WATCH_DEBOUNCE_USEC,
                                               SUNKD_USEC_PER_MSEC, on_timer, s);
        if (r >= 0)
                r = sd_event_source_set_enabled(s->timer, SD_EVENT_OFF);
        if (r < 0) {
                watch_set_free(s);
                return r;
        }
        *ret = s;
        return 0;
}

WatchSet *watch_set_free(WatchSet *s) {
        if (!s)
                return NULL;
        while (s->watches)
                watch_remove(s->watches);
        sd_event_source_disable_unref(s->io);
        sd_event_source_disable_unref(s->timer);
        if (s->fd >= 0)
                close(s->fd);
        free(s->dirs);
        sd_event_unref(s->event);
        free(s);
        return NULL;
}

int watch_add(WatchSet *s, const char *path, WatchFn cb, void *userdata, const void *owner, Watch **ret) {
        Watch *w;
        int r;

        if (!s || !path || !cb || path[0] != '/' || strlen(path) >= PATH_MAX)
                return -EINVAL;
        if (s->n_watches >= WATCH_MAX)
                return -E2BIG;
        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        *w = (Watch){ .set = s, .cb = cb, .userdata = userdata, .owner = owner, .path = strdup(path) };
        if (!w->path) {
                free(w);
                return -ENOMEM;
        }
        r = watch_resolve(w);
        if (r < 0) {
                free(w->path);
                free(w);
                return r;
        }
        w->next = s->watches;
        if (w->next)
                w->next->prev = w;
        s->watches = w;
        s->n_watches++;
        if (ret)
                *ret = w;
        return 0;
}

void watch_remove(Watch *w) {
        WatchSet *s;

        if (!w)
                return;
        s = w->set;
        if (w->prev)
                w->prev->next = w->next;
        else
                s->watches = w->next;
        if (w->next)
                w->next->prev = w->prev;
        s->n_watches--;
        interests_free(s, w->interests, w->n_interests);
        free(w->path);
        free(w);
}

void watch_remove_owner(WatchSet *s, const void *owner) {
        Watch *next;

        if (!s)
                return;
        for (Watch *w = s->watches; w; w = next) {
                next = w->next;
                if (w->owner == owner)
                        watch_remove(w);
        }
}

unsigned watch_count(WatchSet *s, const void *owner) {
        unsigned n = 0;

        for (Watch *w = s ? s->watches : NULL; w; w = w->next)
                n += w->owner == owner;
        return n;
}
