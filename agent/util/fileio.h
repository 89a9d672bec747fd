/* File helpers: crash-safe replacement of files and bounded reads.  Non-logging. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/**
 * fileio_stage() - write @data to a new temp file beside @path.
 * The temp file is created O_EXCL in @path's directory (so the later rename
 * cannot cross a filesystem), written fully, given @mode and, unless @uid is
 * (uid_t)-1, @uid/@gid, then fsync'ed.  Return: 0 and the temp name in
 * *ret_tmp, or negative errno with nothing left behind.
 */
int fileio_stage(const char *path, const void *data, size_t len, mode_t mode, uid_t uid, gid_t gid,
                 char **ret_tmp);

/** fileio_commit() - rename @tmp over @path and fsync the directory. */
int fileio_commit(const char *tmp, const char *path);

/** fileio_write_atomic() - fileio_stage() + fileio_commit(). */
int fileio_write_atomic(const char *path, const void *data, size_t len, mode_t mode, uid_t uid, gid_t gid);

/** fileio_fsync_dir() - fsync the directory that contains @path. */
int fileio_fsync_dir(const char *path);

/** fileio_mkdir_parents() - create the missing directories above @path, with @mode; not @path itself. */
int fileio_mkdir_parents(const char *path, mode_t mode);

/** fileio_mkdir_p() - fileio_mkdir_parents(), then the directory @path itself. */
int fileio_mkdir_p(const char *path, mode_t mode);

/**
 * fileio_read() - read a whole regular file of at most @max bytes.
 * Return: 0 with a NUL-terminated buffer in *ret and its length in *ret_len,
 * -EFBIG if the file is larger than @max, -EISDIR for a directory, -EINVAL
 * for a FIFO, socket or device (never waited on), or another negative errno.
 */
int fileio_read(const char *path, size_t max, char **ret, size_t *ret_len);

/** fileio_write_all() / fileio_pwrite_all() - all @len bytes, retrying short writes.  Return: 0 or negative
 * errno. */
int fileio_write_all(int fd, const void *data, size_t len);
int fileio_pwrite_all(int fd, const void *data, size_t len, uint64_t offset);

/** fileio_pread_full() - up to @len bytes at @offset, fewer only at the end of the file.
 * Return: the count, or negative errno. */
ssize_t fileio_pread_full(int fd, void *buf, size_t len, uint64_t offset);
