/* Child processes, with the hygiene OpenSSH's subprocess() taught us.
 *
 * The child gets a new session (so a timeout can kill the whole process
 * group: a prolog script's own children included), an unblocked signal mask
 * and default dispositions (the parent blocks everything for sd-event), only
 * fds 0-2 (closefrom), stdin from a memfd holding the input (writing a pipe
 * from the loop could block), stdout and stderr on a pipe each (one shared
 * pipe for SUNKD_SPAWN_MERGE_STDERR and for specs older than ABI 1.3, whose
 * modules expect both in `output`), and dropped privileges before exec when
 * asked: supplementary groups (cleared unless given, never root's), then
 * gid, then uid.
 *
 * The child is started with clone(CLONE_VM | CLONE_VFORK) on a stack of its
 * own, not with fork(): it shares the daemon's memory instead of copying its
 * page tables, which costs a fork in proportion to the daemon's resident
 * size.  Sharing the memory sets strict rules for the child (child_exec()).
 * The price: the loop waits until the child has exec'd, a few syscalls and
 * the kernel's half of execve().  A cwd or a program on a hung network
 * filesystem would stall it there, so both belong on local disk.
 *
 * A child that fails before its program runs (chdir, a privilege drop,
 * execve: ENOENT, EACCES, ENOEXEC, a missing #! interpreter) reports its
 * errno through a status pipe (read_exec_errno()), handed to the callback
 * as r < 0: an exit status of 127 or 126 could be the script's own.
 *
 * With SUNKD_SPAWN_REAP the child executes sunkd again as the program's
 * reaper (spawn-reap.c), which runs the program and, once it has exited,
 * kills whatever it left behind, setsid() or not.
 *
 * The parent reads the pipes on the loop into ring buffers of output_max
 * bytes each that keep the *last* bytes: the line that says why a script
 * failed comes at its end, and a runaway script cannot grow our memory.  It
 * reaps the child through an sd-event child source.  A timeout or a kill
 * sends SIGTERM to the group and SIGKILL after the spec's grace.  When the
 * child has exited, what is left in the pipes is drained without waiting
 * for EOF: a grandchild that kept a pipe open must not hold the result back.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "abi-copy.h"
#include "spawn.h"
#include "util/cleanup.h"
#include "util/macro.h"
#include "util/time-util.h"

#define KILL_GRACE_USEC (5 * USEC_PER_SEC)
#define OUTPUT_MAX_DEFAULT (64 * 1024)
#define OUTPUT_MAX_LIMIT (256 * 1024 * 1024)
/* Far beyond any sensible timeout, and far from overflowing now + it. */
#define DURATION_LIMIT_USEC (UINT64_C(100) * 365 * 24 * 3600 * USEC_PER_SEC)
/* The child's stack: it runs a few short functions before exec. */
#define CHILD_STACK_SIZE (64 * 1024)
/* The 1.0 spec ends with input_len; 1.2 appended kill_grace_usec and groups,
 * 1.3 flags.  Specs without flags share one pipe for stdout and stderr. */
#define SPAWN_SPEC_SIZE_1_0 ABI_END_OF(sunkd_spawn_spec, input_len)
#define SPAWN_SPEC_SIZE_1_3 ABI_END_OF(sunkd_spawn_spec, flags)
#define SPAWN_FLAGS_KNOWN (SUNKD_SPAWN_MERGE_STDERR | SUNKD_SPAWN_REAP)
/* Where a reaping spawn's child finds sunkd (spawn-reap.c): the executable
 * of the memory it shares with the daemon, even one replaced on disk since. */
#define SELF_EXE "/proc/self/exe"
/* One read() from a child's pipe; the ring keeps what fits. */
#define READ_CHUNK (16 * 1024)

/* For the functions that run in the child.  AddressSanitizer calls a hook
 * before each call that does not return (_exit), which looks at the stacks
 * of the thread: the child's own stack is not one it knows, and the hook
 * faults.  The child's few functions are left uninstrumented. */
