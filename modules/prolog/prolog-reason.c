/* A failed script in words, for the node's drain reason and the log. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "prolog-reason.h"
#include "util/text-clean.h"

static bool blank(const char *p, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
                        return false;
        return true;
}

void prolog_last_line(const char *out, size_t len, char *buf, size_t size) {
        size_t end = len, start, n = 0;

        if (size == 0)
                return;
        buf[0] = '\0';
        if (!out)
                return;
        for (;;) {
                while (end > 0 && out[end - 1] == '\n')
                        end--;
                if (end == 0)
                        return;
                start = end;
                while (start > 0 && out[start - 1] != '\n')
                        start--;
                if (!blank(out + start, end - start))
                        break;
                end = start;
        }
        while (start < end && (out[start] == ' ' || out[start] == '\t'))
                start++;
        while (end > start && (out[end - 1] == ' ' || out[end - 1] == '\t' || out[end - 1] == '\r'))
                end--;
        /* a line longer than the buffer: its end, which says how it ended,
         * from the start of a UTF-8 character */
        if (end - start > size - 1) {
                start = end - (size - 1);
                while (start < end && ((unsigned char) out[start] & 0xc0) == 0x80)
                        start++;
        }
        text_append_clean_n(buf, size, &n, out + start, end - start);
}

const char *prolog_exec_why(int r) {
        switch (-r) {
        case ENOENT:
                return "not found, or its '#!' interpreter was not found";
        case ENOEXEC:
                return "neither a program nor a '#!' script";
        case EACCES:
                return "permission denied";
        case EPERM:
                return "refused: it, or a directory above it, is not root's alone";
        case ETIMEDOUT:
                return "no time left of total_timeout";
        default:
                return strerror(-r);
        }
}

const char *prolog_dir_why(int r) {
        switch (-r) {
        case ENOENT:
                return "the directory does not exist";
        case ENOTDIR:
                return "not a directory";
        default:
                return prolog_exec_why(r);
        }
}

const char *prolog_signal_name(int sig, char buf[static 16]) {
        const char *abbrev = sigabbrev_np(sig);

        if (abbrev)
                snprintf(buf, 16, "SIG%s", abbrev);
        else
                snprintf(buf, 16, "signal %d", sig);
        return buf;
}

void prolog_failure_reason(char *buf, PrologKind kind, const PrologFailure *f) {
        char how[64], line[PROLOG_LAST_LINE_MAX + 1], sig[16];
        size_t n = 0;

        buf[0] = '\0';
        line[0] = '\0';
        if (f->error) {
                snprintf(how, sizeof(how), "cannot execute");
                n = 0;
                text_append_clean(line, sizeof(line), &n, f->error);
        } else {
                if (f->timed_out)
                        snprintf(how, sizeof(how), "timed out (%s)",
                                 prolog_signal_name(f->signal ?: SIGTERM, sig));
                else if (f->signal)
                        snprintf(how, sizeof(how), "killed by %s", prolog_signal_name(f->signal, sig));
                else
                        snprintf(how, sizeof(how), "rc=%d", f->exit_code);
                prolog_last_line(f->output, f->output_len, line, sizeof(line));
        }
        n = 0;
        text_append_clean(buf, PROLOG_REASON_MAX + 1, &n, prolog_kind_name(kind));
        text_append_clean(buf, PROLOG_REASON_MAX + 1, &n, " ");
        text_append_clean(buf, PROLOG_REASON_MAX + 1, &n, f->script);
        text_append_clean(buf, PROLOG_REASON_MAX + 1, &n, " ");
        text_append_clean(buf, PROLOG_REASON_MAX + 1, &n, how);
        if (line[0]) {
                text_append_clean(buf, PROLOG_REASON_MAX + 1, &n, ": ");
                text_append_clean(buf, PROLOG_REASON_MAX + 1, &n, line);
        }
        while (n > 0 && buf[n - 1] == ' ')
                buf[--n] = '\0';
}
