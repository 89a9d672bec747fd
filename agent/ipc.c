/* The control socket server.
 *
 * Every connection is a small state machine driven by up to three sd-event
 * sources of its own, each created the first time it is needed and then
 * re-armed, never re-created.  A one-shot client (sunkctl, sunkd-authkeys)
 * sends its call and shuts down its sending side: such a connection is
 * read, answered and closed inside the accept callback and never costs an
 * epoll registration, a timer or a second loop iteration.
 *
 *   io     the socket; EPOLLIN only while we want a request (no call in
 *          flight, no reply waiting to go out), EPOLLOUT only while a reply
 *          is buffered.  Not reading is the backpressure: a peer that
 *          pipelines requests leaves them in the kernel until its current
 *          call is answered and the answer is on its way, so one connection
 *          holds at most one request buffer (max_request) and one reply.
 *   idle   a one-shot timer: idle_timeout after the last read or write,
 *          but no later than request_timeout after the first byte of a
 *          request still incomplete, so a trickle cannot keep a
 *          connection; off while a call is pending (then it is our turn,
 *          not the peer's).
 *   defer  "look at this connection again soon": used when a reply arrives
 *          from outside the connection's own callbacks (a pending call
 *          answered from a timer or a job), so a reply never recurses into
 *          the next request's handler and never frees anything under its
 *          caller.
 *
 * A connection is freed only from its own callbacks or from ipc_free().
 * A call (struct sunkd_call) is owned by whoever must answer it; when the
 * peer hangs up first, the call is orphaned (its connection pointer
 * cleared) and the eventual reply just frees it.  While the handler runs
 * synchronously the dispatcher keeps the call alive, so a handler replying
 * twice gets -EALREADY instead of a use-after-free.
 *
 * Methods live in one array sorted by name and are found by bsearch(); the
 * policy check is the method's flags against the peer's SO_PEERCRED and
 * SO_PEERGROUPS, read once at accept (OpenSSH's mon_table permission flags,
 * applied per method).
 *
 * Peers are not trusted: every malformed frame gets one InvalidMessage reply
 * and the connection is closed after it is flushed; nothing a peer sends
 * affects another connection.  Refusals and limits are logged at warning,
 * rate-limited, with the peer's uid and pid; everything else at debug.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ipc.h"
#include "log.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "util/rand-util.h"
#include "util/time-util.h"
#include "varlink.h"

#define IPC_READ_CHUNK 4096
#define IPC_ACCEPT_BATCH 64
#define IPC_ACCEPT_RETRY_USEC (100 * USEC_PER_MSEC)
#define IPC_LOG_INTERVAL_USEC (10 * USEC_PER_SEC)
#define IPC_LOG_BURST 5
#define IPC_GROUPS_INITIAL 32

typedef struct Ratelimit {
        uint64_t begin;
        unsigned n;
        unsigned suppressed;
} Ratelimit;

typedef struct IpcMethod {
        char *name;
        unsigned flags;
        IpcMethodFn fn;
        void *userdata;
        const IpcAllow *allow;
        const void *owner;
} IpcMethod;

typedef struct IpcConnection IpcConnection;

/* What one peer uid holds; present while it holds anything. */
typedef struct IpcUid {
        uid_t uid;
        unsigned n_connections;
        unsigned n_calls;   /* unanswered, orphaned ones included */
        unsigned n_refused; /* since the first refusal, which was logged */
} IpcUid;

struct sunkd_call {
        Ipc *ipc;                  /* NULL after ipc_free() */
        sunkd_call *prev, *next;   /* in ipc->calls */
        IpcConnection *connection; /* NULL once the peer is gone */
        json_object *message;      /* owns method and parameters */
        const char *method;
        const void *owner;
        struct ucred ucred;
        void (*gone_cb)(sunkd_call *call, void *userdata);
        void *gone_userdata;
        bool accounted;    /* counted in its uid's n_calls */
        bool gone_pending; /* gone_cb is due */
        bool oneway;
        bool replied;
        bool dispatching;
};

struct IpcConnection {
        Ipc *ipc;
        IpcConnection *prev, *next;
        int fd;
        sd_event_source *io;
        sd_event_source *idle;
        sd_event_source *defer;
        struct ucred ucred; /* valid once creds_known */
        bool creds_known;
        bool accounted; /* counted in its uid's n_connections */
        gid_t *groups; /* read when a policy first needs them */
        size_t n_groups;
        bool groups_loaded;
        uint64_t active_usec;  /* the last read, write or reply */
        uint64_t request_usec; /* when the partial request in `in` began; 0: none */
        uint64_t armed_usec;   /* what the idle timer is set to */

        /* Input: bytes [in_start, in_len) are unconsumed, [in_start, in_scanned) hold no NUL. */
        char *in;
        size_t in_alloc, in_start, in_scanned, in_len;
        /* Output: bytes [out_done, out_len) are still to be written. */
        char *out;
        size_t out_done, out_len;

        sunkd_call *call; /* the call in flight */
        bool eof;         /* the peer shut down its sending side */
        bool closing;     /* close once the output is flushed */
        bool dead;        /* close at the next chance */
};

struct Ipc {
        sd_event *event;
        IpcLimits limits;

        int listen_fd;
        sd_event_source *listen_source;
        sd_event_source *accept_retry;
        char *path; /* bound by ipc_listen(); removed by ipc_free() if still ours */
        dev_t path_dev;
        ino_t path_ino;

        IpcMethod *methods; /* sorted by name */
        size_t n_methods;

        IpcConnection *connections;
        unsigned n_connections;
        IpcUid *uids;
        size_t n_uids;
        sunkd_call *calls; /* every call not yet freed */
        sd_event_source *gone_defer;
        IpcAllow privileged; /* owned copy */
        const void **suspended;
        size_t n_suspended;

        Ratelimit refuse_rl; /* connection limit and accept errors */
        Ratelimit deny_rl;   /* policy refusals */
        Ratelimit reply_rl;  /* replies we could not send as they were */
        Ratelimit busy_rl;   /* per-uid call limit */
};

static bool ratelimit_pass(Ratelimit *rl, unsigned burst, unsigned *ret_suppressed) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        if (rl->begin == 0 || now - rl->begin >= IPC_LOG_INTERVAL_USEC) {
                rl->begin = now;
                rl->n = 0;
        }
        if (rl->n >= burst) {
                rl->suppressed++;
                return false;
        }
        rl->n++;
        *ret_suppressed = rl->suppressed;
        rl->suppressed = 0;
        return true;
}

/* ---- Per-uid accounting ------------------------------------------------- */

/* A linear scan: there are at most max_connections entries holding
 * connections, and in practice a handful of distinct uids. */
static IpcUid *ipc_uid_find(Ipc *ipc, uid_t uid) {
        for (size_t i = 0; i < ipc->n_uids; i++)
                if (ipc->uids[i].uid == uid)
                        return &ipc->uids[i];
        return NULL;
}

