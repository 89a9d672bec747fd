/* Reading passwd- and group-format files (name:x:id:...) for their names
 * and ids.  Non-logging. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* One line: its name (@len bytes, not NUL-terminated) and its third field,
 * -1 unless that is a plain uint32.  A negative return stops the read. */
typedef int (*ColonFileFn)(const char *name, size_t len, int64_t id, void *userdata);

/**
 * colon_file_read() - feed each line's name and id to @fn.
 * Comments, NIS "+"/"-" lines and lines without a name are skipped.
 * Return: 0 (a missing file, or an empty @path, is empty); -errno when the
 * file cannot be read; @fn's negative return.
 */
int colon_file_read(const char *path, ColonFileFn fn, void *userdata);
