/* A job's environment on the wire: any bytes, any size slurmd can pass.
 *
 * slurmd hands the prolog whatever a job put in its environment (a Latin-1
 * --comment, a --chdir holding 0xff), and a script may depend on every byte
 * of it.  JSON strings hold UTF-8 only, so Prolog.Run carries the
 * environment as one base64 (RFC 4648) string of its entries, each ended by
 * a NUL byte: execve()'s own block, exactly as the client received it.
 */
#pragma once

/**
 * prolog_environ_encode() - @env (NULL-terminated) as base64 of its
 * NUL-ended entries, malloc'd in *@ret.  -ENOMEM, -E2BIG past 6 MiB (more
 * than execve() can have handed over).
 */
int prolog_environ_encode(char *const *env, char **ret);

/**
 * prolog_environ_decode() - the entries of @text (what
 * prolog_environ_encode() makes) as a NULL-terminated list, malloc'd in
 * *@ret.  -EBADMSG for text that is not base64, or whose last entry is not
 * NUL-ended; -E2BIG past 6 MiB; -ENOMEM.
 */
int prolog_environ_decode(const char *text, char ***ret);