static IpcUid *ipc_uid_get(Ipc *ipc, uid_t uid) {
        IpcUid *u = ipc_uid_find(ipc, uid);

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
static void ipc_uid_release(Ipc *ipc, IpcUid *u) {
        if (u->n_connections > 0 || u->n_calls > 0)
                return;
        if (u->n_refused > 0)
                log_info("uid=%u holds no connection to the socket any more; %u of its connections were refused",
                         (unsigned) u->uid, u->n_refused);
        *u = ipc->uids[--ipc->n_uids];
}

static void ipc_uid_put_connection(Ipc *ipc, uid_t uid) {
        IpcUid *u = ipc_uid_find(ipc, uid);

        if (!u)
                return;
        assert(u->n_connections > 0);
        u->n_connections--;
        ipc_uid_release(ipc, u);
}

static void ipc_uid_put_call(Ipc *ipc, uid_t uid) {
        IpcUid *u = ipc_uid_find(ipc, uid);

        if (!u)
                return;
        assert(u->n_calls > 0);
        u->n_calls--;
        ipc_uid_release(ipc, u);
}

/* The peer's credentials, read the first time something needs them: the
 * policy of a method other than an anonymous one, the per-uid accounting,
 * a warning that names the peer. */
static int conn_creds(IpcConnection *c) {
        socklen_t len = sizeof(struct ucred);

        if (c->creds_known)
                return 0;
        if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &c->ucred, &len) < 0)
                return -errno;
        c->creds_known = true;
        return 0;
}

/* Counts @c in its uid's connections, once. */
static int conn_account(IpcConnection *c) {
        IpcUid *u;
        int r;

        if (c->accounted)
                return 0;
        r = conn_creds(c);
        if (r < 0)
                return r;
        u = ipc_uid_get(c->ipc, c->ucred.uid);
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

static void allow_clear(IpcAllow *a) {
        free(a->uids);
        free(a->gids);
        *a = (IpcAllow){ 0 };
}

int ipc_set_privileged(Ipc *ipc, const IpcAllow *const *allows, size_t n) {
        IpcAllow p = { 0 };
        int r;

        if (!ipc || (n > 0 && !allows))
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                if (!allows[i])
                        continue;
                r = allow_merge(&p, allows[i]);
                if (r < 0) {
                        allow_clear(&p);
                        return r;
                }
        }
        allow_clear(&ipc->privileged);
        ipc->privileged = p;
        return 0;
}

/* ---- Methods ------------------------------------------------------------ */

static int method_compare(const void *key, const void *elem) {
        return strcmp(key, ((const IpcMethod *) elem)->name);
}

static IpcMethod *ipc_find_method(Ipc *ipc, const char *name) {
        if (ipc->n_methods == 0)
                return NULL;
        return bsearch(name, ipc->methods, ipc->n_methods, sizeof(IpcMethod), method_compare);
}

static const unsigned policy_flags = SUNKD_METHOD_ROOT | SUNKD_METHOD_ANY_UID | SUNKD_METHOD_ALLOW;

int ipc_add_method(Ipc *ipc, const char *name, unsigned flags, IpcMethodFn fn, void *userdata,
                   const IpcAllow *allow, const void *owner) {
        unsigned policy = flags & policy_flags;
        size_t lo = 0, hi;
        IpcMethod *m;
        char *n;

        if (!ipc || !name || !fn)
                return -EINVAL;
        if (!varlink_method_name_is_valid(name, strlen(name)))
                return -EINVAL;
        /* Exactly one policy bit, nothing else; anonymous only for any uid. */
        if ((flags & ~(policy_flags | IPC_METHOD_ANONYMOUS)) || policy == 0 || (policy & (policy - 1)) ||
            ((flags & IPC_METHOD_ANONYMOUS) && policy != SUNKD_METHOD_ANY_UID))
                return -EINVAL;

        hi = ipc->n_methods;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(name, ipc->methods[mid].name);

                if (c == 0)
                        return -EEXIST;
                if (c < 0)
                        hi = mid;
                else
                        lo = mid + 1;
        }

        n = strdup(name);
        if (!n)
                return -ENOMEM;
        m = reallocarray(ipc->methods, ipc->n_methods + 1, sizeof(IpcMethod));
        if (!m) {
                free(n);
                return -ENOMEM;
        }
        ipc->methods = m;
        memmove(m + lo + 1, m + lo, (ipc->n_methods - lo) * sizeof(IpcMethod));
        m[lo] = (IpcMethod){
                .name = n,
                .flags = flags,
                .fn = fn,
                .userdata = userdata,
                .allow = allow,
                .owner = owner,
        };
        ipc->n_methods++;
        return 0;
}

static bool ipc_owner_suspended(Ipc *ipc, const void *owner) {
        for (size_t i = 0; i < ipc->n_suspended; i++)
                if (ipc->suspended[i] == owner)
                        return true;
        return false;
}

void ipc_suspend_owner(Ipc *ipc, const void *owner) {
        const void **s;

        if (!ipc || ipc_owner_suspended(ipc, owner))
                return;
        s = reallocarray(ipc->suspended, ipc->n_suspended + 1, sizeof(void *));
        if (!s) {
                /* Without the entry the calls are still dispatched, and still
                 * answered at ipc_remove_methods(): degraded, not broken. */
                log_oom();
                return;
        }
        ipc->suspended = s;
        s[ipc->n_suspended++] = owner;
}

static void ipc_unsuspend_owner(Ipc *ipc, const void *owner) {
        for (size_t i = 0; i < ipc->n_suspended; i++)
                if (ipc->suspended[i] == owner) {
                        ipc->suspended[i] = ipc->suspended[--ipc->n_suspended];
                        return;
                }
}

static int ipc_reply_internal(sunkd_call *call, const char *error, json_object *params);

/* Answers every unanswered call of @owner, so no client waits for a module
 * that is going away. */
static void ipc_abandon_calls(Ipc *ipc, const void *owner) {
        sunkd_call *next;

        for (sunkd_call *call = ipc->calls; call; call = next) {
                next = call->next; /* a reply frees the call, nothing else */
                if (call->owner != owner)
                        continue;
                call->gone_cb = NULL;
                call->gone_pending = false;
                if (!call->replied)
                        (void) ipc_reply_internal(call, "io.sunkd.Unavailable", NULL);
        }
}