#define _child_code_ __attribute__((no_sanitize_address))

/* 32-bit x86 and arm keep the 16-bit ids under the plain names. */
#ifdef SYS_setresuid32
#define SYS_SETRESUID SYS_setresuid32
#define SYS_SETRESGID SYS_setresgid32
#define SYS_SETGROUPS SYS_setgroups32
#else
#define SYS_SETRESUID SYS_setresuid
#define SYS_SETRESGID SYS_setresgid
#define SYS_SETGROUPS SYS_setgroups
#endif

/* One output stream of a child: the read end of its pipe and a ring buffer
 * holding the last @max bytes read from it, @len of them, the next one to be
 * written at @head. */
typedef struct Capture {
        int fd;
        sd_event_source *io_source;
        char *buf; /* max + 1 bytes: room for the NUL once it is linear */
        size_t max, head, len;
        bool truncated;
} Capture;

typedef struct sunkd_child Spawn;
struct sunkd_child {
        SpawnSet *set;
        const void *owner;
        pid_t pid;
        sd_event_source *child_source, *timer;
        Capture out, err; /* err.fd < 0 and err.buf NULL when merged into out */
        int exec_errno;   /* from the status pipe: why the program never ran */
        bool timed_out, terminating, exited;
        uint64_t grace_usec;
        siginfo_t si;
        uint64_t start_usec;
        sunkd_spawn_cb cb;
        void *userdata;
        Spawn *prev, *next;
};

struct SpawnSet {
        sd_event *event;
        Spawn *children;
        void *stack; /* CHILD_STACK_SIZE plus a guard page below it */
        void (*idle_fn)(void *userdata);
        void *idle_userdata;
};

/* What the child reads, prepared by the parent before the clone. */
typedef struct ChildExec {
        const sunkd_spawn_spec *spec;
        const char *path;        /* what is executed: argv[0], or SELF_EXE to reap */
        const char *const *argv; /* the spec's, or the reaper's around it */
        bool reap;
        const char *const *envp;
        int in_fd, out_fd, err_fd; /* err_fd == out_fd when merged */
        int status_fd;             /* close-on-exec: the errno of a failure before exec */
        int fd_limit;              /* for closing fds where close_range() is missing */
} ChildExec;

static void capture_close(Capture *c) {
        c->io_source = sd_event_source_disable_unref(c->io_source);
        if (c->fd >= 0)
                close(c->fd);
        c->fd = -1;
}

/* The last c->max bytes of what came so far: older bytes are overwritten. */
static void capture_append(Capture *c, const char *data, size_t n) {
        if (n >= c->max) {
                c->truncated = c->truncated || n > c->max || c->len > 0;
                memcpy(c->buf, data + (n - c->max), c->max);
                c->head = 0;
                c->len = c->max;
                return;
        }
        size_t first = MIN(n, c->max - c->head);
        memcpy(c->buf + c->head, data, first);
        memcpy(c->buf, data + first, n - first);
        c->head = (c->head + n) % c->max;
        if (c->len + n > c->max)
                c->truncated = true;
        c->len = MIN(c->len + n, c->max);
}

static void reverse(char *a, size_t n) {
        for (size_t i = 0; i < n / 2; i++) {
                char t = a[i];
                a[i] = a[n - 1 - i];
                a[n - 1 - i] = t;
        }
}

/* Rotates the ring in place so its bytes start at buf[0], NUL-terminated. */
static void capture_linearize(Capture *c) {
        size_t start = c->len < c->max ? 0 : c->head;

        if (start > 0) {
                reverse(c->buf, start);
                reverse(c->buf + start, c->max - start);
                reverse(c->buf, c->max);
        }
        c->head = c->len % c->max;
        c->buf[c->len] = '\0';
}

