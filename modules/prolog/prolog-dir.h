/* A prolog or epilog directory: which scripts it holds and whether they may
 * be run.  Non-logging, loop-free: the
 * daemon module and the client's fallback both compile it in, so both apply
 * one rule.
 *
 * The directory is read at each call, never cached.  Its entries are taken
 * in strcmp() order (or as prolog-select.h's rules say); hidden names, "*~",
 * "*.dpkg-*", "*.rpm*" and "*.disabled" are package managers' and editors'
 * leftovers and are passed over quietly, as are subdirectories.  Anything
 * else that is not, once symlinks are followed, a regular executable file
 * (a script that lost its x bit, a dangling symlink) is listed as not run,
 * with why: a run's record shows it, so a script is never dropped without a
 * word.
 *
 * Whatever is run must be changeable by root alone (trusted_path_check(): the
 * directory, every directory and symlink on the way to each script, and the
 * script itself).  A Kubernetes ConfigMap mount makes each entry a symlink
 * through "..data", which the kubelet swaps to a new directory on every
 * update, so a symlink is resolved once, the path it resolves to is checked,
 * and that path, never the symlink again, is what is run.
 *
 * prolog-exec.h runs a script by the same rules.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "prolog-select.h"

typedef enum PrologKind {
        PROLOG_KIND_PROLOG,
        PROLOG_KIND_EPILOG,
        _PROLOG_KIND_MAX,
} PrologKind;

/** prolog_kind_name() - "prolog", "epilog". */
const char *prolog_kind_name(PrologKind kind);

typedef struct PrologScript {
        PrologKind kind;
        char *name; /* the entry in the directory */
        char *path; /* what it resolved to, absolute, without symlinks: checked, and run; NULL when why is
                       set */
        char *why;  /* not run: skipped (error 0: "not executable (mode 0644)") or refused (error < 0) */
        int error;  /* < 0: refused by trusted_path_check() or unresolvable; its turn fails the run */
} PrologScript;

/**
 * prolog_name_skipped() - whether an entry called @name is passed over by
 * name alone (hidden, backup, package manager leftover, disabled).
 */
bool prolog_name_skipped(const char *name);

/**
 * prolog_dir_list() - the entries of @dir, in strcmp() order, each resolved
 * and checked: scripts to run, and those not run with why (skipped, or
 * refused: "refusing prolog script '/etc/x/10-gpu': owned by uid 65534, not
 * root (mode 0755)").
 * @kind: which directory it is, for the messages
 * Return: 0 and the entries in *@ret (*@ret_n of them, NULL when none).
 * -ENOENT when @dir does not exist (a directory that is missing is a
 * mistake, never an empty one); -ENOTDIR when it is not a directory; -EPERM
 * from trusted_path_check() when @dir could be changed by someone other
 * than root; another lookup's -errno.  The message in *@ret_error names
 * the path.
 */
int prolog_dir_list(const char *dir, PrologKind kind, PrologScript **ret, size_t *ret_n, char **ret_error);

/**
 * prolog_dir_select() - prolog_dir_list() by @sel's name rule and order
 * (NULL: sunkd's), with the scripts of @dir/@partition merged in when
 * @partition is a plain name and that directory exists (prolog-select.h).
 * A partition's script is named "<partition>/<name>".  A partition
 * directory that is there but refused fails the listing as @dir would.
 */
int prolog_dir_select(const char *dir, PrologKind kind, const PrologSelect *sel, const char *partition,
                      PrologScript **ret, size_t *ret_n, char **ret_error);

PrologScript *prolog_scripts_free(PrologScript *s, size_t n);

/**
 * prolog_scripts_refused() - the first of @s refused, or NULL.  A
 * directory with one is not run at all: someone other than root could
 * have put it there, and the scripts before it would run beside it.
 */
const PrologScript *prolog_scripts_refused(const PrologScript *s, size_t n);

/**
 * prolog_script_open() - an O_PATH, close-on-exec descriptor of @s->path,
 * whose directories are checked again and whose open inode is checked
 * (regular, executable, root's, not group- or world-writable).
 * Return: the descriptor, or -errno with the path in *@ret_error (-ENOENT
 * when the file went away since the listing, as a ConfigMap update does).
 */
int prolog_script_open(const PrologScript *s, char **ret_error);