void ipc_remove_methods(Ipc *ipc, const void *owner) {
        size_t j = 0;

        if (!ipc)
                return;
        ipc_abandon_calls(ipc, owner);
        ipc_unsuspend_owner(ipc, owner);
        for (size_t i = 0; i < ipc->n_methods; i++) {
                if (ipc->methods[i].owner == owner) {
                        free(ipc->methods[i].name);
                        continue;
                }
                ipc->methods[j++] = ipc->methods[i];
        }
        ipc->n_methods = j;
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

static int conn_read_groups(IpcConnection *c);

/* Most callers are root or call any-uid methods: their groups are never
 * read.  A failure to read them leaves none, which can only deny. */
static bool conn_matches(IpcConnection *c, const IpcAllow *a) {
        if (allow_matches(a, &c->ucred, NULL, 0))
                return true;
        if (a->n_gids == 0)
                return false;
        if (!c->groups_loaded) {
                c->groups_loaded = true;
                if (conn_read_groups(c) < 0)
                        c->n_groups = 0;
        }
        return allow_matches(a, &c->ucred, c->groups, c->n_groups);
}

static bool ipc_peer_allowed(IpcConnection *c, const IpcMethod *m) {
        if (c->ucred.uid == 0)
                return true;
        if (m->flags & SUNKD_METHOD_ANY_UID)
                return true;
        if (!(m->flags & SUNKD_METHOD_ALLOW) || !m->allow)
                return false;
        return conn_matches(c, m->allow);
}

/* ---- Calls -------------------------------------------------------------- */

static sunkd_call *call_free(sunkd_call *call) {
        Ipc *ipc;

        if (!call)
                return NULL;
        ipc = call->ipc;
        if (ipc) {
                if (call->prev)
                        call->prev->next = call->next;
                else
                        ipc->calls = call->next;
                if (call->next)
                        call->next->prev = call->prev;
                if (call->accounted)
                        ipc_uid_put_call(ipc, call->ucred.uid);
        }
        json_object_put(call->message);
        free(call);
        return NULL;
}

static void call_link(Ipc *ipc, sunkd_call *call) {
        call->ipc = ipc;
        call->next = ipc->calls;
        if (call->next)
                call->next->prev = call;
        ipc->calls = call;
}

/* The peer is gone: the owner's callback runs from the loop, not from
 * under whatever freed the connection. */
static void call_orphan(sunkd_call *call) {
        call->connection = NULL;
        if (call->gone_cb && call->ipc) {
                call->gone_pending = true;
                (void) sd_event_source_set_enabled(call->ipc->gone_defer, SD_EVENT_ONESHOT);
        }
}

static int ipc_on_gone(sd_event_source *s, void *userdata) {
        Ipc *ipc = userdata;
        sunkd_call *call;

        /* Rescan after each callback: it may answer (free) any call. */
        do {
                for (call = ipc->calls; call && !call->gone_pending; call = call->next)
                        ;
                if (call) {
                        call->gone_pending = false;
                        call->gone_cb(call, call->gone_userdata);
                }
        } while (call);
        return 0;
}

int ipc_call_on_gone(sunkd_call *call, void (*cb)(sunkd_call *call, void *userdata), void *userdata) {
        if (!call || call->replied)
                return -EINVAL;
        call->gone_cb = cb;
        call->gone_userdata = userdata;
        call->gone_pending = false;
        if (cb && !call->connection && call->ipc) {
                call->gone_pending = true;
                (void) sd_event_source_set_enabled(call->ipc->gone_defer, SD_EVENT_ONESHOT);
        }
        return 0;
}

uid_t ipc_call_uid(sunkd_call *call) {
        return call ? call->ucred.uid : (uid_t) -1;
}

gid_t ipc_call_gid(sunkd_call *call) {
        return call ? call->ucred.gid : (gid_t) -1;
}

pid_t ipc_call_pid(sunkd_call *call) {
        return call ? call->ucred.pid : 0;
}

const char *ipc_call_method(sunkd_call *call) {
        return call ? call->method : NULL;
}

bool ipc_call_is_orphaned(sunkd_call *call) {
        return !call || !call->connection;
}

/* ---- Connections: output ------------------------------------------------ */

/* {"error": error, "parameters": params} (error may be NULL); takes @params. */
static int reply_format(const char *error, json_object *params, char **ret, size_t *ret_len) {
        _cleanup_json_ json_object *p = params, *msg = NULL;

        if (!p) {
                p = json_object_new_object();
                if (!p)
                        return -ENOMEM;
        }
        msg = json_object_new_object();
        if (!msg)
                return -ENOMEM;
        if (error) {
                json_object *e = json_object_new_string(error);

                if (!e || json_object_object_add(msg, "error", e) < 0) {
                        json_object_put(e);
                        return -ENOMEM;
                }
        }
        if (json_object_object_add(msg, "parameters", p) < 0)
                return -ENOMEM;
        TAKE_PTR(p);
        return varlink_format(msg, ret, ret_len);
}

static json_object *errno_params(int error) {
        _cleanup_json_ json_object *p = json_object_new_object();
        const char *desc = strerrordesc_np(error);

        if (!p)
                return NULL;
        if (json_object_object_add(p, "errno", json_object_new_int(error)) < 0 ||
            json_object_object_add(p, "message", json_object_new_string(desc ?: "Unknown error")) < 0)
                return NULL;
        return TAKE_PTR(p);
}

static int conn_append(IpcConnection *c, char *buf, size_t len) {
        char *n;

        if (c->out_len == 0) {
                free(c->out);
                c->out = buf;
                c->out_len = len;
                c->out_done = 0;
                return 0;
        }
        n = realloc(c->out, c->out_len + len);
        if (!n) {
                free(buf);
                return -ENOMEM;
        }
        memcpy(n + c->out_len, buf, len);
        free(buf);
        c->out = n;
        c->out_len += len;
        return 0;
}

/* Queue a reply; takes @params.  A reply that cannot go out as it is (over
 * max_reply, or not UTF-8) is replaced by an error the peer can parse. */
static int conn_send(IpcConnection *c, const char *method, const char *error, json_object *params) {
        Ipc *ipc = c->ipc;
        _cleanup_free_ char *buf = NULL;
        const char *fallback = NULL;
        json_object *fallback_params = NULL;
        unsigned suppressed;
        size_t len = 0;
        int r;

        r = reply_format(error, params, &buf, &len);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                fallback = "io.sunkd.InternalError";
                fallback_params = errno_params(-r);
        } else if (len > ipc->limits.max_reply) {
                fallback = "io.sunkd.ReplyTooLarge";
                fallback_params = json_object_new_object();
                if (fallback_params) {
                        json_object_object_add(fallback_params, "size", json_object_new_int64((int64_t) len));
                        json_object_object_add(fallback_params, "max",
                                               json_object_new_int64((int64_t) ipc->limits.max_reply));
                }
        }
        if (fallback) {
                (void) conn_creds(c);
                if (ratelimit_pass(&ipc->reply_rl, IPC_LOG_BURST, &suppressed))
                        log_warning("Reply to %s for uid=%u pid=%u replaced by %s (%zu bytes, limit %zu)%s",
                                    method ?: "request", (unsigned) c->ucred.uid, (unsigned) c->ucred.pid,
                                    fallback, len, ipc->limits.max_reply,
                                    suppressed > 0 ? ", more suppressed" : "");
                free(TAKE_PTR(buf));
                if (!fallback_params)
                        return -ENOMEM;
                r = reply_format(fallback, fallback_params, &buf, &len);
                if (r < 0)
                        return r;
        }
        return conn_append(c, TAKE_PTR(buf), len);
}

