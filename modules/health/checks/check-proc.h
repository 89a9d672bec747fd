/* What the process checks share (process_limit, user_processes, tcp_port's
 * owner): one process's figures from <root>/proc/<pid>/stat and status, the
 * walk over <root>/proc's pids, a process's command line as ps shows it,
 * the node's uptime and the highest system uid.  Every input is the
 * kernel's text but read as hostile: a comm holding ')', spaces, newlines
 * or bytes that are not UTF-8, a pid gone between readdir() and its read,
 * a stat cut short, numbers past their type.  Non-logging, no state. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "check-util.h"

/* TASK_COMM_LEN less its NUL. */
#define CHECK_PROC_COMM_MAX 15

typedef struct CheckProc {
        uint32_t pid, ppid;
        char state;                             /* 'R', 'S', 'Z', ... */
        char comm[CHECK_PROC_COMM_MAX * 4 + 1]; /* between stat's parentheses, raw bytes */
        uint64_t utime, stime;                  /* clock ticks */
        uint64_t starttime;                     /* clock ticks after boot */
        uint64_t vsize;                         /* bytes */
        uint64_t rss;                           /* pages */
        uid_t euid;                             /* status's effective uid, as ps's UID column */
} CheckProc;

/**
 * check_proc_resolve_user() - @user, a name or a uid, as a uid, looked up
 * when the config is read (never in `run`: NSS has no place in a child of
 * the threaded daemon).  "key '@key': ..." in *ret_error.
 * Return: 0, -EINVAL or -ENOMEM.
 */
int check_proc_resolve_user(const char *key, const char *user, uid_t *ret, char **ret_error);

/**
 * check_proc_parse_stat() - the fields of a /proc/<pid>/stat line: the comm
 * is what lies between the first '(' and the LAST ')', so a name holding
 * ") S 1" cannot shift the fields after it.  Return: 0 or -EBADMSG.
 */
int check_proc_parse_stat(const char *text, size_t len, CheckProc *ret);

/**
 * check_proc_read() - <root>/proc/@pid/stat and the effective uid of its
 * status.  Return: 0; -ENOENT for a process gone (or never there); -EBADMSG
 * for a file that says nothing sound; -ENOMEM.
 */
int check_proc_read(const HealthEnv *env, const char *pid, CheckProc *ret);

/**
 * check_proc_cmdline() - the command of @pid as ps's "args" shows it: its
 * arguments joined by spaces, or with @first only argv[0]; "[comm]" for a
 * process without one (a kernel thread, a zombie).  At most @size - 1
 * bytes (the first 4 KiB of cmdline are read).  Return: 0, -ENOENT.
 */
int check_proc_cmdline(const HealthEnv *env, const CheckProc *p, bool first, char *buf, size_t size);

/* Called for each pid (a name of decimal digits, no leading zero); a
 * negative return stops the walk and is returned. */
typedef int (*check_proc_fn)(const char *pid, void *userdata);

/**
 * check_proc_scan() - @fn for each pid under <root>/proc.  When /proc
 * cannot be read the result is set ("<type>-input-missing"/"-bad") and 0
 * returned.  Return: 1 after the walk, 0 with the result set, or what @fn
 * returned when it stopped the walk.
 */
int check_proc_scan(const HealthEnv *env, const char *type, check_proc_fn fn, void *userdata,
                    HealthResult *ret);

/**
 * check_proc_uptime() - the first figure of <root>/proc/uptime, in clock
 * ticks (sysconf(_SC_CLK_TCK), as stat's times).  Return: 0, -ENOENT,
 * -EBADMSG.
 */
int check_proc_uptime(const HealthEnv *env, uint64_t *ret_ticks);

/**
 * check_proc_max_system_uid() - the highest uid of a system account as NHC
 * finds it (nhc_common_get_max_sys_uid): <root>/etc/login.defs's
 * SYS_UID_MAX, else its UID_MIN - 1, else 99 (also where either is 0 or
 * the file is missing).
 */
uid_t check_proc_max_system_uid(const HealthEnv *env);
