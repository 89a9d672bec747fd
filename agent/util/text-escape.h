/* Text from outside made valid UTF-8: the one rule for every string that
 * enters sunkd's state from outside (a script's or a check's output, a
 * reason read from slurmctld, a file or device name, a driver's text, a
 * job's environment) and so may reach an answer on the socket, which must
 * be UTF-8 JSON.  It is applied where the text enters, so that no answer
 * built later can carry a byte it cannot.
 *
 * The rule: whole well-formed UTF-8 sequences (Unicode's table 3-7: no
 * overlong forms, no UTF-16 surrogates, nothing past U+10FFFF) and printable
 * ASCII are kept; every other byte is written "\xNN", two lower-case hex
 * digits: a byte that is not part of such a sequence, a C0 control (newline
 * and tab stay in multi-line text), DEL, and each byte of a C1 control
 * (U+0080..U+009F, which terminals obey).  Nothing is dropped: a cut (the
 * text is longer than its room) is at the end, never inside an escape or a
 * sequence.
 *
 * The rule is idempotent: its output goes through it again unchanged.  So
 * text built from pieces already clean (a reason naming an escaped file
 * name) or handed on (a module's message to the host, the prolog client's
 * reason to Health.Drain) is never escaped twice.  The price: a backslash
 * is kept, so a script that prints "\xff" reads as one that printed the
 * byte.  TEXT_ESCAPE_ASCII escapes the backslash too, for names that must
 * stay apart (gres's GPU names, which become gres.conf types).  sunkd(8)
 * documents the rule for operators. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

enum {
        TEXT_ESCAPE_LINE = 1u << 0,  /* one line: newline and tab escaped too */
        TEXT_ESCAPE_ASCII = 1u << 1, /* printable ASCII only: every byte above 0x7e, and '\\', escaped */
};

/* The longest a byte can become: "\xNN". */
#define TEXT_ESCAPE_RATIO 4

/** text_escape_utf8_len() - the length of the well-formed UTF-8 sequence
 * at @p (of @n bytes; 1 for ASCII), or 0 where none starts. */
size_t text_escape_utf8_len(const char *p, size_t n);

/** text_escape_utf8_valid() - whether the @n bytes at @s are well-formed UTF-8. */
bool text_escape_utf8_valid(const char *s, size_t n);

/** text_escape_needed() - whether text_escape() would change the @n bytes at @s. */
bool text_escape_needed(const char *s, size_t n, unsigned flags);

/**
 * text_escape_append() - append the @n bytes at @s (NULL = none) to @out,
 * of @size bytes and holding *@len, escaped; stops before @out is full,
 * never inside an escape or a sequence, and keeps @out NUL-terminated.
 * Return: how many bytes of @s went in (n when all did).
 */
size_t text_escape_append(char *out, size_t size, size_t *len, const char *s, size_t n, unsigned flags);

/** text_escape() - the @n bytes at @s (NULL = none) escaped, as a new string
 * of at most @max bytes (0 = no limit), or NULL when out of memory. */
char *text_escape(const char *s, size_t n, size_t max, unsigned flags);

/** text_escape_str() - text_escape() of the string @s (NULL gives NULL). */
char *text_escape_str(const char *s, unsigned flags);

/** text_escape_buf() - escape the string in @buf (of @size bytes) in place,
 * cut to fit; for text kept in fixed arrays. */
void text_escape_buf(char *buf, size_t size, unsigned flags);
