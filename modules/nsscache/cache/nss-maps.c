/* The maps of one refresh, as plain arrays.
 *
 * NssMaps is deliberately a dumb container: the SCIM mapping fills it, the
 * cache writer reads it, and neither needs more than counting, naming and
 * freeing.  Map names are the ones nsscache.conf uses in `maps=` and in its
 * timestamp file names, so one table serves both directions.  Freeing
 * accepts half-built contents (NULL arrays with a count of zero, NULL
 * strings, NULL member/key vectors), because the mapping code frees on
 * every error path.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/macro.h"
#include "util/strv.h"

#include "nss-maps.h"

static const char *const map_names[_NSS_MAP_MAX] = {
        [NSS_MAP_PASSWD] = "passwd", [NSS_MAP_SHADOW] = "shadow",     [NSS_MAP_GROUP] = "group",
        [NSS_MAP_SSHKEY] = "sshkey", [NSS_MAP_NETGROUP] = "netgroup", [NSS_MAP_AUTOMOUNT] = "automount",
};

const char *nss_map_to_string(NssMapType t) {
        if ((int) t < 0 || t >= _NSS_MAP_MAX)
                return NULL;
        return map_names[t];
}

NssMapType nss_map_from_string(const char *s) {
        if (!s)
                return (NssMapType) -1;
        for (size_t i = 0; i < ELEMENTSOF(map_names); i++)
                if (streq(map_names[i], s))
                        return (NssMapType) i;
        return (NssMapType) -1;
}

static const size_t count_offsets[_NSS_MAP_MAX] = {
        [NSS_MAP_PASSWD] = offsetof(NssMaps, n_passwd),
        [NSS_MAP_SHADOW] = offsetof(NssMaps, n_shadow),
        [NSS_MAP_GROUP] = offsetof(NssMaps, n_group),
        [NSS_MAP_SSHKEY] = offsetof(NssMaps, n_sshkey),
        [NSS_MAP_NETGROUP] = offsetof(NssMaps, n_netgroup),
        [NSS_MAP_AUTOMOUNT] = offsetof(NssMaps, n_automount),
};

size_t nss_maps_count(const NssMaps *m, NssMapType t) {
        if (!m || (int) t < 0 || t >= _NSS_MAP_MAX)
                return 0;
        return *(const size_t *) ((const char *) m + count_offsets[t]);
}

void nss_maps_done(NssMaps *m) {
        if (!m)
                return;

        for (size_t i = 0; m->passwd && i < m->n_passwd; i++) {
                NssPasswd *p = m->passwd + i;
                free(p->name);
                free(p->passwd);
                free(p->gecos);
                free(p->dir);
                free(p->shell);
        }
        free(m->passwd);

        for (size_t i = 0; m->shadow && i < m->n_shadow; i++) {
                free(m->shadow[i].name);
                free(m->shadow[i].passwd);
        }
        free(m->shadow);

        for (size_t i = 0; m->group && i < m->n_group; i++) {
                free(m->group[i].name);
                free(m->group[i].passwd);
                strv_free(m->group[i].members);
        }
        free(m->group);

        for (size_t i = 0; m->sshkey && i < m->n_sshkey; i++) {
                free(m->sshkey[i].name);
                strv_free(m->sshkey[i].keys);
        }
        free(m->sshkey);

        for (size_t i = 0; m->netgroup && i < m->n_netgroup; i++) {
                free(m->netgroup[i].name);
                strv_free(m->netgroup[i].entries);
        }
        free(m->netgroup);

        for (size_t i = 0; m->automount && i < m->n_automount; i++) {
                free(m->automount[i].map);
                free(m->automount[i].key);
                free(m->automount[i].options);
                free(m->automount[i].location);
        }
        free(m->automount);

        *m = (NssMaps){};
}
