/* What a script run by either runner gets: its environment, and the
 * checks of what is at its path now.  The daemon's spawn and the client's
 * own runner (prolog-exec.c) both use them. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/macro.h"
#include "util/strv.h"
#include "prolog-script.h"

/* What makes the dynamic loader, a shell or an interpreter run code that
 * whoever set the environment chose: glibc's own list for setuid programs
 * (LD_*, GCONV_PATH, ...), bash's startup files and exported functions,
 * and the interpreters' module paths.  Root's scripts never see them,
 * whoever put them there; slurmd passes none of them itself. */
static bool env_dropped(const char *e) {
        static const char *const prefixes[] = {
                "LD_", "BASH_FUNC_", "PYTHON", "PERL5", "RUBY",
        };
        static const char *const names[] = {
                "BASH_ENV",     "ENV",         "SHELLOPTS",    "BASHOPTS",         "PS4",
                "GCONV_PATH",   "GETCONF_DIR", "HOSTALIASES",  "LOCALDOMAIN",      "LOCPATH",
                "MALLOC_TRACE", "NIS_PATH",    "NLSPATH",      "RESOLV_HOST_CONF", "RES_OPTIONS",
                "TZDIR",        "PERLLIB",     "NODE_OPTIONS", "SUNKD_SCRIPT",
        };
        size_t n = strcspn(e, "=");

        for (size_t i = 0; i < ELEMENTSOF(prefixes); i++)
                if (strncmp(e, prefixes[i], strlen(prefixes[i])) == 0)
                        return true;
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (strlen(names[i]) == n && strncmp(e, names[i], n) == 0)
                        return true;
        return false;
}

char **prolog_script_env(char *const *envp, const char *name) {
        _cleanup_strv_free_ char **l = NULL;
        size_t n = 0, k = 0;
        bool path = false;

        while (envp && envp[n])
                n++;
        /* one allocation: a job's environment may hold millions of entries */
        l = calloc(n + 3, sizeof(char *));
        if (!l)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                if (env_dropped(envp[i]))
                        continue;
                path = path || strncmp(envp[i], "PATH=", 5) == 0;
                l[k] = strdup(envp[i]);
                if (!l[k++])
                        return NULL;
        }
        if (!path && !(l[k++] = strdup("PATH=" PROLOG_DEFAULT_PATH)))
                return NULL;
        if (asprintf(&l[k], "SUNKD_SCRIPT=%s", name) < 0) {
                l[k] = NULL;
                return NULL;
        }
        return TAKE_PTR(l);
}

int prolog_script_check(const PrologScript *s, char **ret_error) {
        _cleanup_close_ int fd = prolog_script_open(s, ret_error);

        return fd < 0 ? fd : 0;
}
