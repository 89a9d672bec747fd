/* Running one checked script outside the daemon: the client's fallback when
 * sunkd cannot be reached.  Its own fork, exec and poll; nothing of the
 * daemon, and linked into the client alone (libprolog-exec), never into the
 * module.  Non-logging.
 *
 * prolog-dir.h checks the path a script resolves to; prolog_exec() goes one
 * step further: it opens the checked file, checks the open inode, and
 * executes that inode through the descriptor (execveat() with AT_EMPTY_PATH),
 * so not even a rename by root between the check and the exec changes what
 * runs.  For a "#!" script the kernel hands the interpreter
 * "/dev/fd/N" to read, so the descriptor is passed to the script without
 * close-on-exec (an O_PATH descriptor: nothing can be read or written through
 * it) and /dev/fd must be there (/proc mounted); the script's $0 is then
 * "/dev/fd/N", and SUNKD_SCRIPT carries its name.  The daemon runs the checked
 * path through the host's spawn instead, with prolog-script.h's environment
 * and checks.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "prolog-dir.h"
#include "prolog-script.h"
#include "prolog-settings.h"

typedef struct PrologExecSpec {
        char *const *envp;        /* the job's environment, as slurmd passed it */
        uint64_t timeout_usec;    /* 0 = none; then SIGTERM to the process group */
        uint64_t kill_grace_usec; /* then SIGKILL to it; 0 = PROLOG_KILL_GRACE_DEFAULT */
        size_t output_limit;      /* the last bytes kept; 0 = PROLOG_OUTPUT_LIMIT_DEFAULT */
} PrologExecSpec;

typedef struct PrologExecResult {
        pid_t pid;
        int exit_code;  /* when signal is 0 */
        int signal;     /* the terminating signal, or 0 */
        bool timed_out; /* SIGTERM (and maybe SIGKILL) came from the timeout */
        char *output;   /* stdout and stderr as written, their last output_limit bytes, NUL-terminated */
        size_t output_len;
        bool output_truncated;
        uint64_t duration_usec;
} PrologExecResult;

void prolog_exec_result_done(PrologExecResult *r);

/**
 * prolog_exec_fd() - run the script open at @fd (from prolog_script_open())
 * as @s->name: a child in its own process group, cwd "/", stdin /dev/null,
 * stdout and stderr on one pipe, the environment of prolog_script_env().
 * At the timeout its process group gets SIGTERM, and SIGKILL after the
 * grace; when the script's own process ends, whatever it left in its
 * process group gets SIGKILL, so nothing it started outlives the run by
 * accident (a process that left the group with setsid() is its own).
 * Return: 0 once the script ran and ended (how, in *@ret); or -errno when it
 * never ran, with "cannot execute prolog script 'NAME' (PATH): ..." in
 * *@ret_error: -ENOENT for a "#!" interpreter that is missing (the script
 * itself is held open), -EACCES, -ENOEXEC, or a fork/pipe failure.  *@ret is
 * set either way (empty output when it never ran); free it with
 * prolog_exec_result_done().
 */
int prolog_exec_fd(int fd, const PrologScript *s, const PrologExecSpec *spec, PrologExecResult *ret,
                   char **ret_error);

/** prolog_exec() - prolog_script_open() then prolog_exec_fd(). */
int prolog_exec(const PrologScript *s, const PrologExecSpec *spec, PrologExecResult *ret, char **ret_error);

/**
 * prolog_exec_kill_running() - SIGKILL to the process group of the script
 * prolog_exec() runs now, if any.  Async-signal-safe: for the client's
 * SIGTERM handler, since slurmd follows its SIGTERM with a SIGKILL 10 ms
 * later, which the script's own group would not get.
 */
void prolog_exec_kill_running(void);
