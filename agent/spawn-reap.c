/* sunkd-reap: what a spawn with SUNKD_SPAWN_REAP runs in place of its
 * program.  It is sunkd itself, executed again through /proc/self/exe under
 * this argv[0] (main() looks at it first), so there is no helper to install,
 * find or trust apart from sunkd.
 *
 * A process group does not hold a script's children: setsid() or a double
 * fork leaves it, and such a child of a health check would run on as root
 * after the check.  What holds them here is a child subreaper
 * (PR_SET_CHILD_SUBREAPER, Linux 3.4): every orphan below it is reparented
 * to it instead of to init, whatever session or group it moved to, so the
 * reaper knows all that is left as its own children once the program has
 * exited, kills them with SIGKILL, and reaps them as their own children come
 * to it in turn.  It exits only when it has no child left, which then means
 * no descendant is left at all, with the program's own status.
 *
 * Why not the alternatives: a cgroup needs a writable, delegated cgroup
 * tree, which a container without systemd rarely has (/sys/fs/cgroup is
 * mounted read-only by default); a PID namespace, whose end the kernel makes
 * kill everything in it, needs CAP_SYS_ADMIN, which such a container
 * rarely grants.  A subreaper needs no privilege and nothing mounted, and a
 * descendant cannot leave it (only a ptrace or a reparenting by the kernel
 * of its own could).
 *
 * Only direct children are signalled: their pids cannot be reused before
 * this process reaps them, so no kill can reach a process that is not ours.
 *
 * argv: sunkd-reap STATUS_FD GRACE_USEC -- PROGRAM [ARG...].  STATUS_FD is
 * the spawn's status pipe: an errno written there means PROGRAM never ran
 * (spawn.c reads it as it reads its own child's).  A SIGTERM (the spawn's
 * timeout or kill, sent to the whole group) is passed on to the children
 * that left the group; half of GRACE_USEC later every child is killed, so
 * that the reaper is done before the spawn's SIGKILL, which would end it too
 * soon, comes at the full grace. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spawn.h"
#include "util/macro.h"
#include "util/time-util.h"

/* How long the reaper waits for a killed child's SIGCHLD before it looks again. */
#define POLL_USEC (50 * USEC_PER_MSEC)

extern char **environ;

/* Tells the spawn why the program will not run, and ends. */
static _Noreturn void fail(int status_fd, int e) {
        ssize_t _unused_ n = write(status_fd, &e, sizeof(e));

        _exit(127);
}

