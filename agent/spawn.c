/* fork+exec with the hygiene OpenSSH's subprocess() taught us.
 *
 * The child gets a new session (so a timeout can kill the whole process
 * group: a prolog script's own children included), an unblocked signal mask
 * and default dispositions (the parent blocks everything for sd-event), only
 * fds 0-2 (closefrom), stdin from a memfd holding the input (writing a pipe
 * from the loop could block), stdout and stderr on one pipe, and dropped
 * privileges before exec when asked.  Between fork and exec it calls only
 * async-signal-safe functions: the parent has worker threads.
 *
 * The parent reads the pipe on the loop, keeps up to output_max bytes and
 * drops the rest (a runaway script cannot grow our memory), and reaps the
 * child through an sd-event child source.  A timeout sends SIGTERM to the
 * group and SIGKILL five seconds later.  When the child has exited, what
 * is left in the pipe is drained without waiting for EOF: a grandchild that
 * kept the pipe open must not hold the result back.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spawn.h"
#include "util/cleanup.h"
#include "util/macro.h"
#include "util/time-util.h"

#define KILL_GRACE_USEC (5 * USEC_PER_SEC)
#define OUTPUT_MAX_DEFAULT (64 * 1024)

typedef struct Spawn Spawn;
struct Spawn {
        SpawnSet *set;
        const void *owner;
        pid_t pid;
        sd_event_source *child_source, *io_source, *timer;
        int out_fd;
        char *output;
        size_t output_len, output_max;
        bool truncated, timed_out, killed, exited;
        siginfo_t si;
        uint64_t start_usec;
        sunkd_spawn_cb cb;
        void *userdata;
        Spawn *prev, *next;
};

struct SpawnSet {
        sd_event *event;
        Spawn *children;
};

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
        SpawnSet *s = calloc(1, sizeof(*s));

        if (!s)
                return -ENOMEM;
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
        sd_event_unref(s->event);
        free(s);
        return NULL;
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
        sunkd_spawn_result res = {
                .pid = p->pid,
                .timed_out = p->timed_out,
                .output = p->output,
                .output_len = p->output_len,
                .output_truncated = p->truncated,
                .duration_usec = now_usec(CLOCK_MONOTONIC) - p->start_usec,
        };

        if (p->out_fd >= 0)
                read_output(p);
        res.output_len = p->output_len;
        p->output[p->output_len] = '\0';
        if (p->si.si_code == CLD_EXITED)
                res.exit_code = p->si.si_status;
        else
                res.signal = p->si.si_status;
        p->cb(p->userdata, 0, &res);
        spawn_free(p);
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

static int on_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Spawn *p = userdata;

        if (!p->timed_out) {
                p->timed_out = true;
                (void) kill(-p->pid, SIGTERM);
                return sd_event_source_set_time_relative(s, KILL_GRACE_USEC) < 0 ? 0 :
                       sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        }
        p->killed = true;
        (void) kill(-p->pid, SIGKILL);
        return 0;
}

_Noreturn static void child_exec(const sunkd_spawn_spec *spec, int in_fd, int out_fd) {
        sigset_t all;

        sigemptyset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        for (int sig = 1; sig < _NSIG; sig++)
                (void) signal(sig, SIG_DFL);
        if (setsid() < 0)
                _exit(126);
        if (dup2(in_fd, STDIN_FILENO) < 0 || dup2(out_fd, STDOUT_FILENO) < 0 ||
            dup2(out_fd, STDERR_FILENO) < 0)
                _exit(126);
        closefrom(3);
        if (spec->uid != (uid_t) -1) {
                if (setgroups(0, NULL) < 0 || setresgid(spec->gid, spec->gid, spec->gid) < 0 ||
                    setresuid(spec->uid, spec->uid, spec->uid) < 0)
                        _exit(126);
        }
        if (chdir(spec->cwd ?: "/") < 0)
                _exit(126);
        execve(spec->argv[0], (char *const *) spec->argv,
               (char *const *) (spec->envp ?: (const char *const[]){ NULL }));
        _exit(127);
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
        if (spec->timeout_usec > 0) {
                r = sd_event_add_time_relative(e, &p->timer, CLOCK_MONOTONIC, spec->timeout_usec, 0,
                                               on_timeout, p);
                if (r < 0)
                        return r;
        }
        return 0;
}

int spawn_start(SpawnSet *s, const sunkd_spawn_spec *spec, sunkd_spawn_cb cb, void *userdata,
                const void *owner) {
        _cleanup_close_ int in_fd = -1;
        int pipefd[2];
        Spawn *p;
        int r;

        if (!spec || spec->size < sizeof(sunkd_spawn_spec) || !spec->argv || !spec->argv[0] ||
            spec->argv[0][0] != '/' || !cb)
                return -EINVAL;

        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->out_fd = -1;
        p->output_max = spec->output_max ?: OUTPUT_MAX_DEFAULT;
        p->output = malloc(p->output_max + 1);
        if (!p->output) {
                free(p);
                return -ENOMEM;
        }
        in_fd = make_input(spec);
        if (in_fd < 0 || pipe2(pipefd, O_CLOEXEC) < 0) {
                r = negative_errno();
                spawn_free(p);
                return r;
        }
        p->out_fd = pipefd[0];
        p->cb = cb;
        p->userdata = userdata;
        p->owner = owner;
        p->start_usec = now_usec(CLOCK_MONOTONIC);

        p->pid = fork();
        if (p->pid == 0)
                child_exec(spec, in_fd, pipefd[1]);
        r = p->pid < 0 ? negative_errno() : 0;
        close(pipefd[1]);
        if (r < 0) {
                spawn_free(p);
                return r;
        }
        (void) fcntl(p->out_fd, F_SETFL, O_NONBLOCK);

        p->set = s;
        p->next = s->children;
        if (s->children)
                s->children->prev = p;
        s->children = p;

        r = spawn_watch(p, spec);
        if (r < 0) {
                (void) kill(-p->pid, SIGKILL);
                (void) waitpid(p->pid, NULL, 0);
                spawn_free(p);
                return r;
        }
        return 0;
}

void spawn_kill_owner(SpawnSet *s, const void *owner) {
        for (Spawn *p = s->children; p; p = p->next)
                if ((!owner || p->owner == owner) && !p->exited)
                {
                        /* Before its setsid() the group does not exist yet, but
                         * then the child has no children either: the signal
                         * waits in its blocked mask until exec resets it. */
                        (void) kill(-p->pid, SIGTERM);
                        (void) kill(p->pid, SIGTERM);
                }
}

unsigned spawn_n_running(SpawnSet *s, const void *owner) {
        unsigned n = 0;

        for (Spawn *p = s->children; p; p = p->next)
                if (!owner || p->owner == owner)
                        n++;
        return n;
}
