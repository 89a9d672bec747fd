/* Child processes, with the hygiene OpenSSH's subprocess() taught us.
 *
 * The child gets a new session (so a timeout can kill the whole process
 * group: a prolog script's own children included), an unblocked signal mask
 * and default dispositions (the parent blocks everything for sd-event), only
 * fds 0-2 (closefrom), stdin from a memfd holding the input (writing a pipe
 * from the loop could block), stdout and stderr on one pipe, and dropped
 * privileges before exec when asked: supplementary groups (cleared unless
 * given, never root's), then gid, then uid.
 *
 * The child is started with clone(CLONE_VM | CLONE_VFORK) on a stack of its
 * own, not with fork(): it shares the daemon's memory instead of copying its
 * page tables, which costs a fork in proportion to the daemon's resident
 * size, and the calling thread sleeps until the child has exec'd or died.
 * Sharing the memory sets the rules for the child.  It reads only what the
 * parent prepared before the clone (argv, envp, groups, fds, all in
 * ChildExec) and writes only its own stack.  It calls nothing but glibc's
 * thin wrappers of system calls (and sigemptyset()): glibc's setresuid()
 * and friends would try to change the credentials of every thread of the
 * parent, so the ids are set through raw syscalls.  Every signal is blocked across the clone and the
 * child resets each disposition before it unblocks them, so no handler of
 * the parent ever runs on the shared memory.
 *
 * The price: the loop waits until the child has exec'd, a few syscalls and
 * the kernel's half of execve().  A cwd or a program on a hung network
 * filesystem would stall it there, so both belong on local disk.
 *
 * CLONE_VFORK also settles the kill race: when spawn_start() returns, the
 * child has called setsid() already (or died), so a signal to its group
 * cannot be lost.  Where clone degrades to fork (valgrind does that) and
 * the group does not exist yet, the signal goes to the pid itself: before
 * exec the child has no children of its own.
 *
 * The parent reads the pipe on the loop, keeps up to output_max bytes and
 * drops the rest (a runaway script cannot grow our memory), and reaps the
 * child through an sd-event child source.  A timeout or a kill sends SIGTERM
 * to the group and SIGKILL after the spec's grace.  When the child has
 * exited, what is left in the pipe is drained without waiting for EOF: a
 * grandchild that kept the pipe open must not hold the result back.
 */
#include <errno.h>
#include <fcntl.h>
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
/* The 1.0 spec ends with input_len; 1.2 appended kill_grace_usec and groups. */
#define SPAWN_SPEC_SIZE_1_0 ABI_END_OF(sunkd_spawn_spec, input_len)

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

typedef struct sunkd_child Spawn;
struct sunkd_child {
        SpawnSet *set;
        const void *owner;
        pid_t pid;
        sd_event_source *child_source, *io_source, *timer;
        int out_fd;
        char *output;
        size_t output_len, output_max;
        bool truncated, timed_out, terminating, exited;
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
        const char *const *envp;
        int in_fd, out_fd;
        int fd_limit; /* for closing fds where close_range() is missing */
} ChildExec;

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
        sd_event_source_disable_unref(p->io_source);
        sd_event_source_disable_unref(p->timer);
        if (p->out_fd >= 0)
                close(p->out_fd);
        free(p->output);
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

static void read_output(Spawn *p) {
        for (;;) {
                char scratch[4096];
                size_t room = p->output_max - p->output_len;
                char *dst = room > 0 ? p->output + p->output_len : scratch;
                size_t want = room > 0 ? room : sizeof(scratch);
                ssize_t n = read(p->out_fd, dst, want);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        if (n == 0 || errno != EAGAIN) {
                                p->io_source = sd_event_source_disable_unref(p->io_source);
                                close(p->out_fd);
                                p->out_fd = -1;
                        }
                        return;
                }
                if (room > 0)
                        p->output_len += (size_t) n;
                else
                        p->truncated = true;
        }
}

static void spawn_finish(Spawn *p) {
        SpawnSet *s = p->set;
        sunkd_spawn_result res = {
                .pid = p->pid,
                .timed_out = p->timed_out,
                .duration_usec = now_usec(CLOCK_MONOTONIC) - p->start_usec,
        };

        if (p->out_fd >= 0)
                read_output(p);
        p->output[p->output_len] = '\0';
        res.output = p->output;
        res.output_len = p->output_len;
        res.output_truncated = p->truncated;
        if (p->si.si_code == CLD_EXITED)
                res.exit_code = p->si.si_status;
        else
                res.signal = p->si.si_status;
        p->cb(p->userdata, 0, &res);
        spawn_free(p);
        if (s->idle_fn)
                s->idle_fn(s->idle_userdata);
}

static int on_output(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        read_output(userdata);
        return 0;
}

static int on_child_exit(sd_event_source *s, const siginfo_t *si, void *userdata) {
        Spawn *p = userdata;

        p->si = *si;
        p->exited = true;
        spawn_finish(p);
        return 0;
}

/* The group: the child's own children too.  See the top of the file for
 * when there is no group yet. */
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

static void child_close_from(int from, int limit) {
#ifdef SYS_close_range
        if (syscall(SYS_close_range, (unsigned) from, ~0U, 0U) >= 0)
                return;
#endif
        for (int fd = from; fd < limit; fd++)
                (void) close(fd);
}

static int child_drop_privileges(const sunkd_spawn_spec *spec) {
        if (syscall(SYS_SETGROUPS, (long) spec->n_groups, spec->groups) < 0 ||
            syscall(SYS_SETRESGID, (long) spec->gid, (long) spec->gid, (long) spec->gid) < 0 ||
            syscall(SYS_SETRESUID, (long) spec->uid, (long) spec->uid, (long) spec->uid) < 0)
                return -1;
        return 0;
}