static Spawn *spawn_free(Spawn *p) {
        if (!p)
                return NULL;
        if (p->set) {
                if (p->prev)
                        p->prev->next = p->next;
                else
                        p->set->children = p->next;
                if (p->next)
                        p->next->prev = p->prev;
        }
        sd_event_source_disable_unref(p->child_source);
        sd_event_source_disable_unref(p->timer);
        capture_close(&p->out);
        capture_close(&p->err);
        free(p->out.buf);
        free(p->err.buf);
        free(p);
        return NULL;
}

int spawn_set_new(sd_event *event, SpawnSet **ret) {
        size_t page = (size_t) sysconf(_SC_PAGESIZE);
        SpawnSet *s = calloc(1, sizeof(*s));

        if (!s)
                return -ENOMEM;
        s->stack = mmap(NULL, page + CHILD_STACK_SIZE, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
        if (s->stack == MAP_FAILED || mprotect(s->stack, page, PROT_NONE) < 0) {
                int r = negative_errno();
                if (s->stack != MAP_FAILED)
                        (void) munmap(s->stack, page + CHILD_STACK_SIZE);
                free(s);
                return r;
        }
        s->event = sd_event_ref(event);
        *ret = s;
        return 0;
}

SpawnSet *spawn_set_free(SpawnSet *s) {
        if (!s)
                return NULL;
        while (s->children) {
                Spawn *p = s->children;
                if (!p->exited)
                        (void) kill(-p->pid, SIGKILL);
                spawn_free(p);
        }
        (void) munmap(s->stack, (size_t) sysconf(_SC_PAGESIZE) + CHILD_STACK_SIZE);
        sd_event_unref(s->event);
        free(s);
        return NULL;
}

void spawn_set_idle_hook(SpawnSet *s, void (*fn)(void *userdata), void *userdata) {
        s->idle_fn = fn;
        s->idle_userdata = userdata;
}

static void capture_read(Capture *c) {
        while (c->fd >= 0) {
                char chunk[READ_CHUNK] _uninitialized_;
                ssize_t n = read(c->fd, chunk, sizeof(chunk));

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        if (n == 0 || errno != EAGAIN)
                                capture_close(c);
                        return;
                }
                capture_append(c, chunk, (size_t) n);
        }
}

static void spawn_finish(Spawn *p) {
        SpawnSet *s = p->set;
        sunkd_spawn_result res = {
                .pid = p->pid,
                .timed_out = p->timed_out,
                .duration_usec = now_usec(CLOCK_MONOTONIC) - p->start_usec,
        };

        capture_read(&p->out);
        capture_linearize(&p->out);
        res.output = p->out.buf;
        res.output_len = p->out.len;
        res.output_truncated = p->out.truncated;
        if (p->err.buf) {
                capture_read(&p->err);
                capture_linearize(&p->err);
                res.err_output = p->err.buf;
                res.err_output_len = p->err.len;
                res.err_output_truncated = p->err.truncated;
        } else
                res.err_output = "";
        /* A program that never ran has no exit status of its own. */
        if (p->exec_errno == 0 && p->si.si_code == CLD_EXITED)
                res.exit_code = p->si.si_status;
        else if (p->exec_errno == 0)
                res.signal = p->si.si_status;
        p->cb(p->userdata, -p->exec_errno, &res);
        spawn_free(p);
        if (s->idle_fn)
                s->idle_fn(s->idle_userdata);
}

static int on_output(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        capture_read(userdata);
        return 0;
}

static int on_child_exit(sd_event_source *s, const siginfo_t *si, void *userdata) {
        Spawn *p = userdata;

        p->si = *si;
        p->exited = true;
        spawn_finish(p);
        return 0;
}

/* The group: the child's own children too.  CLONE_VFORK settles the kill
 * race: when spawn_start() returns, the child has called setsid() already
 * (or died), so a signal to its group cannot be lost.  Where clone degrades
 * to fork (valgrind does that) and the group does not exist yet, the signal
 * goes to the pid itself: before exec the child has no children of its own. */
