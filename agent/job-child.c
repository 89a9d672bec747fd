/* Forked job work with its result on a pipe.
 *
 * The child starts a new session (so a kill reaches whatever it started),
 * dies with the daemon (PR_SET_PDEATHSIG), unblocks signals, keeps only
 * stdout/stderr and the result pipe, drops to the job's uid/gid with no
 * supplementary groups, runs the work and writes {"r":..,"result":..} once.
 * The parent reads the pipe on the loop, up to JOB_CHILD_RESULT_MAX, and
 * reaps the child through an sd-event child source; the result is parsed
 * only after the child has exited, so a half-written result is never seen.
 *
 * fork() copies a threaded process: only the forking thread exists in the
 * child, and glibc makes malloc safe there.  Work run this way must not use
 * a library whose lock a worker thread might hold at the moment of the fork.
 * (AddressSanitizer's allocator is not made safe so before LLVM 18's atfork
 * handler: under GCC 12's, a child forked while a worker allocates may hang
 * in malloc, and ends at its job's timeout like any stuck child.)
 *
 * Kept children (JobChildPool): fork() copies the daemon's page tables, so
 * its cost grows with the daemon (about 0.3 ms at 10 MB, 2 ms at 110 MB),
 * while a check's work is often tens of microseconds.  A kept child
 * is forked once and then runs one piece of work after another, each asked
 * for with the addresses of the work and its argument, which are valid
 * there because the child is a copy of the daemon made after the job was
 * added (JobChildPool's generation).  It is killed like a fresh child, and
 * a killed one is never reused.  It lives at most KEPT_MAX_AGE: the pages it
 * shares with the daemon are copied as the daemon writes them, and that
 * copy must not grow without bound.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job-child.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "util/time-util.h"

typedef struct Kept Kept;

struct JobChild {
        pid_t pid;
        int fd;
        Kept *kept; /* the kept child the work runs in, or NULL: a child of its own */
        sd_event_source *child_source, *io_source;
        char *buf;
        size_t len;
        bool overflow;
        JobChildDoneFn done;
        void *userdata;
};

pid_t job_child_pid(JobChild *c) {
        return c->pid;
}

static int child_drop(uid_t uid, gid_t gid) {
        if (uid == 0)
                return 0;
        if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
                return -errno;
        return 0;
}

/* A session of its own (a kill of the group reaches what it starts), death
 * with the daemon, signals as a new process has them, and no fd of the
 * daemon's but stdout, stderr and @fd. */
static void child_setup(int fd) {
        sigset_t ss;

        (void) setsid();
        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        sigemptyset(&ss);
        (void) sigprocmask(SIG_SETMASK, &ss, NULL);
        (void) signal(SIGTERM, SIG_DFL);
        (void) close_range(3, (unsigned) fd - 1, 0);
        (void) close_range((unsigned) fd + 1, ~0U, 0);
}

/* {"r":..,"result":..} as text, put with the object; NULL on OOM. */
static json_object *child_answer(int r, json_object *result, const char **ret_text) {
        json_object *o = json_object_new_object();

        if (!o) {
                json_object_put(result);
                return NULL;
        }
        json_object_object_add(o, "r", json_object_new_int(r));
        if (result)
                json_object_object_add(o, "result", result);
        *ret_text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
        return o;
}

static __attribute__((noreturn)) void child_main(int fd, JobChildWorkFn work, void *userdata, uid_t uid,
                                                 gid_t gid) {
        json_object *result = NULL;
        const char *text = NULL;
        int r;

        child_setup(fd);
        r = child_drop(uid, gid);
        if (r >= 0)
                r = work(userdata, &result);
        if (!child_answer(r, result, &text))
                _exit(EXIT_FAILURE);
        _exit(fileio_write_all(fd, text, strlen(text)) < 0 ? EXIT_FAILURE : EXIT_SUCCESS);
}

/* Returns false once nothing more is to be read now. */
static bool job_child_read(JobChild *c) {
        char scratch[4096];

        for (;;) {
                size_t room = JOB_CHILD_RESULT_MAX - c->len;
                ssize_t n = read(c->fd, c->overflow || room == 0 ? scratch : c->buf + c->len,
                                 c->overflow || room == 0 ? sizeof(scratch) : room);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return false;
                if (c->overflow || room == 0)
                        c->overflow = true;
                else
                        c->len += (size_t) n;
        }
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        JobChild *c = userdata;

        (void) job_child_read(c);
        if (revents & (EPOLLHUP | EPOLLERR))
                (void) sd_event_source_set_enabled(s, SD_EVENT_OFF);
        return 0;
}

