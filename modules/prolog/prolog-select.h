/* Which entries of a script directory run, and in which order: the rules of
 * the tool a site's directory was written for, so that moving it to sunkd
 * keeps what runs and when.
 *
 *   order: forward   strcmp() order of the names, as sunkd always ran them
 *                    and as run-parts(8) does (the C locale's collation)
 *   order: reverse   the opposite: slurmd's globbed Prolog=dir/"*" (slurm.conf(5):
 *                    "reverse alphabetical order (z-a -> Z-A -> 9-0)"; slurmd
 *                    pushes glob(3)'s sorted list onto the front of its own)
 *                    and run-parts --reverse
 *   names: sunkd     every name but hidden ones, "*~", "*.dpkg-*", "*.rpm*"
 *                    and "*.disabled", which are passed over quietly
 *   names: run-parts run-parts' default rule: ^[a-zA-Z0-9_-]+$
 *   names: lsbsysinit
 *                    run-parts --lsbsysinit: ^[a-z0-9][a-z0-9-]*$ (LANANA and
 *                    the cron namespace as run-parts 5.7 applies them) or
 *                    ^_?([a-z0-9_.]+-)+[a-z0-9]+$ (LSB), and not
 *                    ^[a-z0-9-].*dpkg-(old|dist|new|tmp)$
 *   names: REGEX     run-parts --regex: a POSIX extended regular expression a
 *                    name must match (anchor it: ^...$)
 * A name a rule other than `sunkd` does not select is listed as not run,
 * with the rule: a site sees what its directory holds that no longer runs.
 *
 * Scripts per partition: prolog.d/<partition>/ beside the common scripts,
 * for the job's SLURM_JOB_PARTITION.  Common and partition scripts are
 * sorted together by name under the order; a partition's script of the
 * same name as a common one replaces it (the common one is listed as not
 * run, saying so).  A partition name that is not a plain name
 * ([A-Za-z0-9_][A-Za-z0-9_.-]*, at most 64 bytes: no "/", no "..") selects
 * no directory. */
#pragma once

#include <stdbool.h>

typedef enum PrologOrder {
        PROLOG_ORDER_FORWARD,
        PROLOG_ORDER_REVERSE,
        _PROLOG_ORDER_MAX,
} PrologOrder;

typedef enum PrologNames {
        PROLOG_NAMES_SUNKD,
        PROLOG_NAMES_RUN_PARTS,
        PROLOG_NAMES_LSBSYSINIT,
        PROLOG_NAMES_REGEX,
        _PROLOG_NAMES_MAX,
} PrologNames;

#define PROLOG_PARTITION_MAX 64

typedef struct PrologSelect {
        PrologOrder order;
        PrologNames names;
        char *names_text; /* as configured: "run-parts", or the regex; NULL: sunkd */
        void *regex;      /* the compiled rule (regex_t *) of run-parts and REGEX; NULL for sunkd */
        void *lsb[2];     /* lsbsysinit's: the namespaces' rule and the dpkg leftovers' */
} PrologSelect;

/** prolog_select_set_order() - @text "forward" (or NULL) or "reverse";
 * -EINVAL with why in *@ret_error. */
int prolog_select_set_order(PrologSelect *sel, const char *text, char **ret_error);

/** prolog_select_set_names() - @text "sunkd" (or NULL), "run-parts",
 * "lsbsysinit" or a POSIX ERE, compiled; -EINVAL with regerror()'s words
 * in *@ret_error for one that does not compile; -ENOMEM. */
int prolog_select_set_names(PrologSelect *sel, const char *text, char **ret_error);

void prolog_select_done(PrologSelect *sel);

/** prolog_select_order_name() - "forward" or "reverse". */
const char *prolog_select_order_name(const PrologSelect *sel);

/** prolog_select_names_name() - "sunkd", "run-parts", "lsbsysinit" or the regex. */
const char *prolog_select_names_name(const PrologSelect *sel);

/**
 * prolog_select_name() - whether the entry @name runs by @sel's name rule
 * (@sel NULL: the defaults).
 * Return: 1 it may run; 0 passed over quietly (sunkd's leftovers); 2 not
 * selected, with why in *@ret_why (malloc'd); -ENOMEM.
 */
int prolog_select_name(const PrologSelect *sel, const char *name, char **ret_why);

/** prolog_select_cmp() - @a before @b (< 0) in @sel's order (NULL: forward). */
int prolog_select_cmp(const PrologSelect *sel, const char *a, const char *b);

/** prolog_select_partition_valid() - @p names a directory of its own (see above). */
bool prolog_select_partition_valid(const char *p);

/** prolog_select_env_partition() - SLURM_JOB_PARTITION of @env (the last one), or NULL. */
const char *prolog_select_env_partition(char *const *env);