/* A frame we cannot take: say why, then close once that is flushed. */
static int conn_fail(IpcConnection *c, const char *reason) {
        json_object *p;

        log_debug("Rejecting message from uid=%u pid=%u: %s", (unsigned) c->ucred.uid,
                  (unsigned) c->ucred.pid, reason);
        c->closing = true;
        p = json_object_new_object();
        if (!p || json_object_object_add(p, "reason", json_object_new_string(reason)) < 0) {
                json_object_put(p);
                return -ENOMEM;
        }
        return conn_send(c, NULL, "io.sunkd.InvalidMessage", p);
}

/* ---- Connections: lifecycle --------------------------------------------- */

static IpcConnection *conn_free(IpcConnection *c) {
        if (!c)
                return NULL;

        log_debug("Closing connection of uid=%u pid=%u", (unsigned) c->ucred.uid, (unsigned) c->ucred.pid);
        if (c->call) {
                call_orphan(c->call);
                c->call = NULL;
        }
        sd_event_source_disable_unref(c->io);
        sd_event_source_disable_unref(c->idle);
        sd_event_source_disable_unref(c->defer);
        if (c->fd >= 0)
                close(c->fd);
        free(c->in);
        free(c->out);
        free(c->groups);

        if (c->prev)
                c->prev->next = c->next;
        else
                c->ipc->connections = c->next;
        if (c->next)
                c->next->prev = c->prev;
        c->ipc->n_connections--;
        if (c->accounted)
                ipc_uid_put_connection(c->ipc, c->ucred.uid);
        free(c);
        return NULL;
}

static uint64_t usec_add(uint64_t a, uint64_t b) {
        return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t ipc_now(Ipc *ipc) {
        uint64_t t;

        if (sd_event_now(ipc->event, CLOCK_MONOTONIC, &t) < 0)
                t = now_usec(CLOCK_MONOTONIC);
        return t;
}

static void conn_touch(IpcConnection *c) {
        c->active_usec = ipc_now(c->ipc);
}

/* Off while a call is pending (our turn); otherwise the idle timeout from the
 * last activity, and no later than request_timeout after the first byte of
 * a partial request, so trickling bytes does not keep a connection. */
static int conn_on_idle(sd_event_source *s, uint64_t usec, void *userdata);

static void conn_disarm_timer(IpcConnection *c) {
        if (c->idle)
                (void) sd_event_source_set_enabled(c->idle, SD_EVENT_OFF);
        c->armed_usec = 0;
}

static int conn_arm_timer(IpcConnection *c) {
        const IpcLimits *l = &c->ipc->limits;
        uint64_t when;
        int r;

        if (c->call) {
                conn_disarm_timer(c);
                return 0;
        }
        when = usec_add(c->active_usec, l->idle_timeout_usec);
        if (c->in_len > c->in_start) {
                if (c->request_usec == 0)
                        c->request_usec = ipc_now(c->ipc);
                when = MIN(when, usec_add(c->request_usec, l->request_timeout_usec));
        } else
                c->request_usec = 0;
        if (when == c->armed_usec)
                return 0;
        if (!c->idle) {
                r = sd_event_add_time(c->ipc->event, &c->idle, CLOCK_MONOTONIC, when,
                                      MIN(l->idle_timeout_usec / 20, USEC_PER_SEC), conn_on_idle, c);
                if (r < 0)
                        return r;
        } else {
                r = sd_event_source_set_time(c->idle, when);
                if (r >= 0)
                        r = sd_event_source_set_enabled(c->idle, SD_EVENT_ONESHOT);
                if (r < 0)
                        return r;
        }
        c->armed_usec = when;
        return 0;
}

static int conn_on_defer(sd_event_source *s, void *userdata);

/* A reply from outside the connection's callbacks: look again from the loop.
 * Without memory for the defer source, EPOLLOUT on a writable socket does
 * the same one iteration later. */
static void conn_kick(IpcConnection *c) {
        int r;

        if (c->defer)
                r = sd_event_source_set_enabled(c->defer, SD_EVENT_ONESHOT);
        else
                r = sd_event_add_defer(c->ipc->event, &c->defer, conn_on_defer, c);
        if (r < 0 && c->io)
                (void) sd_event_source_set_io_events(c->io, EPOLLOUT);
}

static int conn_on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata);

/* Registered only once the connection has to wait for something; a pending
 * call keeps the registration with no events, for the hangup. */
static int conn_update_events(IpcConnection *c) {
        uint32_t events = 0;
        int r;

        if (c->out_done < c->out_len)
                events |= EPOLLOUT;
        if (!c->call && c->out_len == 0 && !c->eof && !c->closing)
                events |= EPOLLIN;
        if (!c->io)
                r = sd_event_add_io(c->ipc->event, &c->io, c->fd, events, conn_on_io, c);
        else
                r = sd_event_source_set_io_events(c->io, events);
        if (r < 0)
                return r;
        return conn_arm_timer(c);
}

/* ---- Connections: input ------------------------------------------------- */

static const char *parse_error_reason(int r) {
        static const struct {
                int error;
                const char *reason;
        } reasons[] = {
                { EMSGSIZE, "message too large" },
                { EILSEQ, "not valid UTF-8, or contains a NUL" },
                { ELOOP, "nested too deeply" },
                { ENOTUNIQ, "duplicate key" },
                { EBADMSG, "not a well-formed JSON object" },
        };

        for (size_t i = 0; i < ELEMENTSOF(reasons); i++)
                if (reasons[i].error == -r)
                        return reasons[i].reason;
        return "invalid message";
}

/* The per-uid call limit; root is exempt. */
static bool conn_may_call(IpcConnection *c) {
        Ipc *ipc = c->ipc;
        IpcUid *u;
        unsigned suppressed;

        if (c->ucred.uid == 0)
                return true;
        u = ipc_uid_find(ipc, c->ucred.uid);
        if (!u || u->n_calls < ipc->limits.max_calls_per_uid)
                return true;
        if (ratelimit_pass(&ipc->busy_rl, 1, &suppressed))
                log_warning("uid=%u has %u calls unanswered, the limit per uid: refusing more%s",
                            (unsigned) c->ucred.uid, u->n_calls, suppressed > 0 ? " (similar messages suppressed)" : "");
        return false;
}

