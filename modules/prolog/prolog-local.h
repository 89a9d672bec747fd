/* A whole directory run by the client itself, when sunkd cannot be reached
 * (or with --local): the module's rules, with the client's own fork, exec
 * and poll (prolog-exec.h).  Non-logging: each script's end is handed to
 * the caller's callback. */
#pragma once

#include <stdbool.h>

#include "prolog-dir.h"
#include "prolog-exec.h"
#include "prolog-reason.h"
#include "prolog-settings.h"

/* After each script: r < 0 when it never ran (@error says why); r == 0
 * with s->why set when it was skipped (not executable, say); else how it
 * ended in @res. */
typedef void (*PrologLocalFn)(void *userdata, const PrologScript *s, int r, const PrologExecResult *res,
                              const char *error);

/**
 * prolog_run_local() - run @kind's directory under @set with @envp: a
 * prolog stops at its first failure, an epilog runs every script; each
 * script's timeout is prolog_script_timeout().
 * Return: 0 when every script passed; 1 when one failed, with the reason
 * (prolog_failure_reason()) in @reason; -errno when the directory could
 * not be listed or was refused, with the message in *@ret_error and the
 * reason in @reason as well.
 */
int prolog_run_local(const PrologSettings *set, PrologKind kind, char *const *envp, PrologLocalFn fn,
                     void *userdata, char reason[static PROLOG_REASON_MAX + 1], char **ret_error);
