/* A secret kept in a file: a token, a password.  One reader, so that every
 * secret sunkd reads (SUNKD_CFG_SECRET's file:, nsscache's token_file at each
 * refresh) is held to the same rules.  Non-logging. */
#pragma once

#include <stddef.h>

/**
 * secret_file_read() - the contents of @path, trailing CR and LF removed.
 * The path must pass trusted_path_check() first: every directory on the way
 * and every symlink met (a Kubernetes Secret volume's ..data) root's or the
 * effective uid's, so nobody else can swap the file; the file actually
 * opened must be a regular file owned by root or by the effective uid,
 * readable and writable by nobody else; O_NONBLOCK keeps a FIFO from hanging
 * the reader.  Empty, NUL bytes, and more than @max bytes are refused.  The
 * buffer is wiped on every path out; free the result with erase_and_free().
 * Return: 0; else a negative errno and in *ret_error (when not NULL) a
 * message that starts with the quoted path: "'/run/x': refused: ...", as
 * "'/srv/t/token': refused: '/srv/t' is owned by uid 1001, not root (mode
 * 0755)" for a directory another uid owns.
 */
int secret_file_read(const char *path, size_t max, char **ret, char **ret_error);