static int conn_dispatch(IpcConnection *c, const char *frame, size_t len) {
        Ipc *ipc = c->ipc;
        _cleanup_json_ json_object *msg = NULL;
        json_object *params, *o;
        const char *method;
        const IpcMethod *m;
        unsigned suppressed;
        sunkd_call *call;
        IpcUid *u;
        bool oneway, anonymous;
        int r;

        r = varlink_parse(frame, len, ipc->limits.max_request - 1, ipc->limits.max_depth, &msg);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return conn_fail(c, parse_error_reason(r));
        r = varlink_parse_call(msg, &method, &params);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return conn_fail(c, "not a method call");
        oneway = json_object_object_get_ex(msg, "oneway", &o) && json_object_get_boolean(o);

        m = ipc_find_method(ipc, method);
        if (!m) {
                log_debug("Unknown method '%s' called by uid=%u pid=%u", method, (unsigned) c->ucred.uid,
                          (unsigned) c->ucred.pid);
                if (oneway)
                        return 0;
                o = json_object_new_object();
                if (!o || json_object_object_add(o, "method", json_object_new_string(method)) < 0) {
                        json_object_put(o);
                        return -ENOMEM;
                }
                return conn_send(c, method, "org.varlink.service.MethodNotFound", o);
        }

        /* Anyone may call it and it holds nothing: neither the policy nor the
         * per-uid accounting needs to know who calls. */
        anonymous = (m->flags & IPC_METHOD_ANONYMOUS) && !c->creds_known;
        if (!anonymous) {
                r = conn_account(c);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return conn_fail(c, "cannot read the peer's credentials");
        }

        if (!anonymous && !ipc_peer_allowed(c, m)) {
                if (ratelimit_pass(&ipc->deny_rl, IPC_LOG_BURST, &suppressed))
                        log_warning("Refused %s to uid=%u gid=%u pid=%u%s", method, (unsigned) c->ucred.uid,
                                    (unsigned) c->ucred.gid, (unsigned) c->ucred.pid,
                                    suppressed > 0 ? " (similar messages suppressed)" : "");
                return oneway ? 0 : conn_send(c, method, "io.sunkd.PermissionDenied", NULL);
        }
        if (ipc->n_suspended > 0 && ipc_owner_suspended(ipc, m->owner))
                return oneway ? 0 : conn_send(c, method, "io.sunkd.Unavailable", NULL);
        if (!anonymous && !conn_may_call(c))
                return oneway ? 0 : conn_send(c, method, "io.sunkd.TooManyCalls", NULL);

        u = anonymous ? NULL : ipc_uid_get(ipc, c->ucred.uid);
        if (!anonymous && !u)
                return -ENOMEM;
        call = calloc(1, sizeof(sunkd_call));
        if (!call)
                return -ENOMEM;
        if (u) {
                u->n_calls++;
                call->accounted = true;
        }
        call_link(ipc, call);
        call->connection = c;
        call->message = TAKE_PTR(msg);
        call->method = method;
        call->owner = m->owner;
        call->ucred = anonymous ? (struct ucred) { .pid = 0, .uid = (uid_t) -1, .gid = (gid_t) -1 } : c->ucred;
        call->oneway = oneway;
        call->dispatching = true;
        c->call = call;
        conn_disarm_timer(c);

        log_debug("Calling %s for uid=%u pid=%u", method, (unsigned) c->ucred.uid, (unsigned) c->ucred.pid);
        /* The handler may add or remove methods: m is not used past this line. */
        r = m->fn(call, params, m->userdata);
        call->dispatching = false;

        if (call->replied) {
                call_free(call);
                return 0;
        }
        if (r == SUNKD_CALL_PENDING)
                return 0;
        if (r >= 0) {
                log_error("Method %s returned without replying", call->method);
                r = -EPROTO;
        }
        return ipc_reply_internal(call, "io.sunkd.InternalError", errno_params(-r));
}

/* Room for the next read: what was handled is dropped, and the buffer
 * grows by chunks up to max_request unconsumed bytes. */
static int conn_reserve(IpcConnection *c) {
        size_t max = c->ipc->limits.max_request;

        if (c->in_start > 0) {
                memmove(c->in, c->in + c->in_start, c->in_len - c->in_start);
                c->in_len -= c->in_start;
                c->in_scanned -= c->in_start;
                c->in_start = 0;
        }
        if (c->in_alloc - c->in_len < IPC_READ_CHUNK && c->in_alloc < max) {
                size_t a = MIN(MAX(c->in_alloc * 2, (size_t) 4 * IPC_READ_CHUNK), max);
                char *b = realloc(c->in, a);

                if (!b)
                        return -ENOMEM;
                c->in = b;
                c->in_alloc = a;
        }
        return 0;
}

/* Read what is there, up to max_request unconsumed bytes. */
static int conn_read(IpcConnection *c) {
        ssize_t n;
        int r;

        r = conn_reserve(c);
        if (r < 0)
                return r;
        if (c->in_len >= c->in_alloc)
                return 0;

        n = recv(c->fd, c->in + c->in_len, c->in_alloc - c->in_len, MSG_DONTWAIT);
        if (n < 0) {
                if (errno == EAGAIN || errno == EINTR)
                        return 0;
                return log_debug_errno(errno, "Failed to read from uid=%u pid=%u: %m",
                                       (unsigned) c->ucred.uid, (unsigned) c->ucred.pid);
        }
        if (n == 0)
                c->eof = true;
        c->in_len += (size_t) n;
        conn_touch(c);
        return 0;
}