static int spawn_signal(Spawn *p, int sig) {
        if (kill(-p->pid, sig) >= 0)
                return 0;
        if (errno != ESRCH)
                return negative_errno();
        return RET_NERRNO(kill(p->pid, sig));
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata);

static int spawn_arm_timer(Spawn *p, uint64_t usec) {
        int r;

        if (!p->timer)
                return sd_event_add_time_relative(p->set->event, &p->timer, CLOCK_MONOTONIC, usec, 0,
                                                  on_timer, p);
        r = sd_event_source_set_time_relative(p->timer, usec);
        if (r < 0)
                return r;
        return sd_event_source_set_enabled(p->timer, SD_EVENT_ONESHOT);
}

int spawn_kill(Spawn *p) {
        int r;

        if (p->exited || p->terminating)
                return 0;
        p->terminating = true;
        /* Without the escalation armed, SIGTERM could be the last word. */
        r = spawn_arm_timer(p, p->grace_usec);
        return spawn_signal(p, r < 0 ? SIGKILL : SIGTERM);
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Spawn *p = userdata;

        if (p->terminating) {
                (void) spawn_signal(p, SIGKILL);
                return 0;
        }
        p->timed_out = true;
        (void) spawn_kill(p);
        return 0;
}

/* Closes every fd from @from up but @keep (which is >= @from). */
_child_code_ static void child_close_from(int from, int keep, int limit) {
#ifdef SYS_close_range
        if ((keep == from || syscall(SYS_close_range, (unsigned) from, (unsigned) keep - 1, 0U) >= 0) &&
            syscall(SYS_close_range, (unsigned) keep + 1, ~0U, 0U) >= 0)
                return;
#endif
        for (int fd = from; fd < limit; fd++)
                if (fd != keep)
                        (void) close(fd);
}

/* Tells the parent why the program will not run, and ends the child. */
_child_code_ static _Noreturn void child_fail(const ChildExec *a) {
        int e = errno;
        /* Should it fail, the parent sees EOF and reports exit status 127. */
        ssize_t _unused_ n = write(a->status_fd, &e, sizeof(e));

        _exit(127);
}

_child_code_ static int child_drop_privileges(const sunkd_spawn_spec *spec) {
        if (syscall(SYS_SETGROUPS, (long) spec->n_groups, spec->groups) < 0 ||
            syscall(SYS_SETRESGID, (long) spec->gid, (long) spec->gid, (long) spec->gid) < 0 ||
            syscall(SYS_SETRESUID, (long) spec->uid, (long) spec->uid, (long) spec->uid) < 0)
                return -1;
        return 0;
}

/* Runs on the daemon's memory (CLONE_VM), while the calling thread sleeps
 * until it has exec'd or died.  It reads only what the parent prepared
 * before the clone (argv, envp, groups, fds, all in ChildExec) and writes
 * only its own stack.  It calls nothing but glibc's thin wrappers of system
 * calls (and sigemptyset()): glibc's setresuid() and friends would try to
 * change the credentials of every thread of the parent, so the ids are set
 * through raw syscalls.  Every signal is blocked across the clone and the
 * child resets each disposition before it unblocks them, so no handler of
 * the parent ever runs on the shared memory. */
_child_code_ static int child_exec(void *userdata) {
        const ChildExec *a = userdata;
        const sunkd_spawn_spec *spec = a->spec;
        struct sigaction dfl = { .sa_handler = SIG_DFL };
        sigset_t none;

        for (int sig = 1; sig < _NSIG; sig++)
                (void) sigaction(sig, &dfl, NULL);
        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        if (setsid() < 0)
                child_fail(a);
        if (dup2(a->in_fd, STDIN_FILENO) < 0 || dup2(a->out_fd, STDOUT_FILENO) < 0 ||
            dup2(a->err_fd, STDERR_FILENO) < 0)
                child_fail(a);
        child_close_from(3, a->status_fd, a->fd_limit);
        if (spec->uid != (uid_t) -1 && child_drop_privileges(spec) < 0)
                child_fail(a);
        if (chdir(spec->cwd ?: "/") < 0)
                child_fail(a);
        /* the reaper reports the program's exec on the same pipe */
        if (a->reap && fcntl(a->status_fd, F_SETFD, 0) < 0)
                child_fail(a);
        execve(a->path, (char *const *) a->argv, (char *const *) a->envp);
        child_fail(a);
}

