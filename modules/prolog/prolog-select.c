/* The name rules and the order of a script directory (prolog-select.h). */
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prolog-dir.h"
#include "prolog-select.h"
#include "util/errloc.h"
#include "util/macro.h"

#define RUN_PARTS_RULE "^[a-zA-Z0-9_-]+$"
#define LSB_NAMESPACES "^([a-z0-9][a-z0-9-]*|_?([a-z0-9_.]+-)+[a-z0-9]+)$"
#define LSB_DPKG_LEFTOVER "^[a-z0-9-].*dpkg-(old|dist|new|tmp)$"

static const char *const order_names[_PROLOG_ORDER_MAX] = {
        [PROLOG_ORDER_FORWARD] = "forward",
        [PROLOG_ORDER_REVERSE] = "reverse",
};

/* The names of the rules that are not a regex of the site's own. */
static const char *const names_names[_PROLOG_NAMES_MAX] = {
        [PROLOG_NAMES_SUNKD] = "sunkd",
        [PROLOG_NAMES_RUN_PARTS] = "run-parts",
        [PROLOG_NAMES_LSBSYSINIT] = "lsbsysinit",
};

int prolog_select_set_order(PrologSelect *sel, const char *text, char **ret_error) {
        for (PrologOrder o = 0; o < _PROLOG_ORDER_MAX; o++)
                if (streq(text ?: "forward", order_names[o])) {
                        sel->order = o;
                        return 0;
                }
        return errmsg_set(ret_error, -EINVAL, "forward or reverse, not '%s'", text);
}

static void regex_free(void **p) {
        if (*p) {
                regfree(*p);
                free(*p);
                *p = NULL;
        }
}

void prolog_select_done(PrologSelect *sel) {
        regex_free(&sel->regex);
        regex_free(&sel->lsb[0]);
        regex_free(&sel->lsb[1]);
        free(sel->names_text);
        *sel = (PrologSelect){};
}

/* @pattern compiled into *@ret, or -EINVAL with regerror()'s words. */
static int regex_compile(const char *pattern, void **ret, char **ret_error) {
        regex_t *re = calloc(1, sizeof(*re));
        char buf[256];
        int r;

        if (!re)
                return -ENOMEM;
        r = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);
        if (r == REG_ESPACE) {
                free(re);
                return -ENOMEM;
        }
        if (r != 0) {
                regerror(r, re, buf, sizeof(buf));
                free(re);
                return errmsg_set(ret_error, -EINVAL, "not a POSIX extended regular expression: %s", buf);
        }
        *ret = re;
        return 0;
}

int prolog_select_set_names(PrologSelect *sel, const char *text, char **ret_error) {
        PrologSelect n = { .order = sel->order, .names = PROLOG_NAMES_REGEX };
        int r = 0;

        if (!text)
                text = "sunkd";
        for (PrologNames k = 0; k < _PROLOG_NAMES_MAX; k++)
                if (names_names[k] && streq(text, names_names[k]))
                        n.names = k;
        if (!*text)
                return errmsg_set(ret_error, -EINVAL,
                                  "sunkd, run-parts, lsbsysinit or a regular expression");
        n.names_text = strdup(text);
        if (!n.names_text)
                return -ENOMEM;
        if (n.names == PROLOG_NAMES_RUN_PARTS)
                r = regex_compile(RUN_PARTS_RULE, &n.regex, ret_error);
        else if (n.names == PROLOG_NAMES_REGEX)
                r = regex_compile(text, &n.regex, ret_error);
        else if (n.names == PROLOG_NAMES_LSBSYSINIT) {
                r = regex_compile(LSB_NAMESPACES, &n.lsb[0], ret_error);
                if (r >= 0)
                        r = regex_compile(LSB_DPKG_LEFTOVER, &n.lsb[1], ret_error);
        }
        if (r < 0) {
                prolog_select_done(&n);
                return r;
        }
        prolog_select_done(sel);
        *sel = n;
        return 0;
}

const char *prolog_select_order_name(const PrologSelect *sel) {
        return order_names[sel ? sel->order : PROLOG_ORDER_FORWARD];
}

const char *prolog_select_names_name(const PrologSelect *sel) {
        if (!sel || sel->names == PROLOG_NAMES_SUNKD)
                return "sunkd";
        return sel->names == PROLOG_NAMES_REGEX ? sel->names_text : names_names[sel->names];
}

static bool matches(void *re, const char *name) {
        return regexec(re, name, 0, NULL, 0) == 0;
}

int prolog_select_name(const PrologSelect *sel, const char *name, char **ret_why) {
        bool ok;

        if (!sel || sel->names == PROLOG_NAMES_SUNKD)
                return prolog_name_skipped(name) ? 0 : 1;
        if (sel->names == PROLOG_NAMES_LSBSYSINIT)
                ok = matches(sel->lsb[0], name) && !matches(sel->lsb[1], name);
        else
                ok = matches(sel->regex, name);
        if (ok)
                return 1;
        if (asprintf(ret_why,
                     sel->names == PROLOG_NAMES_REGEX ? "name does not match names: %s"
                                                      : "name not selected by names: %s",
                     prolog_select_names_name(sel)) < 0) {
                *ret_why = NULL;
                return -ENOMEM;
        }
        return 2;
}

int prolog_select_cmp(const PrologSelect *sel, const char *a, const char *b) {
        int c = strcmp(a, b);

        return sel && sel->order == PROLOG_ORDER_REVERSE ? -c : c;
}

bool prolog_select_partition_valid(const char *p) {
        size_t n;

        if (!p)
                return false;
        n = strlen(p);
        if (n == 0 || n > PROLOG_PARTITION_MAX || p[0] == '.' || p[0] == '-')
                return false;
        return strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == n;
}

const char *prolog_select_env_partition(char *const *env) {
        static const char key[] = "SLURM_JOB_PARTITION=";
        const char *v = NULL;

        for (char *const *e = env; e && *e; e++)
                if (strncmp(*e, key, sizeof(key) - 1) == 0)
                        v = *e + sizeof(key) - 1;
        return v;
}
