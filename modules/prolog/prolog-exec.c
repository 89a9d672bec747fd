/* One script run by the client itself: fork, execveat() of the checked
 * descriptor, and a poll() over its output and its pidfd until it ends or
 * its timeout and grace have passed. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/errloc.h"
#include "util/macro.h"
#include "util/strv.h"
#include "util/time-util.h"
#include "prolog-exec.h"
#include "prolog-script.h"

/* What the child reports through the close-on-exec pipe when it never got
 * to run the script. */
typedef enum ExecStage {
        STAGE_SETUP, /* stdin, cwd, process group */
        STAGE_DEV_FD,
        STAGE_EXEC,
} ExecStage;

typedef struct ExecFailure {
        int stage;
        int error;
} ExecFailure;

/* The last @limit bytes written: linear until full, then a ring. */
typedef struct Tail {
        char *buf;
        size_t cap, len, start, limit;
        bool truncated;
} Tail;

void prolog_exec_result_done(PrologExecResult *r) {
        free(r->output);
        *r = (PrologExecResult){};
}

static int tail_put(Tail *t, const char *p, size_t n) {
        size_t drop, pos, first;

        if (t->len + n <= t->limit) {
                if (t->len + n > t->cap) {
                        size_t cap = MIN(MAX(t->cap * 2, t->len + n), t->limit);
                        char *b = realloc(t->buf, cap);

                        if (!b)
                                return -ENOMEM;
                        t->buf = b;
                        t->cap = cap;
                }
                memcpy(t->buf + t->len, p, n);
                t->len += n;
                return 0;
        }
        t->truncated = true;
        if (t->cap < t->limit) {
                char *b = realloc(t->buf, t->limit);

                if (!b)
                        return -ENOMEM;
                t->buf = b;
                t->cap = t->limit;
        }
        if (n >= t->limit) {
                memcpy(t->buf, p + n - t->limit, t->limit);
                t->start = 0;
                t->len = t->limit;
                return 0;
        }
        drop = t->len + n - t->limit;
        t->start = (t->start + drop) % t->limit;
        t->len -= drop;
        pos = (t->start + t->len) % t->limit;
        first = MIN(n, t->limit - pos);
        memcpy(t->buf + pos, p, first);
        memcpy(t->buf, p + first, n - first);
        t->len += n;
        return 0;
}

static int tail_steal(Tail *t, PrologExecResult *ret) {
        char *s = malloc(t->len + 1);
        size_t first = MIN(t->len, t->cap - t->start);

        if (!s)
                return -ENOMEM;
        if (t->len > 0) {
                memcpy(s, t->buf + t->start, first);
                memcpy(s + first, t->buf, t->len - first);
        }
        s[t->len] = 0;
        ret->output = s;
        ret->output_len = t->len;
        ret->output_truncated = t->truncated;
        return 0;
}

/* Reads what is there: 1 while the pipe is open, 0 at its end, or -errno. */
static int drain(int fd, Tail *t) {
        char buf[16384] _uninitialized_;

        for (;;) {
                ssize_t n = read(fd, buf, sizeof(buf));

                if (n == 0)
                        return 0;
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return errno == EAGAIN ? 1 : negative_errno();
                if (tail_put(t, buf, (size_t) n) < 0)
                        return -ENOMEM;
        }
}

static int safe_close_fd(int fd) {
        if (fd >= 0)
                close(fd);
        return -1;
}

/* A pipe whose ends are above stdin, stdout and stderr, so the child's
 * dup2()s onto 0, 1 and 2 cannot overwrite one of them. */
static int pipe_above_stdio(int fds[2]) {
        if (pipe2(fds, O_CLOEXEC) < 0)
                return negative_errno();
        for (int i = 0; i < 2; i++)
                if (fds[i] < 3) {
                        int fd = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);

                        if (fd < 0) {
                                int r = negative_errno();
                                close(fds[0]);
                                close(fds[1]);
                                return r;
                        }
                        close(fds[i]);
                        fds[i] = fd;
                }
        return 0;
}

_Noreturn static void child_fail(int err_fd, ExecStage stage, int error) {
        ExecFailure f = { .stage = stage, .error = error };

        (void) !write(err_fd, &f, sizeof(f));
        _exit(127);
}

/* In the child: async-signal-safe calls only. */
/* The group of the script running now, for prolog_exec_kill_running(). */
static volatile sig_atomic_t running_pgid;

void prolog_exec_kill_running(void) {
        pid_t pgid = (pid_t) running_pgid;

        if (pgid > 0)
                (void) kill(-pgid, SIGKILL);
}

