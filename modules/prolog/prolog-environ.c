/* A job's environment as one base64 string; libresolv's codec. */
#include <errno.h>
#include <resolv.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "prolog-environ.h"
#include "util/cleanup.h"
#include "util/strv.h"

/* Linux caps what execve() passes at 3/4 of _STK_LIM (8 MiB). */
#define ENVIRON_MAX ((size_t) 6 << 20)

int prolog_environ_encode(char *const *env, char **ret) {
        _cleanup_free_ unsigned char *block = NULL;
        _cleanup_free_ char *text = NULL;
        size_t len = 0, o = 0;

        for (size_t i = 0; env && env[i]; i++) {
                len += strlen(env[i]) + 1;
                if (len > ENVIRON_MAX)
                        return -E2BIG;
        }
        block = malloc(len ?: 1);
        text = malloc((len + 2) / 3 * 4 + 1);
        if (!block || !text)
                return -ENOMEM;
        for (size_t i = 0; env && env[i]; i++) {
                size_t n = strlen(env[i]) + 1;

                memcpy(block + o, env[i], n);
                o += n;
        }
        if (b64_ntop(block, len, text, (len + 2) / 3 * 4 + 1) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(text);
        return 0;
}

/* The entries of @block's @len bytes, each ended by a NUL, in one pass
 * for the count and one for the copies: a list grown entry by entry costs
 * O(n^2) for the millions of tiny entries 6 MiB can hold. */
static int environ_split(const unsigned char *block, size_t len, char ***ret) {
        _cleanup_strv_free_ char **env = NULL;
        size_t n = 0, i = 0;

        for (size_t o = 0; o < len; o++)
                n += block[o] == '\0';
        env = calloc(n + 1, sizeof(char *));
        if (!env)
                return -ENOMEM;
        for (size_t o = 0; o < len; o += strlen(env[i++]) + 1) {
                env[i] = strdup((const char *) block + o);
                if (!env[i])
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(env);
        return 0;
}

int prolog_environ_decode(const char *text, char ***ret) {
        _cleanup_free_ unsigned char *block = NULL;
        size_t cap = strlen(text) / 4 * 3 + 3;
        int n;

        if (cap > ENVIRON_MAX + 3)
                return -E2BIG;
        block = malloc(cap);
        if (!block)
                return -ENOMEM;
        n = b64_pton(text, block, cap);
        if (n < 0 || (n > 0 && block[n - 1] != '\0'))
                return -EBADMSG;
        return environ_split(block, (size_t) n, ret);
}
