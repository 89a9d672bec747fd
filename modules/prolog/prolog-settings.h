/* The settings a run of scripts follows, the same in the daemon and in the
 * client's fallback.
 *
 * slurmd runs Prolog= with no arguments and an environment of the job's, so
 * the client cannot be told where the scripts are or how long they may take.
 * The module therefore leaves the settings it runs with in its state
 * directory (a file only root can change), and the client reads them when it
 * must run the scripts itself; a node where sunkd never ran has none, and the
 * client then uses the defaults below, which are the module's too.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "prolog-dir.h"

#define PROLOG_SCRIPT_TIMEOUT_DEFAULT (60 * UINT64_C(1000000))
#define PROLOG_TOTAL_TIMEOUT_DEFAULT (300 * UINT64_C(1000000))
#define PROLOG_KILL_GRACE_DEFAULT (5 * UINT64_C(1000000))
#define PROLOG_OUTPUT_LIMIT_DEFAULT (64u * 1024)
#define PROLOG_OUTPUT_LIMIT_MAX (256u * 1024 * 1024)
/* The file in the module's state directory. */
#define PROLOG_SETTINGS_FILE "client.json"

typedef struct PrologSettings {
        char *prolog_dir;
        char *epilog_dir;
        uint64_t script_timeout_usec;
        uint64_t total_timeout_usec;
        uint64_t kill_grace_usec;
        uint64_t output_limit;
        bool unreachable_fail; /* on_daemon_unreachable: fail, not run */
        char *order;           /* as configured: "forward" (NULL) or "reverse" */
        char *names;           /* as configured: "sunkd" (NULL), "run-parts", "lsbsysinit" or a regex */
        PrologSelect select;   /* order and names compiled: prolog_settings_select() */
} PrologSettings;

/** prolog_settings_default() - the defaults; -ENOMEM. */
int prolog_settings_default(PrologSettings *s);

void prolog_settings_done(PrologSettings *s);

/**
 * prolog_settings_select() - compile @s->order and @s->names into
 * @s->select.  -EINVAL with the key in *@ret_key ("order", "names") and
 * why in *@ret_error; -ENOMEM.
 */
int prolog_settings_select(PrologSettings *s, const char **ret_key, char **ret_error);

/** prolog_settings_dir() - the directory of @kind's scripts. */
const char *prolog_settings_dir(const PrologSettings *s, PrologKind kind);

/**
 * prolog_script_timeout() - how long the next script may run, @elapsed
 * into the run: min(script_timeout, total_timeout - elapsed), 0 when the
 * total is spent.
 */
uint64_t prolog_script_timeout(const PrologSettings *s, uint64_t elapsed_usec);

/**
 * prolog_settings_format() - @s as the JSON text the client reads
 * (malloc'd, in *@ret).  -ENOMEM.
 */
int prolog_settings_format(const PrologSettings *s, char **ret);

/**
 * prolog_settings_load() - the settings in @path over the defaults.
 * Return: 0; -ENOENT when there is no file (*@s holds the defaults); -EPERM
 * when someone other than root could change it; -EBADMSG for a file that
 * is not what prolog_settings_format() writes: with the reason, naming
 * @path and the field, in *@ret_error.
 */
int prolog_settings_load(const char *path, PrologSettings *s, char **ret_error);
