/* A secret kept in a file: a token, a password.  One reader, so that every
 * secret sunkd reads (SUNKD_CFG_SECRET's file:, nsscache's token_file at each
 * refresh) is held to the same rules.  Non-logging. */
#pragma once

#include <stddef.h>

/**
 * secret_file_read() - the contents of @path, trailing CR and LF removed.
 * The file actually opened (symlinks followed, as in a Kubernetes Secret
 * volume) must be a regular file owned by root or by the effective uid,
 * readable and writable by nobody else; O_NONBLOCK keeps a FIFO from hanging
 * the reader.  Empty, NUL bytes, and more than @max bytes are refused.  The
 * buffer is wiped on every path out; free the result with erase_and_free().
 * Return: 0; else a negative errno and in *ret_error (when not NULL) a
 * message that starts with the quoted path: "'/run/x': refused: ...".
 */
int secret_file_read(const char *path, size_t max, char **ret, char **ret_error);
