#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check-mountinfo.h"
#include "util/macro.h"

/* mountinfo's \ooo escapes (space, tab, newline, backslash) decoded in place. */
static void unescape(char *s) {
        char *w = s;

        for (; *s; s++, w++) {
                if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
                    s[3] >= '0' && s[3] <= '7') {
                        *w = (char) ((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
                        s += 3;
                } else
                        *w = *s;
        }
        *w = 0;
}

static bool parse_ulong(const char *s, unsigned long *ret) {
        char *end;

        if (*s < '0' || *s > '9')
                return false;
        errno = 0;
        *ret = strtoul(s, &end, 10);
        return errno == 0 && *end == 0;
}

bool check_mountinfo_has_option(const char *opts, const char *opt) {
        size_t n = strlen(opt);

        for (const char *o = opts; o; o = strchr(o, ',') ? strchr(o, ',') + 1 : NULL)
                if (strncmp(o, opt, n) == 0 && (o[n] == ',' || o[n] == 0))
                        return true;
        return false;
}

bool check_mountinfo_parse(char *line, size_t len, CheckMountinfoLine *ret) {
        char *f[6], *type, *sb_opts, *sep;

        if (strlen(line) != len)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(f); i++)
                if (!(f[i] = strsep(&line, " ")) || !*f[i])
                        return false;
        do /* optional fields up to the "-" */
                sep = strsep(&line, " ");
        while (sep && !streq(sep, "-"));
        type = strsep(&line, " ");
        (void) strsep(&line, " "); /* source */
        sb_opts = strsep(&line, " ");
        if (!sep || isempty(type) || !sb_opts || line || strlen(type) >= CHECK_MOUNTINFO_FSTYPE_MAX ||
            !parse_ulong(f[0], &ret->id) || !parse_ulong(f[1], &ret->parent) || f[4][0] != '/')
                return false;
        unescape(f[4]);
        ret->path = f[4];
        ret->fs_type = type;
        ret->opts = f[5];
        ret->sb_opts = sb_opts;
        return true;
}
