#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/macro.h"

#include "health-check.h"

const HealthCheckType *const health_check_types[] = {
        &health_check_mount,       &health_check_disk_free,
        &health_check_inodes_free, &health_check_memory,
        &health_check_process,     &health_check_file,
        &health_check_load,        &health_check_ib,
        &health_check_munge,       NULL,
};

const HealthCheckType *health_check_type_find(const char *name) {
        if (!name)
                return NULL;
        for (size_t i = 0; health_check_types[i]; i++)
                if (streq(health_check_types[i]->name, name))
                        return health_check_types[i];
        return NULL;
}

/* The length of @s cut to at most @len bytes without splitting a UTF-8
 * sequence: a name or path shown in a drain reason stays valid text. */
static size_t utf8_cut(const char *s, size_t len) {
        size_t i = len, need;
        unsigned char lead;

        while (i > 0 && len - i < 3 && ((unsigned char) s[i - 1] & 0xC0) == 0x80)
                i--;
        if (i == 0)
                return len;
        lead = (unsigned char) s[i - 1];
        if (lead < 0xC0)
                return len;
        need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
        return len - (i - 1) < need ? i - 1 : len;
}

/* One printable line: control bytes (newlines, escapes) become '?'. */
static void one_line(char *s) {
        for (; *s; s++)
                if ((unsigned char) *s < 0x20 || *s == 0x7f)
                        *s = '?';
}

void health_result_set(HealthResult *ret, HealthStatus status, const char *code, const char *fmt, ...) {
        va_list ap;
        int n;

        ret->status = status;
        snprintf(ret->code, sizeof(ret->code), "%s", code ?: "");
        one_line(ret->code);
        va_start(ap, fmt);
        n = vsnprintf(ret->detail, sizeof(ret->detail), fmt, ap);
        va_end(ap);
        if (n < 0)
                ret->detail[0] = 0;
        else if ((size_t) n >= sizeof(ret->detail))
                ret->detail[utf8_cut(ret->detail, sizeof(ret->detail) - 1)] = 0;
        one_line(ret->detail);
}
