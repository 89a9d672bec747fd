#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/macro.h"
#include "util/text-escape.h"

#include "check-sysfs.h"

int check_sysfs_value(const HealthEnv *env, const char *rel, size_t max, char **ret) {
        _cleanup_free_ char *text = NULL;
        char p[CHECK_PATH_MAX];
        size_t len = 0;
        int r;

        *ret = NULL;
        r = check_path(p, env, rel);
        if (r >= 0)
                r = fileio_read(p, max, &text, &len);
        if (r < 0)
                return r;
        if (strlen(text) != len)
                return -EBADMSG;
        if (len > 0 && text[len - 1] == '\n')
                text[len - 1] = 0;
        *ret = TAKE_PTR(text);
        return 0;
}

int check_sysfs_read(const HealthEnv *env, const char *type, const char *rel, size_t max, char **ret,
                     HealthResult *result) {
        char p[CHECK_PATH_MAX];
        int r;

        r = check_sysfs_value(env, rel, max, ret);
        if (r >= 0)
                return 1;
        if (check_path(p, env, rel) < 0)
                snprintf(p, sizeof(p), "%s", rel);
        if (r == -ENOMEM) {
                health_result_set(result, HEALTH_UNKNOWN, "out-of-memory", "out of memory reading '%s'", p);
                return r;
        }
        if (r == -EBADMSG)
                return check_input_bad(result, type, "'%s' holds a NUL byte", p);
        return check_input_error(result, type, p, r);
}

int check_parse_u64(const char *s, uint64_t *ret) {
        uint64_t v = 0;
        size_t n = strspn(s, "0123456789");

        if (n == 0 || n > 18 || s[n])
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                v = v * 10 + (uint64_t) (s[i] - '0');
        *ret = v;
        return 0;
}

bool check_sysfs_name_ok(const char *s, size_t max) {
        return s && !isempty(s) && strlen(s) < max && !strchr(s, '/') && !streq(s, ".") && !streq(s, "..");
}

bool check_genconf_text_ok(const char *s) {
        const unsigned char *p = (const unsigned char *) s;

        if (!text_escape_utf8_valid(s, strlen(s)))
                return false;
        for (; *p; p++)
                if (*p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
                        return false;
        return true;
}