/* Runs on the shared memory: see the top of the file before adding a call. */
static int child_exec(void *userdata) {
        const ChildExec *a = userdata;
        const sunkd_spawn_spec *spec = a->spec;
        struct sigaction dfl = { .sa_handler = SIG_DFL };
        sigset_t none;

        for (int sig = 1; sig < _NSIG; sig++)
                (void) sigaction(sig, &dfl, NULL);
        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        if (setsid() < 0)
                _exit(126);
        if (dup2(a->in_fd, STDIN_FILENO) < 0 || dup2(a->out_fd, STDOUT_FILENO) < 0 ||
            dup2(a->out_fd, STDERR_FILENO) < 0)
                _exit(126);
        child_close_from(3, a->fd_limit);
        if (spec->uid != (uid_t) -1 && child_drop_privileges(spec) < 0)
                _exit(126);
        if (chdir(spec->cwd ?: "/") < 0)
                _exit(126);
        execve(spec->argv[0], (char *const *) spec->argv, (char *const *) a->envp);
        _exit(127);
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

static int spawn_watch(Spawn *p, const sunkd_spawn_spec *spec) {
        sd_event *e = p->set->event;
        int r;

        r = sd_event_add_child(e, &p->child_source, p->pid, WEXITED, on_child_exit, p);
        if (r < 0)
                return r;
        r = sd_event_add_io(e, &p->io_source, p->out_fd, EPOLLIN, on_output, p);
        if (r < 0)
                return r;
        /* Output first, exit last: the exit handler must see all output. */
        (void) sd_event_source_set_priority(p->io_source, SD_EVENT_PRIORITY_NORMAL - 1);
        if (spec->timeout_usec > 0)
                return spawn_arm_timer(p, spec->timeout_usec);
        return 0;
}

static bool spawn_spec_valid(const sunkd_spawn_spec *spec) {
        if (!spec->argv || !spec->argv[0] || spec->argv[0][0] != '/')
                return false;
        if (spec->timeout_usec > DURATION_LIMIT_USEC || spec->kill_grace_usec > DURATION_LIMIT_USEC ||
            spec->output_max > OUTPUT_MAX_LIMIT)
                return false;
        if (spec->uid == (uid_t) -1)
                return spec->n_groups == 0;
        /* A "drop" that keeps gid 0 is not one. */
        return spec->gid != (gid_t) -1 && spec->n_groups <= NGROUPS_MAX &&
               (spec->groups || spec->n_groups == 0);
}

static int spawn_new(const sunkd_spawn_spec *spec, sunkd_spawn_cb cb, void *userdata, const void *owner,
                     Spawn **ret) {
        Spawn *p = calloc(1, sizeof(*p));

        if (!p)
                return -ENOMEM;
        p->out_fd = -1;
        p->output_max = spec->output_max ?: OUTPUT_MAX_DEFAULT;
        p->output = malloc(p->output_max + 1);
        if (!p->output) {
                free(p);
                return -ENOMEM;
        }
        p->grace_usec = spec->kill_grace_usec ?: KILL_GRACE_USEC;
        p->cb = cb;
        p->userdata = userdata;
        p->owner = owner;
        *ret = p;
        return 0;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(Spawn *, spawn_free);

/* Where close_range() is missing, the child closes fds up to this. */
static int fd_limit(void) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur > INT_MAX)
                return 65536;
        return (int) rl.rlim_cur;
}

/* stdin for the child in *ret_in, the pipe's write end in *ret_out; the
 * read end goes to @p. */
static int spawn_fds(Spawn *p, const sunkd_spawn_spec *spec, int *ret_in, int *ret_out) {
        _cleanup_close_ int in_fd = -1, out_fd = -1;
        int pipefd[2];

        in_fd = fd_above_stdio(make_input(spec));
        if (in_fd < 0 || pipe2(pipefd, O_CLOEXEC) < 0)
                return negative_errno();
        p->out_fd = fd_above_stdio(pipefd[0]);
        out_fd = fd_above_stdio(pipefd[1]);
        if (p->out_fd < 0 || out_fd < 0)
                return negative_errno();
        *ret_in = TAKE_FD(in_fd);
        *ret_out = TAKE_FD(out_fd);
        return 0;
}

int spawn_start(SpawnSet *s, const sunkd_spawn_spec *spec_in, sunkd_spawn_cb cb, void *userdata,
                const void *owner, sunkd_child **ret) {
        _cleanup_close_ int in_fd = -1, out_fd = -1;
        _cleanup_(spawn_freep) Spawn *p = NULL;
        sunkd_spawn_spec spec;
        int r;

        r = abi_copy(&spec, sizeof(spec), spec_in, spec_in ? spec_in->size : 0, SPAWN_SPEC_SIZE_1_0);
        if (r < 0 || !cb || !spawn_spec_valid(&spec))
                return -EINVAL;
        r = spawn_new(&spec, cb, userdata, owner, &p);
        if (r < 0)
                return r;
        r = spawn_fds(p, &spec, &in_fd, &out_fd);
        if (r < 0)
                return r;
        ChildExec a = {
                .spec = &spec,
                .envp = spec.envp ?: (const char *const[]){ NULL },
                .in_fd = in_fd,
                .out_fd = out_fd,
                .fd_limit = fd_limit(),
        };
        p->start_usec = now_usec(CLOCK_MONOTONIC);
        r = spawn_clone(s, &a, &p->pid);
        if (r < 0)
                return r;
        (void) fcntl(p->out_fd, F_SETFL, O_NONBLOCK);

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
