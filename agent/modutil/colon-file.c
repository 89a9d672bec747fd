/* passwd- and group-format files, line by line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "modutil/colon-file.h"
#include "util/macro.h"

/* The id field of a passwd or group line: -1 unless a plain uint32. */
static int64_t colon_id(const char *p, const char *end) {
        int64_t id = 0;
        size_t n = 0;

        for (; p + n < end && p[n] >= '0' && p[n] <= '9' && n < 11; n++)
                id = id * 10 + (p[n] - '0');
        if (n == 0 || (p + n < end && p[n] != ':' && p[n] != '\n' && p[n] != 0) || id > UINT32_MAX)
                return -1;
        return id;
}

int colon_file_read(const char *path, ColonFileFn fn, void *userdata) {
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        ssize_t k;
        int r;

        if (isempty(path))
                return 0;
        f = fopen(path, "re");
        if (!f)
                return errno == ENOENT ? 0 : -errno;
        while ((k = getline(&line, &cap, f)) >= 0) {
                const char *end = line + k, *c1 = memchr(line, ':', (size_t) k), *c2;
                size_t len = c1 ? (size_t) (c1 - line) : 0;

                if (len == 0 || strchr("#+-", line[0]))
                        continue;
                c2 = memchr(c1 + 1, ':', (size_t) (end - c1 - 1));
                r = fn(line, len, c2 ? colon_id(c2 + 1, end) : -1, userdata);
                if (r < 0)
                        return r;
        }
        return ferror(f) ? -EIO : 0;
}
