/* The node's own accounts: sorted names and uids, looked up by binary
 * search, so that the map builder's one question per user costs a few
 * comparisons whatever the size of the passwd file. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "modutil/colon-file.h"
#include "util/macro.h"
#include "modutil/reserved-accounts.h"

#include "authkeys-local.h"

typedef struct Name {
        char *s;
        size_t len;
} Name;

struct AuthkeysLocal {
        Name *names;
        uint32_t *uids;
        size_t n_names, n_uids, cap;
};

AuthkeysLocal *authkeys_local_free(AuthkeysLocal *l) {
        if (!l)
                return NULL;
        for (size_t i = 0; i < l->n_names; i++)
                free(l->names[i].s);
        free(l->names);
        free(l->uids);
        return mfree(l);
}

/* Both arrays share one capacity: a line adds at most one to each. */
static int reserve(AuthkeysLocal *l) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        Name *n;
        uint32_t *u;

        if (l->n_names < l->cap)
                return 0;
        n = reallocarray(l->names, cap, sizeof(Name));
        if (!n)
                return -ENOMEM;
        l->names = n;
        u = reallocarray(l->uids, cap, sizeof(uint32_t));
        if (!u)
                return -ENOMEM;
        l->uids = u;
        l->cap = cap;
        return 0;
}

static int add_line(const char *name, size_t len, int64_t id, void *userdata) {
        AuthkeysLocal *l = userdata;
        char *s;

        /* all @len bytes, a NUL among them too: name_compare() reads them all */
        if (reserve(l) < 0 || !(s = malloc(len + 1)))
                return -ENOMEM;
        memcpy(s, name, len);
        s[len] = '\0';
        l->names[l->n_names++] = (Name){ s, len };
        if (id >= 0)
                l->uids[l->n_uids++] = (uint32_t) id;
        return 0;
}

static int name_compare(const void *a, const void *b) {
        const Name *x = a, *y = b;
        int c = memcmp(x->s, y->s, MIN(x->len, y->len));

        if (c != 0)
                return c;
        return x->len < y->len ? -1 : x->len > y->len;
}

static int uid_compare(const void *a, const void *b) {
        uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;

        return x < y ? -1 : x > y;
}

int authkeys_local_load(const char *passwd, AuthkeysLocal **ret) {
        _cleanup_(authkeys_local_freep) AuthkeysLocal *l = calloc(1, sizeof(AuthkeysLocal));
        int r;

        if (!l)
                return -ENOMEM;
        r = colon_file_read(passwd, add_line, l);
        if (r < 0)
                return r;
        if (l->n_names > 0)
                qsort(l->names, l->n_names, sizeof(Name), name_compare);
        if (l->n_uids > 0)
                qsort(l->uids, l->n_uids, sizeof(uint32_t), uid_compare);
        *ret = TAKE_PTR(l);
        return 0;
}

bool authkeys_local_uid(const AuthkeysLocal *l, uint32_t uid) {
        return reserved_account_id(uid) ||
               (l->n_uids > 0 && bsearch(&uid, l->uids, l->n_uids, sizeof(uint32_t), uid_compare));
}

/* The uid that all-digit @name spells, or -1: leading zeros count, as for strtoul(). */
static int64_t name_as_uid(const char *name, size_t len) {
        int64_t v = 0;

        if (len == 0)
                return -1;
        for (size_t i = 0; i < len; i++) {
                if (name[i] < '0' || name[i] > '9')
                        return -1;
                v = v * 10 + (name[i] - '0');
                if (v > UINT32_MAX)
                        return -1;
        }
        return v;
}

bool authkeys_local_name(const AuthkeysLocal *l, const char *name, size_t len) {
        Name key = { (char *) name, len };
        int64_t uid;

        if (reserved_account_name(name, len))
                return true;
        if (l->n_names > 0 && bsearch(&key, l->names, l->n_names, sizeof(Name), name_compare))
                return true;
        uid = name_as_uid(name, len);
        return uid >= 0 && authkeys_local_uid(l, (uint32_t) uid);
}