/* The answer in c->buf: the work's return, its result in *ret_result. */
static int job_child_answer(JobChild *c, json_object **ret_result, const char **ret_why) {
        _cleanup_json_ json_object *o = NULL;
        json_object *r, *result;

        if (c->overflow) {
                *ret_why = "the child's result exceeds the size limit";
                return -EMSGSIZE;
        }
        c->buf[c->len] = '\0';
        o = c->len > 0 ? json_tokener_parse(c->buf) : NULL;
        if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "r", &r) ||
            !json_object_is_type(r, json_type_int)) {
                *ret_why = "the child exited without a result";
                return -EPROTO;
        }
        if (json_object_object_get_ex(o, "result", &result))
                *ret_result = json_object_get(result);
        return json_object_get_int(r) > 0 ? 0 : json_object_get_int(r);
}

static int job_child_parse(JobChild *c, const siginfo_t *si, json_object **ret_result,
                           const char **ret_why) {
        if (si->si_code != CLD_EXITED) {
                *ret_why = "the child was killed by a signal";
                return -EINTR;
        }
        return job_child_answer(c, ret_result, ret_why);
}

static int on_exit_child(sd_event_source *s, const siginfo_t *si, void *userdata) {
        JobChild *c = userdata;
        json_object *result = NULL;
        const char *why = NULL;
        int r;

        /* The child has exited: whatever it wrote is in the pipe now. */
        (void) job_child_read(c);
        c->pid = 0;
        r = job_child_parse(c, si, &result, &why);
        c->done(c->userdata, r, result, why);
        return 0;
}

static JobChild *job_child_new(JobChildDoneFn done, void *userdata) {
        JobChild *c = calloc(1, sizeof(*c));

        if (!c || !(c->buf = malloc(JOB_CHILD_RESULT_MAX + 1))) {
                free(c);
                return NULL;
        }
        c->fd = -EBADF;
        c->done = done;
        c->userdata = userdata;
        return c;
}

int job_child_start(sd_event *event, JobChildWorkFn work, void *work_userdata, uid_t uid, gid_t gid,
                    JobChildDoneFn done, void *userdata, JobChild **ret) {
        int fds[2];
        JobChild *c;
        int r;

        c = job_child_new(done, userdata);
        if (!c)
                return -ENOMEM;
        if (pipe2(fds, O_CLOEXEC) < 0) {
                r = -errno;
                job_child_free(c);
                return r;
        }
        c->pid = fork();
        if (c->pid < 0) {
                r = -errno;
                c->pid = 0;
                close(fds[0]);
                close(fds[1]);
                job_child_free(c);
                return r;
        }
        if (c->pid == 0) {
                close(fds[0]);
                child_main(fds[1], work, work_userdata, uid, gid);
        }
        close(fds[1]);
        c->fd = fds[0];
        (void) fcntl(c->fd, F_SETFL, O_NONBLOCK);
        r = sd_event_add_child(event, &c->child_source, c->pid, WEXITED, on_exit_child, c);
        if (r >= 0)
                r = sd_event_add_io(event, &c->io_source, c->fd, EPOLLIN, on_io, c);
        if (r < 0) {
                job_child_free(c);
                return r;
        }
        *ret = c;
        return 0;
}

/* ---- kept children ---- */

/* A kept child lives at most this long, and at most this many wait idle. */
#define KEPT_MAX_AGE_USEC (10 * 60 * USEC_PER_SEC)
#define KEPT_IDLE_MAX 16

/* What the daemon asks of a kept child: addresses in the copy it is. */
typedef struct KeptRequest {
        JobChildWorkFn work;
        void *userdata;
} KeptRequest;

struct Kept {
        JobChildPool *pool;
        pid_t pid;
        int fd;              /* requests out, answers in: a 4-byte length, then the text */
        uint64_t generation; /* the pool's when it was forked */
        uint64_t born_usec;  /* CLOCK_MONOTONIC */
        sd_event_source *child_source, *io_source;
        JobChild *run; /* the work it runs now; NULL while idle */
        unsigned char head[4];
        size_t head_len;
        bool retired; /* asked to end: never given work again */
        Kept *next;
};

struct JobChildPool {
        sd_event *event;
        uint64_t generation;
        Kept *kept;
};

static bool read_exact(int fd, void *buf, size_t len) {
        for (size_t done = 0; done < len;) {
                ssize_t n = read(fd, (char *) buf + done, len - done);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return false;
                done += (size_t) n;
        }
        return true;
}

