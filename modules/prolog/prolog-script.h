/* What a script gets from either runner: the daemon's (the host's spawn,
 * prolog-run.c) and the client's own (prolog-exec.h).  Its environment is
 * the job's less what would make a loader, shell or interpreter run code
 * the environment chose; and since the spawn executes the checked path,
 * prolog_script_check() checks what is there again just before: a change
 * between that check and the exec is not caught there, but one since the
 * listing is.  Nothing here forks: the module links it.  Non-logging.
 */
#pragma once

#include "prolog-dir.h"

/* The PATH a script gets when its environment has none (slurmd passes none). */
#define PROLOG_DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/**
 * prolog_script_env() - @envp (NULL = empty) byte for byte, less the
 * variables that would make a loader, shell or interpreter run code the
 * environment chose (LD_*, BASH_ENV, BASH_FUNC_*, PYTHON*, ...: the list is
 * in sunkd-prolog(8)), with PATH=PROLOG_DEFAULT_PATH added when it has no
 * PATH, and SUNKD_SCRIPT=@name in place of any it had.
 * Return: a new strv, or NULL when out of memory.
 */
char **prolog_script_env(char *const *envp, const char *name);

/**
 * prolog_script_check() - prolog_script_open()'s checks of @s, for a runner
 * that executes the path (the daemon's spawn): what is there now, not only
 * what was listed.  Return: 0, or its -errno with *@ret_error.
 */
int prolog_script_check(const PrologScript *s, char **ret_error);
