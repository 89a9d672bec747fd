/* The node's own accounts, whose keys are never served: the names and uids
 * of its passwd file and the reserved system accounts of
 * modutil/reserved-accounts.h, the rule the nsscache module publishes by.
 *
 * An sshkey cache may come from any nsscache, or a mounted Secret, and
 * hold a line for `root`; with `files cache` in nsswitch.conf the local
 * entry wins the lookup, so such a line would be a key to the node's own
 * root.  Built on any thread; immutable once built.  Non-logging. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct AuthkeysLocal AuthkeysLocal;

/**
 * authkeys_local_load() - read the passwd-format file @passwd.
 * A missing file (or a NULL one) leaves the reserved accounts only.
 * Return: 0; -ENOMEM; -errno when the file cannot be read.
 */
int authkeys_local_load(const char *passwd, AuthkeysLocal **ret);

AuthkeysLocal *authkeys_local_free(AuthkeysLocal *l);
static inline void authkeys_local_freep(AuthkeysLocal **l) {
        if (*l)
                *l = authkeys_local_free(*l);
}

/* Whether the @len bytes at @name name a local account: a name of the
 * passwd file or a reserved one, or digits that spell a local or reserved
 * uid ("0", "00": taken for a uid by chown, find -user and sudo -u '#0'). */
bool authkeys_local_name(const AuthkeysLocal *l, const char *name, size_t len);

/* Whether @uid is one of the passwd file's or a reserved one. */
bool authkeys_local_uid(const AuthkeysLocal *l, uint32_t uid);