/* Handle complete frames in order while nothing is in flight. */
static int conn_process(IpcConnection *c) {
        size_t max = c->ipc->limits.max_request;
        int r;

        while (!c->call && c->out_len == 0 && !c->closing && !c->dead) {
                char *nul = memchr(c->in + c->in_scanned, 0, c->in_len - c->in_scanned);
                const char *frame;
                size_t len;

                if (!nul) {
                        c->in_scanned = c->in_len;
                        if (c->in_len - c->in_start >= max)
                                return conn_fail(c, "message too large");
                        if (c->eof) {
                                if (c->in_len > c->in_start)
                                        return conn_fail(c, "truncated message");
                                c->closing = true;
                        }
                        return 0;
                }

                frame = c->in + c->in_start;
                len = (size_t) (nul - frame);
                c->in_start += len + 1;
                c->in_scanned = c->in_start;
                c->request_usec = 0; /* what follows is the next request */
                r = conn_dispatch(c, frame, len);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int conn_write(IpcConnection *c) {
        ssize_t n;

        if (c->out_done >= c->out_len)
                return 0;
        n = send(c->fd, c->out + c->out_done, c->out_len - c->out_done, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0) {
                if (errno == EAGAIN || errno == EINTR)
                        return 0;
                return log_debug_errno(errno, "Failed to write to uid=%u pid=%u: %m",
                                       (unsigned) c->ucred.uid, (unsigned) c->ucred.pid);
        }
        c->out_done += (size_t) n;
        if (c->out_done == c->out_len) {
                free(c->out);
                c->out = NULL;
                c->out_len = c->out_done = 0;
        }
        conn_touch(c);
        return 0;
}

/* The end of every callback: close, or listen for what comes next. */
static void conn_settle(IpcConnection *c, int r) {
        if (r == -ENOMEM)
                log_oom();
        if (r >= 0 && !c->dead && !(c->closing && c->out_len == 0)) {
                r = conn_update_events(c);
                if (r >= 0)
                        return;
                log_debug_errno(r, "Failed to watch the connection of uid=%u pid=%u: %m",
                                (unsigned) c->ucred.uid, (unsigned) c->ucred.pid);
        }
        conn_free(c);
}

/* Answer what is buffered and send the replies straight away: a reply that
 * fits in the socket never waits for EPOLLOUT, which saves a loop iteration
 * and two epoll_ctl() calls per call. */
static int conn_run(IpcConnection *c) {
        for (;;) {
                int r = conn_process(c);

                if (r < 0 || c->dead || c->out_len == 0)
                        return r;
                r = conn_write(c);
                if (r < 0 || c->out_len > 0)
                        return r;
        }
}

static int conn_on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        IpcConnection *c = userdata;
        int r = 0;

        if (revents & EPOLLOUT)
                r = conn_write(c);
        if (r >= 0 && (revents & EPOLLIN))
                r = conn_read(c);
        /* A hangup while we are not reading: the peer is gone, nothing to finish. */
        if (r >= 0 && (revents & (EPOLLHUP | EPOLLERR)) && !(revents & EPOLLIN))
                c->dead = true;
        if (r >= 0 && !c->dead)
                r = conn_run(c);
        conn_settle(c, r);
        return 0;
}

static int conn_on_defer(sd_event_source *s, void *userdata) {
        IpcConnection *c = userdata;

        conn_settle(c, conn_run(c));
        return 0;
}

static int conn_on_idle(sd_event_source *s, uint64_t usec, void *userdata) {
        IpcConnection *c = userdata;

        log_debug("Connection of uid=%u pid=%u idle for too long", (unsigned) c->ucred.uid,
                  (unsigned) c->ucred.pid);
        conn_free(c);
        return 0;
}

static int conn_read_groups(IpcConnection *c) {
        socklen_t len = IPC_GROUPS_INITIAL * sizeof(gid_t);

        for (;;) {
                gid_t *g = realloc(c->groups, MAX(len, (socklen_t) sizeof(gid_t)));

                if (!g)
                        return -ENOMEM;
                c->groups = g;
                if (getsockopt(c->fd, SOL_SOCKET, SO_PEERGROUPS, c->groups, &len) >= 0) {
                        c->n_groups = len / sizeof(gid_t);
                        return 0;
                }
                if (errno == ENOPROTOOPT || errno == ENODATA) {
                        c->n_groups = 0;
                        return 0;
                }
                if (errno != ERANGE)
                        return -errno;
        }
}

static bool ipc_is_privileged(Ipc *ipc, IpcConnection *c) {
        return c->ucred.uid == 0 || conn_matches(c, &ipc->privileged);
}

/* A uid's refusals are logged at the first, then counted until it holds
 * nothing; a uid holding nothing is refused only at the global limits,
 * which are rate-limited instead. */
static void ipc_refuse_uid(Ipc *ipc, const IpcConnection *c, const char *why) {
        IpcUid *u = ipc_uid_find(ipc, c->ucred.uid);
        unsigned suppressed;

        if (u) {
                if (u->n_refused++ == 0)
                        log_warning("Refusing connections from uid=%u (pid=%u, %u open): %s", (unsigned) c->ucred.uid,
                                    (unsigned) c->ucred.pid, u->n_connections, why);
                return;
        }
        if (ratelimit_pass(&ipc->refuse_rl, 1, &suppressed))
                log_warning("Refusing connection from uid=%u pid=%u: %s%s", (unsigned) c->ucred.uid,
                            (unsigned) c->ucred.pid, why, suppressed > 0 ? " (more refusals suppressed)" : "");
}

/* Whether @c may take a slot: the last reserved_connections slots are for
 * root and privileged uids, and a uid other than root holds at most
 * max_connections_per_uid. */
static bool ipc_admit(Ipc *ipc, IpcConnection *c) {
        const IpcLimits *l = &ipc->limits;
        IpcUid *u;

        if (c->ucred.uid == 0)
                return true;
        if (ipc->n_connections + l->reserved_connections >= l->max_connections && !ipc_is_privileged(ipc, c)) {
                ipc_refuse_uid(ipc, c, "the remaining slots are reserved for root and the modules' allow lists");
                return false;
        }
        u = ipc_uid_find(ipc, c->ucred.uid);
        if (u && u->n_connections >= l->max_connections_per_uid) {
                ipc_refuse_uid(ipc, c, "limit of connections per uid reached");
                return false;
        }
        return true;
}

/* Below this many open connections no uid can hold max_connections_per_uid
 * and no reserved slot is at stake: who connects need not be known yet. */
static unsigned ipc_checked_from(const Ipc *ipc) {
        const IpcLimits *l = &ipc->limits;
        unsigned reserved_from = l->max_connections > l->reserved_connections ?
                l->max_connections - l->reserved_connections : 0;

        return MIN(l->max_connections_per_uid, reserved_from);
}

/* From there on every connection counts under its uid, those admitted
 * before without being asked too, so that the limits see them all. */
static int ipc_account_all(Ipc *ipc) {
        for (IpcConnection *i = ipc->connections; i; i = i->next) {
                int r = conn_account(i);

                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        log_debug_errno(r, "Cannot read the credentials of a connection, not counting it: %m");
        }
        return 0;
}

/* Returns -EUSERS, logged by ipc_admit(), when the peer may not connect. */
static int conn_new(Ipc *ipc, int fd) {
        IpcConnection *c;
        int r = 0;

        c = calloc(1, sizeof(IpcConnection));
        if (!c) {
                close(fd);
                return -ENOMEM;
        }
        c->ipc = ipc;
        c->fd = fd;
        /* Unknown until read: never mistaken for root. */
        c->ucred = (struct ucred) { .pid = 0, .uid = (uid_t) -1, .gid = (gid_t) -1 };
        if (ipc->n_connections >= ipc_checked_from(ipc)) {
                r = ipc_account_all(ipc);
                if (r >= 0)
                        r = conn_creds(c);
                if (r >= 0 && !ipc_admit(ipc, c))
                        r = -EUSERS;
                if (r >= 0)
                        r = conn_account(c);
        }
        if (r < 0) {
                close(fd);
                free(c->groups);
                free(c);
                return r;
        }
        c->next = ipc->connections;
        if (c->next)
                c->next->prev = c;
        ipc->connections = c;
        ipc->n_connections++;
        conn_touch(c);

        log_debug("Connection %s, %u open", c->creds_known ? "checked" : "admitted unchecked", ipc->n_connections);
        return 0;
}

/* ---- Replies ------------------------------------------------------------ */

static int ipc_reply_internal(sunkd_call *call, const char *error, json_object *params) {
        IpcConnection *c;
        int r = 0;

        if (!call) {
                json_object_put(params);
                return -EINVAL;
        }
        if (call->replied) {
                json_object_put(params);
                return -EALREADY;
        }
        call->replied = true;

        c = call->connection;
        if (c) {
                if (!call->oneway)
                        r = conn_send(c, call->method, error, params);
                else
                        json_object_put(params);
                call->connection = NULL;
                c->call = NULL;
                if (r < 0)
                        c->dead = true;
                conn_touch(c);
                if (!call->dispatching)
                        conn_kick(c);
        } else {
                log_debug("Dropping reply to %s: the caller is gone", call->method);
                json_object_put(params);
        }

        if (!call->dispatching)
                call_free(call);
        return r;
}

int ipc_reply(sunkd_call *call, json_object *params) {
        return ipc_reply_internal(call, NULL, params);
}

int ipc_reply_error(sunkd_call *call, const char *error, json_object *params) {
        if (!error || !varlink_method_name_is_valid(error, strlen(error))) {
                /* Still answer: the peer must not wait for a reply that never comes. */
                ipc_reply_internal(call, "io.sunkd.InternalError", errno_params(EINVAL));
                json_object_put(params);
                return -EINVAL;
        }
        return ipc_reply_internal(call, error, params);
}

/* ---- The listener ------------------------------------------------------- */

static int ipc_on_accept_retry(sd_event_source *s, uint64_t usec, void *userdata) {
        Ipc *ipc = userdata;

        if (ipc->listen_source)
                (void) sd_event_source_set_enabled(ipc->listen_source, SD_EVENT_ON);
        return 0;
}

/* Out of fds or memory: stop polling the listener for a moment, or a
 * level-triggered loop would spin on the same error. */
static void ipc_pause_accepting(Ipc *ipc) {
        int r;

        (void) sd_event_source_set_enabled(ipc->listen_source, SD_EVENT_OFF);
        if (!ipc->accept_retry) {
                r = sd_event_add_time_relative(ipc->event, &ipc->accept_retry, CLOCK_MONOTONIC,
                                               IPC_ACCEPT_RETRY_USEC, 0, ipc_on_accept_retry, ipc);
                if (r < 0) {
                        (void) sd_event_source_set_enabled(ipc->listen_source, SD_EVENT_ON);
                        return;
                }
        } else
                (void) sd_event_source_set_time_relative(ipc->accept_retry, IPC_ACCEPT_RETRY_USEC);
        (void) sd_event_source_set_enabled(ipc->accept_retry, SD_EVENT_ONESHOT);
}

static void ipc_refuse(Ipc *ipc, int fd) {
        struct ucred u = { .pid = 0, .uid = (uid_t) -1, .gid = (gid_t) -1 };
        socklen_t len = sizeof(u);
        unsigned suppressed;

        if (!ratelimit_pass(&ipc->refuse_rl, 1, &suppressed))
                return;
        (void) getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &u, &len);
        log_warning("Refusing connection from uid=%u pid=%u: limit of %u connections reached%s",
                    (unsigned) u.uid, (unsigned) u.pid, ipc->limits.max_connections,
                    suppressed > 0 ? " (more refusals suppressed)" : "");
}

