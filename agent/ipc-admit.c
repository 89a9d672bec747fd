/* Who may use the control socket, counted per peer uid.
 *
 * A method's policy is its flags against the peer's SO_PEERCRED and
 * SO_PEERGROUPS (OpenSSH's mon_table permission flags, applied per method).
 * The credentials are read the first time something needs them: a policy
 * other than an anonymous method's, the per-uid accounting, a warning that
 * names the peer; the groups only for an allow list that names groups.
 *
 * A uid other than root holds at most max_connections_per_uid connections
 * and max_calls_per_uid unanswered calls, and the last reserved_connections
 * slots are for root and the modules' allow lists.  Below the number of open
 * connections where none of that can bite, a connection is admitted without
 * its credentials read; from there on every connection counts.  A uid's
 * refusals are logged once, then counted until it holds nothing.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "ipc-internal.h"
#include "log.h"
#include "util/macro.h"
#include "util/peer-cred.h"

/* A linear scan: there are at most max_connections entries holding
 * connections, and in practice a handful of distinct uids. */
static IpcUid *uid_find(Ipc *ipc, uid_t uid) {
        for (size_t i = 0; i < ipc->n_uids; i++)
                if (ipc->uids[i].uid == uid)
                        return &ipc->uids[i];
        return NULL;
}

IpcUid *ipc_admit_uid_get(Ipc *ipc, uid_t uid) {
        IpcUid *u = uid_find(ipc, uid);

        if (u)
                return u;
        u = reallocarray(ipc->uids, ipc->n_uids + 1, sizeof(IpcUid));
        if (!u)
                return NULL;
        ipc->uids = u;
        u = &ipc->uids[ipc->n_uids++];
        *u = (IpcUid){ .uid = uid };
        return u;
}

/* Drops the entry once it holds nothing; a refusal episode ends with it. */
static void uid_release(Ipc *ipc, IpcUid *u) {
        if (u->n_connections > 0 || u->n_calls > 0)
                return;
        if (u->n_refused > 0)
                log_info("uid=%u holds no connection to the socket any more; %u of its connections were "
                         "refused",
                         (unsigned) u->uid, u->n_refused);
        *u = ipc->uids[--ipc->n_uids];
}

void ipc_admit_put_connection(Ipc *ipc, uid_t uid) {
        IpcUid *u = uid_find(ipc, uid);

        if (!u)
                return;
        assert(u->n_connections > 0);
        u->n_connections--;
        uid_release(ipc, u);
}

void ipc_admit_put_call(Ipc *ipc, uid_t uid) {
        IpcUid *u = uid_find(ipc, uid);

        if (!u)
                return;
        assert(u->n_calls > 0);
        u->n_calls--;
        uid_release(ipc, u);
}

/* The peer's credentials, read the first time something needs them: the
 * policy of a method other than an anonymous one, the per-uid accounting,
 * a warning that names the peer. */
int ipc_admit_creds(IpcConnection *c) {
        socklen_t len = sizeof(struct ucred);

        if (c->creds_known)
                return 0;
        if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &c->ucred, &len) < 0)
                return -errno;
        c->creds_known = true;
        return 0;
}

/* Counts @c in its uid's connections, once. */
int ipc_admit_account(IpcConnection *c) {
        IpcUid *u;
        int r;

        if (c->accounted)
                return 0;
        r = ipc_admit_creds(c);
        if (r < 0)
                return r;
        u = ipc_admit_uid_get(c->ipc, c->ucred.uid);
        if (!u)
                return -ENOMEM;
        u->n_connections++;
        c->accounted = true;
        return 0;
}

static int allow_merge(IpcAllow *into, const IpcAllow *a) {
        uid_t *u;
        gid_t *g;

        u = reallocarray(into->uids, into->n_uids + a->n_uids ?: 1, sizeof(uid_t));
        if (!u)
                return -ENOMEM;
        into->uids = u;
        g = reallocarray(into->gids, into->n_gids + a->n_gids ?: 1, sizeof(gid_t));
        if (!g)
                return -ENOMEM;
        into->gids = g;
        memcpy(u + into->n_uids, a->uids, a->n_uids * sizeof(uid_t));
        into->n_uids += a->n_uids;
        memcpy(g + into->n_gids, a->gids, a->n_gids * sizeof(gid_t));
        into->n_gids += a->n_gids;
        return 0;
}

void ipc_admit_allow_clear(IpcAllow *a) {
        free(a->uids);
        free(a->gids);
        *a = (IpcAllow){ 0 };
}

int ipc_admit_set_privileged(Ipc *ipc, const IpcAllow *const *allows, size_t n) {
        IpcAllow p = { 0 };
        int r;

        if (!ipc || (n > 0 && !allows))
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                if (!allows[i])
                        continue;
                r = allow_merge(&p, allows[i]);
                if (r < 0) {
                        ipc_admit_allow_clear(&p);
                        return r;
                }
        }
        ipc_admit_allow_clear(&ipc->privileged);
        ipc->privileged = p;
        return 0;
}

static bool id_in(uint32_t id, const uint32_t *ids, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (ids[i] == id)
                        return true;
        return false;
}

static bool allow_matches(const IpcAllow *a, const struct ucred *u, const gid_t *groups, size_t n_groups) {
        if (id_in(u->uid, a->uids, a->n_uids))
                return true;
        if (id_in(u->gid, a->gids, a->n_gids))
                return true;
        for (size_t i = 0; i < n_groups; i++)
                if (id_in(groups[i], a->gids, a->n_gids))
                        return true;
        return false;
}