/* The child dup2()s its fds onto 0-2: one already sitting there would keep
 * O_CLOEXEC or be overwritten by the other. */
static int fd_above_stdio(int fd) {
        int moved, saved;

        if (fd < 0 || fd > STDERR_FILENO)
                return fd;
        moved = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
        saved = errno;
        close(fd);
        errno = saved;
        return moved;
}

static int make_input(const sunkd_spawn_spec *spec) {
        if (!spec->input)
                return open("/dev/null", O_RDONLY | O_CLOEXEC);

        _cleanup_close_ int fd = memfd_create("sunkd-input", MFD_CLOEXEC);
        if (fd < 0)
                return -1;
        for (size_t off = 0; off < spec->input_len;) {
                ssize_t n = write(fd, spec->input + off, spec->input_len - off);
                if (n < 0)
                        return -1;
                off += (size_t) n;
        }
        if (lseek(fd, 0, SEEK_SET) < 0)
                return -1;
        return TAKE_FD(fd);
}

static int spawn_clone(SpawnSet *s, const ChildExec *a, pid_t *ret) {
        sigset_t all, saved;
        pid_t pid;
        int r;

        sigfillset(&all);
        r = -pthread_sigmask(SIG_SETMASK, &all, &saved);
        if (r < 0)
                return r;
        pid = clone(child_exec, (char *) s->stack + sysconf(_SC_PAGESIZE) + CHILD_STACK_SIZE,
                    CLONE_VM | CLONE_VFORK | SIGCHLD, (void *) a);
        r = pid < 0 ? negative_errno() : 0;
        (void) pthread_sigmask(SIG_SETMASK, &saved, NULL);
        *ret = pid;
        return r;
}

static int capture_watch(Spawn *p, Capture *c) {
        int r;

        if (c->fd < 0)
                return 0;
        (void) fcntl(c->fd, F_SETFL, O_NONBLOCK);
        r = sd_event_add_io(p->set->event, &c->io_source, c->fd, EPOLLIN, on_output, c);
        if (r < 0)
                return r;
        /* Output first, exit last: the exit handler must see all output. */
        return sd_event_source_set_priority(c->io_source, SD_EVENT_PRIORITY_NORMAL - 1);
}

static int spawn_watch(Spawn *p, const sunkd_spawn_spec *spec) {
        int r;

        r = sd_event_add_child(p->set->event, &p->child_source, p->pid, WEXITED, on_child_exit, p);
        if (r < 0)
                return r;
        r = capture_watch(p, &p->out);
        if (r < 0)
                return r;
        r = capture_watch(p, &p->err);
        if (r < 0)
                return r;
        if (spec->timeout_usec > 0)
                return spawn_arm_timer(p, spec->timeout_usec);
        return 0;
}

static bool spawn_spec_valid(const sunkd_spawn_spec *spec) {
        if (!spec->argv || !spec->argv[0] || spec->argv[0][0] != '/')
                return false;
        if (spec->timeout_usec > DURATION_LIMIT_USEC || spec->kill_grace_usec > DURATION_LIMIT_USEC ||
            spec->output_max > OUTPUT_MAX_LIMIT || (spec->flags & ~SPAWN_FLAGS_KNOWN))
                return false;
        if (spec->uid == (uid_t) -1)
                return spec->n_groups == 0;
        /* A "drop" that keeps gid 0 is not one. */
        return spec->gid != (gid_t) -1 && spec->n_groups <= NGROUPS_MAX &&
               (spec->groups || spec->n_groups == 0);
}