/* Takes the @n bytes a peek has already put into the buffer off the socket. */
static int conn_consume_peeked(IpcConnection *c, size_t n) {
        _uninitialized_ char scratch[IPC_READ_CHUNK]; /* only written: not cleared per connection */
        ssize_t k;

        assert(n <= sizeof(scratch));
        do
                k = recv(c->fd, scratch, n, MSG_DONTWAIT);
        while (k < 0 && errno == EINTR);
        if (k == (ssize_t) n)
                return 0;
        return log_debug_errno(k < 0 ? errno : EIO, "Failed to read from uid=%u pid=%u: %m",
                               (unsigned) c->ucred.uid, (unsigned) c->ucred.pid);
}

/* A client usually writes its request right after connecting: serve it now
 * rather than after an epoll_wait().  A whole call is only peeked at and
 * answered first: taking it off the socket frees the client's send buffer,
 * and that wakes a client already asleep waiting for the answer, for
 * nothing.  Taken after the answer (which wakes it anyway), it costs a
 * recv() but no wake-up.  One more read then learns whether the client also
 * shut down its side (a one-shot client): then the connection is closed
 * here and now, without an epoll registration. */
static void conn_start(IpcConnection *c) {
        ssize_t n = -1;
        int r;

        r = conn_reserve(c);
        if (r >= 0 && c->in_alloc >= IPC_READ_CHUNK) {
                n = recv(c->fd, c->in, IPC_READ_CHUNK, MSG_DONTWAIT | MSG_PEEK);
                if (n < 0 && errno == EAGAIN) { /* connected, not written yet */
                        conn_settle(c, 0);
                        return;
                }
        }
        if (r >= 0 && n > 0 && c->in[n - 1] == '\0') {
                c->in_len = (size_t) n;
                conn_touch(c);
                r = conn_run(c);
                if (r >= 0 && !c->dead)
                        r = conn_consume_peeked(c, (size_t) n);
                /* Answered: more calls, or the end?  Not while a call is in
                 * flight: then reading waits for it (backpressure). */
                if (r >= 0 && !c->dead && !c->call && c->out_len == 0)
                        r = conn_read(c);
        } else if (r >= 0) {
                r = conn_read(c);
                if (r >= 0 && !c->eof && c->in_len > 0 && c->in[c->in_len - 1] == '\0')
                        r = conn_read(c);
        }
        if (r >= 0 && !c->dead)
                r = conn_run(c);
        conn_settle(c, r);
}

static int ipc_on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Ipc *ipc = userdata;
        unsigned suppressed;
        int r;

        for (unsigned i = 0; i < IPC_ACCEPT_BATCH; i++) {
                int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

                if (cfd < 0) {
                        if (errno == EAGAIN)
                                return 0;
                        if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
                                continue;
                        r = -errno;
                        if (ratelimit_pass(&ipc->refuse_rl, 1, &suppressed))
                                log_warning_errno(r, "Failed to accept a connection, pausing: %m");
                        ipc_pause_accepting(ipc);
                        return 0;
                }
                if (ipc->n_connections >= ipc->limits.max_connections) {
                        ipc_refuse(ipc, cfd);
                        close(cfd);
                        continue;
                }
                r = conn_new(ipc, cfd);
                if (r < 0 && r != -EUSERS && ratelimit_pass(&ipc->refuse_rl, 1, &suppressed))
                        log_warning_errno(r, "Failed to set up a connection: %m");
                if (r >= 0)
                        conn_start(ipc->connections);
        }
        return 0;
}

static int ipc_watch(Ipc *ipc, int fd) {
        int r;

        r = sd_event_add_io(ipc->event, &ipc->listen_source, fd, EPOLLIN, ipc_on_accept, ipc);
        if (r < 0)
                return r;
        ipc->listen_fd = fd;
        return 0;
}

