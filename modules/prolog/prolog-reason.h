/* What one script's run came to, in words: the last line of its output, and
 * the reason a failure puts on the node ("prolog 10-gpu rc=3: no GPU 5").
 * Shared by the module, which names the failing script in its reply and
 * its log, and the client, which hands the reason to the health module.
 * Pure: no I/O. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "prolog-dir.h"

/* What the health module takes as an operator's drain reason, its own
 * prefix ("sunkd: ") aside. */
#define PROLOG_REASON_MAX 200
/* The last line of a script's output kept for status and the reason. */
#define PROLOG_LAST_LINE_MAX 160

typedef struct PrologFailure {
        const char *script; /* the entry's name */
        int exit_code;      /* when signal is 0 and error is NULL */
        int signal;         /* the terminating signal, or 0 */
        bool timed_out;
        const char *error;  /* it never ran: why (an exec failure, a refusal) */
        const char *output; /* its captured output, NULL = none */
        size_t output_len;
} PrologFailure;

/**
 * prolog_last_line() - the last line of @out that is not blank, with
 * control characters and invalid UTF-8 bytes as '?', at most @size - 1 bytes
 * (of a longer line its end, from a character boundary), into @buf.  Empty
 * when there is none.
 */
void prolog_last_line(const char *out, size_t len, char *buf, size_t size);

/**
 * prolog_failure_reason() - "<kind> <script> rc=<N>: <last line>", or
 * "... killed by SIGKILL", "... timed out after the limit", "... cannot
 * execute: <why>", at most PROLOG_REASON_MAX bytes into @buf (which holds
 * PROLOG_REASON_MAX + 1).  The script's name is sanitised as the line is.
 */
void prolog_failure_reason(char *buf, PrologKind kind, const PrologFailure *f);

/**
 * prolog_exec_why() - a few words on why a script never ran, from the
 * negative errno its exec (or check) failed with: "its '#!' interpreter was
 * not found", "neither a program nor a '#!' script", ...
 */
const char *prolog_exec_why(int r);

/**
 * prolog_dir_why() - prolog_exec_why() for a directory that could not be
 * listed: "the directory does not exist", ...
 */
const char *prolog_dir_why(int r);

/** prolog_signal_name() - "SIGTERM" for 15, "signal 77" for one without a name. */
const char *prolog_signal_name(int sig, char buf[static 16]);