_Noreturn static void child(pid_t parent, int script_fd, int out_fd, int err_fd, char *const argv[],
                            char *const envp[]) {
        char dev_fd[sizeof("/dev/fd/") + DECIMAL_STR_MAX(int)];
        struct sigaction sa = { .sa_handler = SIG_DFL };
        sigset_t none;
        int null_fd, fd;

        /* what the caller blocked or ignored is not the script's to inherit */
        sigemptyset(&none);
        for (int sig = 1; sig < NSIG; sig++)
                (void) sigaction(sig, &sa, NULL);
        if (sigprocmask(SIG_SETMASK, &none, NULL) < 0 || setpgid(0, 0) < 0)
                child_fail(err_fd, STAGE_SETUP, errno);
        /* a client SIGKILLed at once (no SIGTERM to forward) takes its script along */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                child_fail(err_fd, STAGE_SETUP, errno);
        if (getppid() != parent)
                _exit(127);
        null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (null_fd < 0 || dup2(null_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0 ||
            chdir("/") < 0)
                child_fail(err_fd, STAGE_SETUP, errno);
        if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
                child_fail(err_fd, STAGE_SETUP, errno);
        /* A "#!" script is read by its interpreter from /dev/fd/N: this
         * descriptor, which therefore must survive the exec. */
        fd = fcntl(script_fd, F_DUPFD, 3);
        if (fd < 0)
                child_fail(err_fd, STAGE_SETUP, errno);
        snprintf(dev_fd, sizeof(dev_fd), "/dev/fd/%d", fd);
        if (access(dev_fd, F_OK) < 0)
                child_fail(err_fd, STAGE_DEV_FD, errno);
        execveat(fd, "", argv, envp, AT_EMPTY_PATH);
        child_fail(err_fd, STAGE_EXEC, errno);
}

static int exec_error(const PrologScript *s, const ExecFailure *f, char **ret_error) {
        const char *kind = prolog_kind_name(s->kind), *why = strerror(f->error);

        if (f->stage == STAGE_DEV_FD)
                return errmsg_set(
                        ret_error, -f->error,
                        "cannot execute %s script '%s' (%s): /dev/fd, needed to run it by its descriptor, "
                        "is missing (is /proc mounted?): %s",
                        kind, s->name, s->path, why);
        if (f->stage == STAGE_SETUP)
                return errmsg_set(ret_error, -f->error,
                                  "cannot execute %s script '%s' (%s): setting up its process: %s", kind,
                                  s->name, s->path, why);
        if (f->error == ENOENT)
                /* the script itself is held open: what is missing is what it names */
                return errmsg_set(
                        ret_error, -ENOENT,
                        "cannot execute %s script '%s' (%s): its '#!' interpreter was not found: %s", kind,
                        s->name, s->path, why);
        if (f->error == ENOEXEC)
                return errmsg_set(
                        ret_error, -ENOEXEC,
                        "cannot execute %s script '%s' (%s): neither a program nor a '#!' script: %s", kind,
                        s->name, s->path, why);
        return errmsg_set(ret_error, -f->error, "cannot execute %s script '%s' (%s): %s", kind, s->name,
                          s->path, why);
}

typedef struct Run {
        pid_t pid;
        int pidfd, out_fd;
        uint64_t deadline, kill_at; /* CLOCK_MONOTONIC; USEC_INFINITY = none */
        uint64_t grace;
        bool timed_out;
        Tail tail;
} Run;

static int poll_timeout(const Run *run) {
        uint64_t next = MIN(run->deadline, run->kill_at), now = now_usec(CLOCK_MONOTONIC);

        if (next == USEC_INFINITY)
                return -1;
        if (next <= now)
                return 0;
        return (int) MIN((next - now + USEC_PER_MSEC - 1) / USEC_PER_MSEC, (uint64_t) INT_MAX);
}

static void on_clock(Run *run) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        if (now >= run->deadline) {
                (void) kill(-run->pid, SIGTERM);
                run->timed_out = true;
                run->deadline = USEC_INFINITY;
                run->kill_at = now + run->grace;
        }
        if (now >= run->kill_at) {
                (void) kill(-run->pid, SIGKILL);
                run->kill_at = USEC_INFINITY;
        }
}

/* Until the script's own process has ended: 0, or -errno. */
static int wait_exit(Run *run) {
        for (;;) {
                struct pollfd p[2] = {
                        { .fd = run->pidfd, .events = POLLIN },
                        { .fd = run->out_fd, .events = POLLIN },
                };
                int r;

                if (poll(p, run->out_fd >= 0 ? 2 : 1, poll_timeout(run)) < 0 && errno != EINTR)
                        return negative_errno();
                if (run->out_fd >= 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
                        r = drain(run->out_fd, &run->tail);
                        if (r < 0)
                                return r;
                        if (r == 0)
                                run->out_fd = safe_close_fd(run->out_fd);
                }
                if (p[0].revents & POLLIN)
                        return 0;
                on_clock(run);
        }
}