int ipc_adopt(Ipc *ipc, int fd) {
        int v = 0, flags;
        socklen_t len = sizeof(v);

        if (!ipc || fd < 0)
                return -EINVAL;
        if (ipc->listen_fd >= 0)
                return -EBUSY;
        if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &len) < 0)
                return -errno;
        if (v != AF_UNIX)
                return -EAFNOSUPPORT;
        len = sizeof(v);
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len) < 0)
                return -errno;
        if (v != SOCK_STREAM)
                return -ESOCKTNOSUPPORT;
        len = sizeof(v);
        if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) < 0)
                return -errno;
        if (!v)
                return -EINVAL;

        flags = fcntl(fd, F_GETFL);
        if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
                return -errno;
        return ipc_watch(ipc, fd);
}

/* Is something answering on @path?  Only a socket nobody listens on is stale. */
static int socket_is_live(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -1;
        struct stat st;

        if (lstat(path, &st) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (!S_ISSOCK(st.st_mode))
                return -EEXIST;

        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        memcpy(sa.sun_path, path, strlen(path));
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) >= 0 || errno == EAGAIN)
                return 1;
        return 0;
}

int ipc_listen(Ipc *ipc, const char *path, mode_t mode, gid_t gid) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_free_ char *tmp = NULL, *p = NULL;
        _cleanup_close_ int fd = -1;
        struct stat st;
        int r;

        if (!ipc || !path || path[0] != '/')
                return -EINVAL;
        if (ipc->listen_fd >= 0)
                return -EBUSY;
        /* The socket is bound under a temporary name, given its mode and
         * group, and renamed into place: it is never reachable with the
         * wrong permissions, and a stale one is replaced atomically. */
        if (asprintf(&tmp, "%s.%08" PRIx32, path, (uint32_t) random_u64()) < 0)
                return -ENOMEM;
        if (strlen(tmp) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        p = strdup(path);
        if (!p)
                return -ENOMEM;

        r = fileio_mkdir_parents(path, 0755);
        if (r < 0)
                return r;
        r = socket_is_live(path);
        if (r < 0)
                return r;
        if (r > 0)
                return -EADDRINUSE;

        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        memcpy(sa.sun_path, tmp, strlen(tmp));
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return -errno;
        if (fchmodat(AT_FDCWD, tmp, mode, 0) < 0 ||
            (gid != (gid_t) -1 && fchownat(AT_FDCWD, tmp, (uid_t) -1, gid, AT_SYMLINK_NOFOLLOW) < 0) ||
            listen(fd, SOMAXCONN) < 0 || rename(tmp, path) < 0 || stat(path, &st) < 0) {
                r = -errno;
                (void) unlink(tmp);
                return r;
        }

        r = ipc_watch(ipc, fd);
        if (r < 0) {
                (void) unlink(path);
                return r;
        }
        TAKE_FD(fd);
        ipc->path = TAKE_PTR(p);
        ipc->path_dev = st.st_dev;
        ipc->path_ino = st.st_ino;
        return 0;
}

/* Removes the socket we bound, unless another instance has replaced it. */
static void ipc_unlink_path(Ipc *ipc) {
        struct stat st;

        if (ipc->path && stat(ipc->path, &st) >= 0 && st.st_dev == ipc->path_dev &&
            st.st_ino == ipc->path_ino)
                (void) unlink(ipc->path);
        ipc->path = mfree(ipc->path);
}

/* Also removes the path at once: a client that comes now is told sunkd is
 * not running, even if a stuck job keeps the process alive a while. */
void ipc_stop_accepting(Ipc *ipc) {
        if (!ipc)
                return;
        ipc->listen_source = sd_event_source_disable_unref(ipc->listen_source);
        ipc->accept_retry = sd_event_source_disable_unref(ipc->accept_retry);
        if (ipc->listen_fd >= 0)
                close(ipc->listen_fd);
        ipc->listen_fd = -1;
        ipc_unlink_path(ipc);
}

unsigned ipc_n_connections(Ipc *ipc) {
        return ipc ? ipc->n_connections : 0;
}

/* ---- The server --------------------------------------------------------- */

int ipc_new(sd_event *event, const IpcLimits *limits, Ipc **ret) {
        IpcLimits d = IPC_LIMITS_DEFAULT;
        Ipc *ipc;
        int r;

        if (!event || !ret)
                return -EINVAL;

        ipc = calloc(1, sizeof(Ipc));
        if (!ipc)
                return -ENOMEM;
        ipc->event = sd_event_ref(event);
        ipc->listen_fd = -1;
        ipc->limits = limits ? *limits : d;
        if (ipc->limits.max_request < 2)
                ipc->limits.max_request = d.max_request;
        if (ipc->limits.max_reply == 0)
                ipc->limits.max_reply = d.max_reply;
        if (ipc->limits.max_connections == 0)
                ipc->limits.max_connections = d.max_connections;
        if (ipc->limits.idle_timeout_usec == 0)
                ipc->limits.idle_timeout_usec = d.idle_timeout_usec;
        if (ipc->limits.max_depth == 0)
                ipc->limits.max_depth = d.max_depth;
        if (ipc->limits.max_connections_per_uid == 0)
                ipc->limits.max_connections_per_uid = d.max_connections_per_uid;
        if (ipc->limits.max_calls_per_uid == 0)
                ipc->limits.max_calls_per_uid = d.max_calls_per_uid;
        if (ipc->limits.reserved_connections == 0)
                ipc->limits.reserved_connections = d.reserved_connections;
        if (ipc->limits.reserved_connections >= ipc->limits.max_connections)
                ipc->limits.reserved_connections = ipc->limits.max_connections / 4;
        if (ipc->limits.request_timeout_usec == 0)
                ipc->limits.request_timeout_usec = d.request_timeout_usec;

        r = sd_event_add_defer(event, &ipc->gone_defer, ipc_on_gone, ipc);
        if (r >= 0)
                r = sd_event_source_set_enabled(ipc->gone_defer, SD_EVENT_OFF);
        if (r < 0) {
                ipc_free(ipc);
                return r;
        }
        *ret = ipc;
        return 0;
}

Ipc *ipc_free(Ipc *ipc) {
        if (!ipc)
                return NULL;

        /* Replies queued in the loop's last iteration (a module answering its
         * pending calls in fini at shutdown) go out if the socket takes them:
         * a client waiting for an answer gets it, not a reset. */
        while (ipc->connections) {
                (void) conn_write(ipc->connections);
                conn_free(ipc->connections);
        }
        /* Calls still unanswered outlive us; their replies just free them. */
        while (ipc->calls) {
                sunkd_call *call = ipc->calls;

                ipc->calls = call->next;
                *call = (sunkd_call){ .message = call->message, .method = call->method, .ucred = call->ucred,
                                      .oneway = call->oneway, .replied = call->replied,
                                      .dispatching = call->dispatching };
        }
        ipc->gone_defer = sd_event_source_disable_unref(ipc->gone_defer);
        ipc_stop_accepting(ipc);
        free(ipc->uids);
        allow_clear(&ipc->privileged);
        free(ipc->suspended);
        for (size_t i = 0; i < ipc->n_methods; i++)
                free(ipc->methods[i].name);
        free(ipc->methods);
        sd_event_unref(ipc->event);
        free(ipc);
        return NULL;
}