/* One piece of work after another until the daemon closes its end. */
static __attribute__((noreturn)) void kept_main(int fd) {
        child_setup(fd);
        for (;;) {
                _cleanup_json_ json_object *o = NULL;
                json_object *result = NULL;
                const char *text = NULL;
                KeptRequest q;
                uint32_t len;
                int r;

                if (!read_exact(fd, &q, sizeof(q)))
                        _exit(EXIT_SUCCESS);
                r = q.work(q.userdata, &result);
                o = child_answer(r, result, &text);
                if (!o)
                        _exit(EXIT_FAILURE);
                len = (uint32_t) strlen(text);
                if (fileio_write_all(fd, &len, sizeof(len)) < 0 || fileio_write_all(fd, text, len) < 0)
                        _exit(EXIT_FAILURE);
        }
}

static void kept_unlink(Kept *k) {
        for (Kept **p = &k->pool->kept; *p; p = &(*p)->next)
                if (*p == k) {
                        *p = k->next;
                        break;
                }
        sd_event_source_disable_unref(k->child_source);
        sd_event_source_disable_unref(k->io_source);
        if (k->fd >= 0)
                close(k->fd);
        free(k);
}

/* Ends an idle kept child: killed, and freed once it is reaped. */
static void kept_retire(Kept *k) {
        if (k->retired)
                return;
        k->retired = true;
        (void) kill(k->pid, SIGKILL);
}

/* The run in @k is over: @k goes back to waiting, or is retired. */
static void kept_finish(Kept *k, int r, json_object *result, const char *why) {
        JobChild *c = k->run;
        unsigned idle = 0;

        k->run = NULL;
        k->head_len = 0;
        c->kept = NULL;
        c->pid = 0;
        for (Kept *o = k->pool->kept; o; o = o->next)
                idle += !o->run && !o->retired;
        if (r == -EMSGSIZE || r == -EPROTO || idle > KEPT_IDLE_MAX)
                kept_retire(k);
        c->done(c->userdata, r, result, why);
}

static void kept_answer(Kept *k) {
        json_object *result = NULL;
        const char *why = NULL;
        int r = job_child_answer(k->run, &result, &why);

        kept_finish(k, r, result, why);
}

static uint32_t kept_want(const Kept *k) {
        uint32_t want;

        memcpy(&want, k->head, sizeof(want));
        return want;
}

/* Reads what is there: a 4-byte length, then that many bytes of answer. */
static int on_kept_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Kept *k = userdata;

        (void) revents;
        for (;;) {
                JobChild *c = k->run;
                bool head = k->head_len < sizeof(k->head);
                ssize_t n;

                if (!c) {
                        /* an idle child that talks, or hangs up, is ended */
                        kept_retire(k);
                        (void) sd_event_source_set_enabled(s, SD_EVENT_OFF);
                        return 0;
                }
                if (!head && (kept_want(k) == 0 || kept_want(k) > JOB_CHILD_RESULT_MAX)) {
                        c->overflow = kept_want(k) > JOB_CHILD_RESULT_MAX;
                        kept_answer(k); /* -EMSGSIZE or -EPROTO: the child is retired */
                        return 0;
                }
                n = head ? read(fd, k->head + k->head_len, sizeof(k->head) - k->head_len)
                         : read(fd, c->buf + c->len, kept_want(k) - c->len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return 0; /* EAGAIN: more later; an error: the exit says the rest */
                if (n == 0) {
                        (void) sd_event_source_set_enabled(s, SD_EVENT_OFF);
                        return 0;
                }
                if (head)
                        k->head_len += (size_t) n;
                else
                        c->len += (size_t) n;
                if (k->head_len == sizeof(k->head) && kept_want(k) > 0 && c->len == kept_want(k)) {
                        kept_answer(k);
                        return 0;
                }
        }
}

static int on_kept_exit(sd_event_source *s, const siginfo_t *si, void *userdata) {
        Kept *k = userdata;

        (void) s;
        /* dead: whatever its run's done() starts next must not come here */
        k->retired = true;
        if (k->run)
                (void) on_kept_io(k->io_source, k->fd, EPOLLIN, k);
        if (k->run)
                kept_finish(k, si->si_code == CLD_EXITED ? -EPROTO : -EINTR, NULL,
                            si->si_code == CLD_EXITED ? "the child exited without a result"
                                                      : "the child was killed by a signal");
        kept_unlink(k);
        return 0;
}

