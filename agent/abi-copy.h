/* Structs a module hands the host, copied by the size the module declared.
 *
 * module.h promises that a module built against an older minor ABI keeps
 * working: its structs are shorter, the fields it does not know are at the
 * end.  Every struct a module passes in is therefore copied into the host's
 * current layout here, and only the copy is read: the known prefix is taken
 * as it is, the rest is zero (which every appended field treats as "not
 * set"), and a longer struct from a newer module is cut to what this host
 * knows (the loader refuses newer minors before that can happen).
 */
#pragma once

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "util/macro.h"

/* The end of @field in @type: the smallest size a struct that has it can declare. */
#define ABI_END_OF(type, field) (offsetof(type, field) + sizeof(((type *) 0)->field))

/**
 * abi_copy() - copy @src (declaring @src_size bytes) into @dst (@dst_size).
 * @min_size: the size of the oldest layout this host accepts (ABI 1.0).
 * Return: 0, or -EINVAL when @src is NULL or declares less than @min_size.
 */
static inline int abi_copy(void *dst, size_t dst_size, const void *src, size_t src_size, size_t min_size) {
        if (!src || src_size < min_size)
                return -EINVAL;
        memcpy(dst, src, MIN(src_size, dst_size));
        if (src_size < dst_size)
                memset((char *) dst + src_size, 0, dst_size - src_size);
        return 0;
}