static int start(int fd, const PrologScript *s, char *const *envp, int *ret_out, int *ret_err,
                 pid_t *ret_pid) {
        char *const argv[] = { s->path, NULL };
        int out[2], err[2], r;
        pid_t pid, parent;

        r = pipe_above_stdio(out);
        if (r < 0)
                return r;
        r = pipe_above_stdio(err);
        if (r < 0) {
                close(out[0]);
                close(out[1]);
                return r;
        }
        parent = getpid();
        pid = fork();
        if (pid == 0)
                child(parent, fd, out[1], err[1], argv, envp);
        r = pid < 0 ? negative_errno() : 0;
        close(out[1]);
        close(err[1]);
        if (r < 0) {
                close(out[0]);
                close(err[0]);
                return r;
        }
        (void) setpgid(pid,
                       pid); /* also here, so that a kill before the child's own setpgid() finds the group */
        *ret_out = out[0];
        *ret_err = err[0];
        *ret_pid = pid;
        return 0;
}

/* After its own process ended: what it left in its group is killed, then the
 * process reaped (not before: its pid keeps the group id from reuse). */
static int finish(Run *run, PrologExecResult *ret) {
        siginfo_t si = {};

        (void) kill(-run->pid, SIGKILL);
        running_pgid = 0; /* before the reap, after which the pid is free */
        if (waitid(P_PID, (id_t) run->pid, &si, WEXITED) < 0)
                return negative_errno();
        ret->exit_code = si.si_code == CLD_EXITED ? si.si_status : 0;
        ret->signal = si.si_code == CLD_EXITED ? 0 : si.si_status;
        ret->timed_out = run->timed_out;
        /* what was written before the exit is in the pipe; a writer that left
         * the group is not waited for */
        if (run->out_fd >= 0 && fcntl(run->out_fd, F_SETFL, O_NONBLOCK) == 0) {
                int r = drain(run->out_fd, &run->tail);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int run_script(int fd, const PrologScript *s, const PrologExecSpec *spec, char *const *envp,
                      PrologExecResult *ret, char **ret_error) {
        Run run = {
                .pidfd = -1,
                .out_fd = -1,
                .grace = spec->kill_grace_usec ?: PROLOG_KILL_GRACE_DEFAULT,
                .kill_at = USEC_INFINITY,
                .tail.limit =
                        MIN(spec->output_limit ?: PROLOG_OUTPUT_LIMIT_DEFAULT, PROLOG_OUTPUT_LIMIT_MAX),
        };
        _cleanup_close_ int err_fd = -1;
        uint64_t begin = now_usec(CLOCK_MONOTONIC);
        ExecFailure f;
        int r;

        run.deadline = spec->timeout_usec ? begin + spec->timeout_usec : USEC_INFINITY;
        r = start(fd, s, envp, &run.out_fd, &err_fd, &run.pid);
        if (r < 0)
                return errmsg_set(ret_error, r, "cannot execute %s script '%s' (%s): %s",
                                  prolog_kind_name(s->kind), s->name, s->path, strerror(-r));
        ret->pid = run.pid;
        running_pgid = run.pid;
        run.pidfd = pidfd_open(run.pid, 0);
        r = run.pidfd < 0 ? negative_errno() : 0;
        if (r == 0 && fcntl(run.out_fd, F_SETFL, O_NONBLOCK) < 0)
                r = negative_errno();
        if (r == 0)
                r = wait_exit(&run);
        if (r < 0) {
                /* never leave it running unwatched */
                (void) kill(-run.pid, SIGKILL);
                running_pgid = 0;
                (void) waitpid(run.pid, NULL, 0);
        } else
                r = finish(&run, ret);
        if (r == 0 && read(err_fd, &f, sizeof(f)) == (ssize_t) sizeof(f)) {
                *ret = (PrologExecResult){ .pid = run.pid };
                r = exec_error(s, &f, ret_error);
        } else if (r == 0)
                r = tail_steal(&run.tail, ret);
        else
                r = errmsg_set(ret_error, r, "running %s script '%s' (%s): %s", prolog_kind_name(s->kind),
                               s->name, s->path, strerror(-r));
        ret->duration_usec = now_usec(CLOCK_MONOTONIC) - begin;
        free(run.tail.buf);
        safe_close_fd(run.out_fd);
        safe_close_fd(run.pidfd);
        return r;
}

int prolog_exec_fd(int fd, const PrologScript *s, const PrologExecSpec *spec, PrologExecResult *ret,
                   char **ret_error) {
        _cleanup_strv_free_ char **envp = prolog_script_env(spec->envp, s->name);

        *ret = (PrologExecResult){};
        if (!envp)
                return -ENOMEM;
        return run_script(fd, s, spec, envp, ret, ret_error);
}

int prolog_exec(const PrologScript *s, const PrologExecSpec *spec, PrologExecResult *ret, char **ret_error) {
        _cleanup_close_ int fd = -1;

        *ret = (PrologExecResult){};
        fd = prolog_script_open(s, ret_error);
        if (fd < 0)
                return fd;
        return prolog_exec_fd(fd, s, spec, ret, ret_error);
}
