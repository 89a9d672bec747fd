#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "scim-collect.h"
#include "util/strv.h"

/* Where NssMaps keeps each map's entries; every entry starts with its name. */
static const struct {
        size_t array, count, size;
} layout[_NSS_MAP_MAX] = {
        [NSS_MAP_PASSWD] = { offsetof(NssMaps, passwd), offsetof(NssMaps, n_passwd), sizeof(NssPasswd) },
        [NSS_MAP_SHADOW] = { offsetof(NssMaps, shadow), offsetof(NssMaps, n_shadow), sizeof(NssShadow) },
        [NSS_MAP_GROUP] = { offsetof(NssMaps, group), offsetof(NssMaps, n_group), sizeof(NssGroup) },
        [NSS_MAP_SSHKEY] = { offsetof(NssMaps, sshkey), offsetof(NssMaps, n_sshkey), sizeof(NssSshkey) },
        [NSS_MAP_NETGROUP] = { offsetof(NssMaps, netgroup), offsetof(NssMaps, n_netgroup),
                               sizeof(NssNetgroup) },
        [NSS_MAP_AUTOMOUNT] = { offsetof(NssMaps, automount), offsetof(NssMaps, n_automount),
                                sizeof(NssAutomount) },
};

static char **array_of(NssMaps *m, NssMapType t) {
        return (char **) ((char *) m + layout[t].array);
}

static size_t *count_of(NssMaps *m, NssMapType t) {
        return (size_t *) ((char *) m + layout[t].count);
}

/* A fresh slot at the end of map @t. */
static void *slot(ScimCollect *c, NssMapType t) {
        char **a = array_of(&c->maps, t);
        size_t *n = count_of(&c->maps, t), size = layout[t].size;

        if (*n == c->cap[t]) {
                size_t cap = c->cap[t] ? c->cap[t] * 2 : 64;
                char *g = reallocarray(*a, cap, size);
                if (!g)
                        return NULL;
                *a = g;
                c->cap[t] = cap;
        }
        memset(*a + size * *n, 0, size);
        return *a + size * (*n)++;
}

static int copy(NssMapType t, void *dst, const void *src) {
        switch (t) {
        case NSS_MAP_PASSWD: {
                const NssPasswd *e = src;
                NssPasswd *p = dst;
                *p = (NssPasswd){ .name = strdup(e->name),
                                  .passwd = strdup(e->passwd),
                                  .uid = e->uid,
                                  .gid = e->gid,
                                  .gecos = strdup(e->gecos),
                                  .dir = strdup(e->dir),
                                  .shell = strdup(e->shell) };
                return p->name && p->passwd && p->gecos && p->dir && p->shell ? 0 : -ENOMEM;
        }
        case NSS_MAP_SHADOW: {
                const NssShadow *e = src;
                NssShadow *p = dst;
                *p = *e;
                p->name = strdup(e->name);
                p->passwd = strdup(e->passwd);
                return p->name && p->passwd ? 0 : -ENOMEM;
        }
        case NSS_MAP_GROUP: {
                const NssGroup *e = src;
                NssGroup *p = dst;
                *p = (NssGroup){ .name = strdup(e->name),
                                 .passwd = strdup(e->passwd),
                                 .gid = e->gid,
                                 .members = strv_copy(e->members) };
                return p->name && p->passwd && p->members ? 0 : -ENOMEM;
        }
        case NSS_MAP_SSHKEY: {
                const NssSshkey *e = src;
                NssSshkey *p = dst;
                *p = (NssSshkey){ .name = strdup(e->name), .keys = strv_copy(e->keys) };
                return p->name && p->keys ? 0 : -ENOMEM;
        }
        case NSS_MAP_AUTOMOUNT: {
                const NssAutomount *e = src;
                NssAutomount *p = dst;
                *p = (NssAutomount){ .map = e->map ? strdup(e->map) : NULL,
                                     .key = strdup(e->key),
                                     .options = e->options ? strdup(e->options) : NULL,
                                     .location = strdup(e->location) };
                return p->key && p->location && !!p->map == !!e->map && !!p->options == !!e->options
                               ? 0
                               : -ENOMEM;
        }
        case NSS_MAP_NETGROUP: {
                const NssNetgroup *e = src;
                NssNetgroup *p = dst;
                *p = (NssNetgroup){ .name = strdup(e->name), .entries = strv_copy(e->entries) };
                return p->name && p->entries ? 0 : -ENOMEM;
        }
        default:
                return -EINVAL;
        }
}

static int collect_add(void *data, NssMapType t, const void *entry, uint64_t *ret_at) {
        ScimCollect *c = data;
        size_t pos = *count_of(&c->maps, t);
        void *p;
        int r;

        /* The same entries as the rendering sink refuses. */
        r = cache_format_check(t, entry);
        if (r < 0)
                return r;
        p = slot(c, t);
        if (!p)
                return -ENOMEM;
        r = copy(t, p, entry);
        if (r < 0)
                return r; /* left in the map, freed with it */
        *ret_at = pos;
        return 0;
}

static const char *collect_name(void *data, NssMapType t, uint64_t at, char buf[static MAP_NAME_MAX + 1]) {
        ScimCollect *c = data;

        (void) buf;
        return *(char **) (*array_of(&c->maps, t) + layout[t].size * at);
}

/* Moves the displaced entries out of the array, then frees them. */
static int collect_cut(void *data, NssMapType t, const uint64_t *at, size_t n) {
        ScimCollect *c = data;
        char *a = *array_of(&c->maps, t), *bin;
        size_t *count = count_of(&c->maps, t), size = layout[t].size, kept = 0, k = 0;
        NssMaps trash = {};

        if (n == 0)
                return 0;
        bin = calloc(n, size);
        if (!bin)
                return -ENOMEM;
        for (size_t i = 0; i < *count; i++) {
                if (k < n && at[k] == i)
                        memcpy(bin + size * k++, a + size * i, size);
                else
                        memmove(a + size * kept++, a + size * i, size);
        }
        *count = kept;
        *array_of(&trash, t) = bin;
        *count_of(&trash, t) = n;
        nss_maps_done(&trash);
        return 0;
}

MapSink scim_collect_sink(ScimCollect *c) {
        return (MapSink){ collect_add, collect_name, collect_cut, c };
}

void scim_collect_take(ScimCollect *c, NssMaps *ret) {
        *ret = c->maps;
        *c = (ScimCollect){};
}

void scim_collect_done(ScimCollect *c) {
        nss_maps_done(&c->maps);
        *c = (ScimCollect){};
}