/* The pid's parent, from /proc/PID/stat ("pid (comm) state ppid ..."), or -1. */
static pid_t parent_of(const char *pid) {
        char path[64], buf[512], *p;
        ssize_t n;
        int fd;
        long ppid;

        (void) snprintf(path, sizeof(path), "/proc/%s/stat", pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return -1;
        buf[n] = '\0';
        /* comm may hold anything, ')' too: the last one ends it */
        p = strrchr(buf, ')');
        if (!p || sscanf(p + 1, " %*c %ld", &ppid) != 1)
                return -1;
        return (pid_t) ppid;
}

/* Sends @sig to each child of ours; how many there were.  A scan of /proc
 * rather than /proc/self/task/TID/children, which needs
 * CONFIG_PROC_CHILDREN. */
static unsigned signal_children(int sig) {
        DIR *d = opendir("/proc");
        struct dirent *de;
        pid_t self = getpid();
        unsigned n = 0;

        if (!d)
                return 0;
        while ((de = readdir(d))) {
                char *end;
                long pid = strtol(de->d_name, &end, 10);

                if (*end || pid <= 0 || parent_of(de->d_name) != self)
                        continue;
                (void) kill((pid_t) pid, sig);
                n++;
        }
        closedir(d);
        return n;
}

typedef struct Reaper {
        pid_t main;
        int status; /* the program's, once main_done */
        bool main_done;
        uint64_t kill_at; /* CLOCK_MONOTONIC; 0: no SIGTERM came */
        uint64_t grace_usec;
        sigset_t mask;
} Reaper;

/* Reaps what has exited; false once no child is left. */
static bool reap(Reaper *r) {
        for (;;) {
                int status;
                pid_t pid = waitpid(-1, &status, WNOHANG);

                if (pid < 0)
                        return errno == EINTR ? true : false;
                if (pid == 0)
                        return true;
                if (pid == r->main) {
                        r->status = status;
                        r->main_done = true;
                }
        }
}

/* Waits up to @usec (0: without end) for SIGCHLD or SIGTERM. */
static void wait_signal(Reaper *r, uint64_t usec) {
        struct timespec ts = { .tv_sec = (time_t) (usec / USEC_PER_SEC),
                               .tv_nsec = (long) (usec % USEC_PER_SEC) * 1000 };
        int sig = sigtimedwait(&r->mask, NULL, usec ? &ts : NULL);

        if (sig != SIGTERM)
                return;
        /* the group had it; a child that left the group gets it from us */
        (void) signal_children(SIGTERM);
        if (r->kill_at == 0)
                r->kill_at = now_usec(CLOCK_MONOTONIC) + r->grace_usec / 2;
}

/* Ends the way the program ended. */
static _Noreturn void exit_as(int status) {
        struct rlimit none = {};
        sigset_t ss;
        int sig;

        if (WIFEXITED(status))
                _exit(WEXITSTATUS(status));
        sig = WTERMSIG(status);
        (void) setrlimit(RLIMIT_CORE, &none);
        (void) signal(sig, SIG_DFL);
        sigemptyset(&ss);
        sigaddset(&ss, sig);
        (void) sigprocmask(SIG_UNBLOCK, &ss, NULL);
        (void) kill(getpid(), sig);
        _exit(128 + sig);
}

static int parse_number(const char *s, uint64_t max, uint64_t *ret) {
        char *end;
        unsigned long long v;

        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno || end == s || *end || v > max)
                return -EINVAL;
        *ret = v;
        return 0;
}

int spawn_reap_main(int argc, char **argv) {
        Reaper r = {};
        sigset_t saved;
        uint64_t fd;

        if (argc < 5 || parse_number(argv[1], INT32_MAX, &fd) < 0 || fd < 3 ||
            parse_number(argv[2], UINT64_MAX / 2, &r.grace_usec) < 0 || !streq(argv[3], "--")) {
                fprintf(stderr, "%s: usage: %s STATUS_FD GRACE_USEC -- PROGRAM [ARG...] (run by sunkd)\n",
                        argv[0], SPAWN_REAP_ARGV0);
                return 2;
        }
        /* the program's exec closes it; so does ours, once it has forked */
        if (fcntl((int) fd, F_SETFD, FD_CLOEXEC) < 0)
                return 127;
        if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
                fail((int) fd, errno);
        sigemptyset(&r.mask);
        sigaddset(&r.mask, SIGCHLD);
        sigaddset(&r.mask, SIGTERM);
        if (sigprocmask(SIG_BLOCK, &r.mask, &saved) < 0)
                fail((int) fd, errno);
        r.main = fork();
        if (r.main < 0)
                fail((int) fd, errno);
        if (r.main == 0) {
                (void) sigprocmask(SIG_SETMASK, &saved, NULL);
                execve(argv[4], argv + 4, environ);
                fail((int) fd, errno);
        }
        close((int) fd);
        /* The program has the output pipes; ours would only hold them open. */
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null >= 0) {
                (void) dup2(null, STDIN_FILENO);
                (void) dup2(null, STDOUT_FILENO);
                (void) dup2(null, STDERR_FILENO);
                if (null > STDERR_FILENO)
                        close(null);
        }

        /* the program's run, SIGTERM passed on, SIGKILL at half the grace */
        while (reap(&r) && !r.main_done) {
                uint64_t now = now_usec(CLOCK_MONOTONIC);

                if (r.kill_at && now >= r.kill_at) {
                        (void) signal_children(SIGKILL);
                        wait_signal(&r, POLL_USEC);
                } else
                        wait_signal(&r, r.kill_at ? r.kill_at - now : 0);
        }
        /* what it left behind: killed, until nothing of it is left */
        while (reap(&r)) {
                (void) signal_children(SIGKILL);
                wait_signal(&r, POLL_USEC);
        }
        if (!r.main_done)
                _exit(127); /* cannot happen: the program is a child */
        exit_as(r.status);
}
