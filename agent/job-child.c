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
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "job-child.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/json-util.h"
#include "util/macro.h"

struct JobChild {
        pid_t pid;
        int fd;
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

static __attribute__((noreturn)) void child_main(int fd, JobChildWorkFn work, void *userdata, uid_t uid,
                                                 gid_t gid) {
        json_object *result = NULL, *o;
        const char *text;
        sigset_t ss;
        int r;

        (void) setsid();
        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        sigemptyset(&ss);
        (void) sigprocmask(SIG_SETMASK, &ss, NULL);
        (void) signal(SIGTERM, SIG_DFL);
        (void) close_range(3, (unsigned) fd - 1, 0);
        (void) close_range((unsigned) fd + 1, ~0U, 0);

        r = child_drop(uid, gid);
        if (r >= 0)
                r = work(userdata, &result);
        o = json_object_new_object();
        if (!o)
                _exit(EXIT_FAILURE);
        json_object_object_add(o, "r", json_object_new_int(r));
        if (result)
                json_object_object_add(o, "result", result);
        text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
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

static int job_child_parse(JobChild *c, const siginfo_t *si, json_object **ret_result,
                           const char **ret_why) {
        _cleanup_json_ json_object *o = NULL;
        json_object *r, *result;

        if (si->si_code != CLD_EXITED) {
                *ret_why = "the child was killed by a signal";
                return -EINTR;
        }
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

int job_child_start(sd_event *event, JobChildWorkFn work, void *work_userdata, uid_t uid, gid_t gid,
                    JobChildDoneFn done, void *userdata, JobChild **ret) {
        int fds[2];
        JobChild *c;
        int r;

        c = calloc(1, sizeof(*c));
        if (!c || !(c->buf = malloc(JOB_CHILD_RESULT_MAX + 1))) {
                free(c);
                return -ENOMEM;
        }
        c->fd = -EBADF;
        c->done = done;
        c->userdata = userdata;
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
        return job_child_release(c);
}

pid_t job_child_disown(JobChild *c) {
        pid_t pid = c->pid;

        c->pid = 0;
        job_child_release(c);
        return pid;
}