static int capture_init(Capture *c, size_t max) {
        c->max = max;
        c->buf = malloc(max + 1);
        return c->buf ? 0 : -ENOMEM;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(Spawn *, spawn_free);

static int spawn_new(const sunkd_spawn_spec *spec, bool merge, sunkd_spawn_cb cb, void *userdata,
                     const void *owner, Spawn **ret) {
        _cleanup_(spawn_freep) Spawn *p = calloc(1, sizeof(*p));
        size_t max = spec->output_max ?: OUTPUT_MAX_DEFAULT;

        if (!p)
                return -ENOMEM;
        p->out.fd = p->err.fd = -1;
        if (capture_init(&p->out, max) < 0 || (!merge && capture_init(&p->err, max) < 0))
                return -ENOMEM;
        p->grace_usec = spec->kill_grace_usec ?: KILL_GRACE_USEC;
        p->cb = cb;
        p->userdata = userdata;
        p->owner = owner;
        *ret = TAKE_PTR(p);
        return 0;
}

/* Where close_range() is missing, the child closes fds up to this. */
static int fd_limit(void) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur > INT_MAX)
                return 65536;
        return (int) rl.rlim_cur;
}

/* The child's ends of its fds; the parent closes them once it has cloned. */
typedef struct ChildFds {
        int in, out, err, status;
} ChildFds;

static void child_fds_close(ChildFds *f) {
        int *fds[] = { &f->in, &f->out, &f->err, &f->status };

        for (size_t i = 0; i < ELEMENTSOF(fds); i++)
                if (*fds[i] >= 0) {
                        close(*fds[i]);
                        *fds[i] = -1;
                }
}

/* A close-on-exec pipe, both ends above fd 2; what was made is returned
 * also on failure, for the caller to close. */
static int pipe_above_stdio(int *ret_read, int *ret_write) {
        int fds[2];

        if (pipe2(fds, O_CLOEXEC) < 0)
                return negative_errno();
        *ret_read = fd_above_stdio(fds[0]);
        if (*ret_read < 0) {
                int r = negative_errno();
                close(fds[1]);
                return r;
        }
        *ret_write = fd_above_stdio(fds[1]);
        return *ret_write < 0 ? negative_errno() : 0;
}

/* The child's fds in @f; the read ends of its output pipes go to @p, that
 * of the status pipe to *ret_status. */
static int spawn_fds(Spawn *p, const sunkd_spawn_spec *spec, ChildFds *f, int *ret_status) {
        int r;

        f->in = fd_above_stdio(make_input(spec));
        if (f->in < 0)
                return negative_errno();
        r = pipe_above_stdio(&p->out.fd, &f->out);
        if (r >= 0 && p->err.buf)
                r = pipe_above_stdio(&p->err.fd, &f->err);
        if (r >= 0)
                r = pipe_above_stdio(ret_status, &f->status);
        return r;
}

/* The errno of a child that failed before its program ran, 0 once the
 * exec closed the pipe (close-on-exec).  A pipe, not the shared memory,
 * carries it because it also works where clone degrades to fork.  It
 * blocks only where clone degraded to fork, and only as long as a vfork
 * would have. */
static int read_exec_errno(int fd) {
        int e;
        ssize_t n;

        do
                n = read(fd, &e, sizeof(e));
        while (n < 0 && errno == EINTR);
        if (n != (ssize_t) sizeof(e))
                return 0; /* EOF: the program runs */
        return e > 0 ? e : EIO;
}

/* "sunkd-reap STATUS_FD GRACE_USEC -- ARGV...", in one allocation: the
 * child may not allocate. */