static int kept_fork(JobChildPool *p, Kept **ret) {
        _cleanup_free_ Kept *k = calloc(1, sizeof(*k));
        int fds[2], r;

        if (!k)
                return -ENOMEM;
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0)
                return -errno;
        k->pid = fork();
        if (k->pid < 0) {
                r = -errno;
                close(fds[0]);
                close(fds[1]);
                return r;
        }
        if (k->pid == 0) {
                close(fds[0]);
                kept_main(fds[1]);
        }
        close(fds[1]);
        k->fd = fds[0];
        k->pool = p;
        k->generation = p->generation;
        k->born_usec = now_usec(CLOCK_MONOTONIC);
        (void) fcntl(k->fd, F_SETFL, O_NONBLOCK);
        r = sd_event_add_child(p->event, &k->child_source, k->pid, WEXITED, on_kept_exit, k);
        if (r >= 0)
                r = sd_event_add_io(p->event, &k->io_source, k->fd, EPOLLIN, on_kept_io, k);
        if (r < 0) {
                (void) kill(k->pid, SIGKILL);
                (void) waitpid(k->pid, NULL, 0);
                sd_event_source_disable_unref(k->child_source);
                sd_event_source_disable_unref(k->io_source);
                close(k->fd);
                return r;
        }
        k->next = p->kept;
        p->kept = k;
        *ret = TAKE_PTR(k);
        return 0;
}

/* An idle kept child forked at @since or later and young enough; the old
 * ones met on the way are retired. */
static Kept *kept_find(JobChildPool *p, uint64_t since) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        for (Kept *k = p->kept; k; k = k->next) {
                if (k->run || k->retired)
                        continue;
                if (now - k->born_usec >= KEPT_MAX_AGE_USEC)
                        kept_retire(k);
                else if (k->generation >= since)
                        return k;
        }
        return NULL;
}

int job_child_pool_new(sd_event *event, JobChildPool **ret) {
        JobChildPool *p = calloc(1, sizeof(*p));

        if (!p)
                return -ENOMEM;
        p->event = sd_event_ref(event);
        *ret = p;
        return 0;
}

uint64_t job_child_pool_mark(JobChildPool *p) {
        return ++p->generation;
}

void job_child_pool_retire_idle(JobChildPool *p) {
        for (Kept *k = p->kept; k; k = k->next)
                if (!k->run && !k->retired)
                        kept_retire(k);
}

JobChildPool *job_child_pool_free(JobChildPool *p) {
        if (!p)
                return NULL;
        /* runs are freed with their jobs first; what is left waits idle or retired */
        while (p->kept) {
                Kept *k = p->kept;

                (void) kill(k->pid, SIGKILL);
                (void) waitpid(k->pid, NULL, 0);
                if (k->run)
                        k->run->kept = NULL;
                kept_unlink(k);
        }
        sd_event_unref(p->event);
        free(p);
        return NULL;
}

int job_child_start_kept(JobChildPool *p, uint64_t since, JobChildWorkFn work, void *work_userdata,
                         JobChildDoneFn done, void *userdata, JobChild **ret) {
        KeptRequest q = { .work = work, .userdata = work_userdata };
        JobChild *c;
        Kept *k;
        int r;

        c = job_child_new(done, userdata);
        if (!c)
                return -ENOMEM;
        k = kept_find(p, since);
        if (!k) {
                r = kept_fork(p, &k);
                if (r < 0) {
                        job_child_free(c);
                        return r;
                }
        }
        /* an idle child reads nothing else: the request fits the socket's buffer */
        if (fileio_write_all(k->fd, &q, sizeof(q)) < 0) {
                kept_retire(k);
                job_child_free(c);
                return -EPIPE;
        }
        (void) sd_event_source_set_enabled(k->io_source, SD_EVENT_ON);
        k->run = c;
        c->kept = k;
        c->pid = k->pid;
        *ret = c;
        return 0;
}

/* The pid too: before the child's setsid() its group does not exist yet. */
void job_child_kill(JobChild *c) {
        if (c && c->pid > 0) {
                (void) kill(-c->pid, SIGKILL);
                (void) kill(c->pid, SIGKILL);
        }
}

static JobChild *job_child_release(JobChild *c) {
        sd_event_source_disable_unref(c->child_source);
        sd_event_source_disable_unref(c->io_source);
        if (c->fd >= 0)
                close(c->fd);
        free(c->buf);
        free(c);
        return NULL;
}

JobChild *job_child_free(JobChild *c) {
        if (!c)
                return NULL;
        if (c->pid > 0) {
                job_child_kill(c);
                (void) waitpid(c->pid, NULL, 0);
        }
        if (c->kept)
                kept_unlink(c->kept); /* reaped above, and never given work again */
        return job_child_release(c);
}

pid_t job_child_disown(JobChild *c) {
        pid_t pid = c->pid;

        c->pid = 0;
        if (c->kept)
                kept_unlink(c->kept); /* the caller reaps it now */
        job_child_release(c);
        return pid;
}