/* Most callers are root or call any-uid methods: their groups are never
 * read.  A failure to read them leaves none, which can only deny. */
static bool conn_matches(IpcConnection *c, const IpcAllow *a) {
        if (allow_matches(a, &c->ucred, NULL, 0))
                return true;
        if (a->n_gids == 0)
                return false;
        if (!c->groups_loaded) {
                c->groups_loaded = true;
                if (peer_cred_groups(c->fd, &c->groups, &c->n_groups) < 0)
                        c->n_groups = 0;
        }
        return allow_matches(a, &c->ucred, c->groups, c->n_groups);
}

bool ipc_admit_peer_allowed(IpcConnection *c, const IpcMethod *m) {
        if (c->ucred.uid == 0)
                return true;
        if (m->flags & SUNKD_METHOD_ANY_UID)
                return true;
        if (!(m->flags & SUNKD_METHOD_ALLOW) || !m->allow)
                return false;
        return conn_matches(c, m->allow);
}

/* The per-uid call limit; root is exempt. */
bool ipc_admit_call(IpcConnection *c) {
        Ipc *ipc = c->ipc;
        IpcUid *u;
        unsigned suppressed;

        if (c->ucred.uid == 0)
                return true;
        u = uid_find(ipc, c->ucred.uid);
        if (!u || u->n_calls < ipc->limits.max_calls_per_uid)
                return true;
        if (ratelimit_pass(&ipc->busy_rl, IPC_LOG_INTERVAL_USEC, 1, &suppressed))
                log_warning("uid=%u has %u calls unanswered, the limit per uid: refusing more%s",
                            (unsigned) c->ucred.uid, u->n_calls,
                            suppressed > 0 ? " (similar messages suppressed)" : "");
        return false;
}

static bool is_privileged(Ipc *ipc, IpcConnection *c) {
        return c->ucred.uid == 0 || conn_matches(c, &ipc->privileged);
}

/* A uid's refusals are logged at the first, then counted until it holds
 * nothing; a uid holding nothing is refused only at the global limits,
 * which are rate-limited instead. */
static void refuse_uid(Ipc *ipc, const IpcConnection *c, const char *why) {
        IpcUid *u = uid_find(ipc, c->ucred.uid);
        unsigned suppressed;

        if (u) {
                if (u->n_refused++ == 0)
                        log_warning("Refusing connections from uid=%u (pid=%u, %u open): %s",
                                    (unsigned) c->ucred.uid, (unsigned) c->ucred.pid, u->n_connections, why);
                return;
        }
        if (ratelimit_pass(&ipc->refuse_rl, IPC_LOG_INTERVAL_USEC, 1, &suppressed))
                log_warning("Refusing connection from uid=%u pid=%u: %s%s", (unsigned) c->ucred.uid,
                            (unsigned) c->ucred.pid, why,
                            suppressed > 0 ? " (more refusals suppressed)" : "");
}

/* Whether @c may take a slot: the last reserved_connections slots are for
 * root and privileged uids, and a uid other than root holds at most
 * max_connections_per_uid. */
static bool may_take_slot(Ipc *ipc, IpcConnection *c) {
        const IpcLimits *l = &ipc->limits;
        IpcUid *u;

        if (c->ucred.uid == 0)
                return true;
        if (ipc->n_connections + l->reserved_connections >= l->max_connections && !is_privileged(ipc, c)) {
                refuse_uid(ipc, c, "the remaining slots are reserved for root and the modules' allow lists");
                return false;
        }
        u = uid_find(ipc, c->ucred.uid);
        if (u && u->n_connections >= l->max_connections_per_uid) {
                refuse_uid(ipc, c, "limit of connections per uid reached");
                return false;
        }
        return true;
}

/* Below this many open connections no uid can hold max_connections_per_uid
 * and no reserved slot is at stake: who connects need not be known yet. */
static unsigned checked_from(const Ipc *ipc) {
        const IpcLimits *l = &ipc->limits;
        unsigned reserved_from = l->max_connections > l->reserved_connections
                                         ? l->max_connections - l->reserved_connections
                                         : 0;

        return MIN(l->max_connections_per_uid, reserved_from);
}

/* From there on every connection counts under its uid, those admitted
 * before without being asked too, so that the limits see them all. */
static int account_all(Ipc *ipc) {
        for (IpcConnection *i = ipc->connections; i; i = i->next) {
                int r = ipc_admit_account(i);

                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        log_debug_errno(r,
                                        "Cannot read the credentials of a connection, not counting it: %m");
        }
        return 0;
}

/* Whether the new connection @c, not yet counted, may stay.  Below
 * checked_from() open connections nothing is asked; from there on the
 * peer's credentials are read and every connection counts under its uid.
 * Returns 0, -EUSERS (refused, logged by may_take_slot()), or a negative errno. */
int ipc_admit_connection(Ipc *ipc, IpcConnection *c) {
        int r;

        if (ipc->n_connections < checked_from(ipc))
                return 0;
        r = account_all(ipc);
        if (r >= 0)
                r = ipc_admit_creds(c);
        if (r >= 0 && !may_take_slot(ipc, c))
                r = -EUSERS;
        if (r >= 0)
                r = ipc_admit_account(c);
        return r;
}