static int reap_argv(const sunkd_spawn_spec *spec, int status_fd, uint64_t grace_usec, char ***ret) {
        size_t n = 0;
        char **v, *nums;

        while (spec->argv[n])
                n++;
        v = malloc((n + 5) * sizeof(char *) + 2 * (DECIMAL_STR_MAX(uint64_t) + 1));
        if (!v)
                return -ENOMEM;
        nums = (char *) (v + n + 5);
        v[0] = (char *) SPAWN_REAP_ARGV0;
        v[1] = nums;
        (void) snprintf(v[1], DECIMAL_STR_MAX(uint64_t) + 1, "%d", status_fd);
        v[2] = nums + DECIMAL_STR_MAX(uint64_t) + 1;
        (void) snprintf(v[2], DECIMAL_STR_MAX(uint64_t) + 1, "%" PRIu64, grace_usec);
        v[3] = (char *) "--";
        for (size_t i = 0; i <= n; i++)
                v[4 + i] = (char *) spec->argv[i];
        *ret = v;
        return 0;
}

int spawn_start(SpawnSet *s, const sunkd_spawn_spec *spec_in, sunkd_spawn_cb cb, void *userdata,
                const void *owner, sunkd_child **ret) {
        _cleanup_(child_fds_close) ChildFds f = { -1, -1, -1, -1 };
        _cleanup_close_ int status_fd = -1;
        _cleanup_(spawn_freep) Spawn *p = NULL;
        _cleanup_free_ char **reap_args = NULL;
        size_t size = spec_in ? spec_in->size : 0;
        sunkd_spawn_spec spec;
        int r;

        r = abi_copy(&spec, sizeof(spec), spec_in, size, SPAWN_SPEC_SIZE_1_0);
        if (r < 0 || !cb || !spawn_spec_valid(&spec))
                return -EINVAL;
        r = spawn_new(&spec, size < SPAWN_SPEC_SIZE_1_3 || (spec.flags & SUNKD_SPAWN_MERGE_STDERR), cb,
                      userdata, owner, &p);
        if (r < 0)
                return r;
        r = spawn_fds(p, &spec, &f, &status_fd);
        if (r < 0)
                return r;
        if (spec.flags & SUNKD_SPAWN_REAP) {
                r = reap_argv(&spec, f.status, p->grace_usec, &reap_args);
                if (r < 0)
                        return r;
        }
        ChildExec a = {
                .spec = &spec,
                .path = reap_args ? SELF_EXE : spec.argv[0],
                .argv = reap_args ? (const char *const *) reap_args : spec.argv,
                .reap = reap_args != NULL,
                .envp = spec.envp ?: (const char *const[]){ NULL },
                .in_fd = f.in,
                .out_fd = f.out,
                .err_fd = f.err >= 0 ? f.err : f.out,
                .status_fd = f.status,
                .fd_limit = fd_limit(),
        };
        p->start_usec = now_usec(CLOCK_MONOTONIC);
        r = spawn_clone(s, &a, &p->pid);
        if (r < 0)
                return r;
        /* Ours gone, the status pipe's only writer is the child, until exec. */
        child_fds_close(&f);
        p->exec_errno = read_exec_errno(status_fd);

        p->set = s;
        p->next = s->children;
        if (s->children)
                s->children->prev = p;
        s->children = p;

        r = spawn_watch(p, &spec);
        if (r < 0) {
                (void) spawn_signal(p, SIGKILL);
                (void) waitpid(p->pid, NULL, 0);
                return r;
        }
        if (ret)
                *ret = p;
        p = NULL; /* the set's now */
        return 0;
}

void spawn_stop_owner(SpawnSet *s, const void *owner) {
        for (Spawn *p = s->children; p; p = p->next)
                if (!owner || p->owner == owner)
                        (void) spawn_kill(p);
}

void spawn_kill_owner(SpawnSet *s, const void *owner) {
        spawn_stop_owner(s, owner);
}

unsigned spawn_n_running(SpawnSet *s, const void *owner) {
        unsigned n = 0;

        for (Spawn *p = s->children; p; p = p->next)
                if (!owner || p->owner == owner)
                        n++;
        return n;
}
