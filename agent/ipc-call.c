/* Methods, calls and their replies on the control socket.
 *
 * Methods live in one array sorted by name and are found by bsearch(); a
 * module's are removed together (their owner), and its unanswered calls are
 * answered io.sunkd.Unavailable then, so no client waits for a module that
 * is going away.
 *
 * A call (struct sunkd_call) is owned by whoever must answer it; when the
 * peer hangs up first, the call is orphaned (its connection pointer
 * cleared) and the eventual reply just frees it.  While the handler runs
 * synchronously the dispatcher keeps the call alive, so a handler replying
 * twice gets -EALREADY instead of a use-after-free.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ipc-internal.h"
#include "log.h"
#include "util/macro.h"
#include "proto/varlink.h"

/* ---- Methods ------------------------------------------------------------ */

static int method_compare(const void *key, const void *elem) {
        return strcmp(key, ((const IpcMethod *) elem)->name);
}

IpcMethod *ipc_find_method(Ipc *ipc, const char *name) {
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

bool ipc_owner_suspended(Ipc *ipc, const void *owner) {
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

int ipc_owner_refused(Ipc *ipc, const void *owner, uint64_t *ret) {
        uint64_t n = 0;
        bool any = false;

        for (size_t i = 0; ipc && i < ipc->n_methods; i++)
                if (ipc->methods[i].owner == owner) {
                        n += ipc->methods[i].n_refused;
                        any = true;
                }
        if (!any)
                return -ENOENT;
        *ret = n;
        return 0;
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

/* ---- Calls -------------------------------------------------------------- */

sunkd_call *call_free(sunkd_call *call) {
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
                        ipc_admit_put_call(ipc, call->ucred.uid);
        }
        json_object_put(call->message);
        free(call);
        return NULL;
}

void call_link(Ipc *ipc, sunkd_call *call) {
        call->ipc = ipc;
        call->next = ipc->calls;
        if (call->next)
                call->next->prev = call;
        ipc->calls = call;
}

/* The peer is gone: the owner's callback runs from the loop, not from
 * under whatever freed the connection. */
void call_orphan(sunkd_call *call) {
        call->connection = NULL;
        if (call->gone_cb && call->ipc) {
                call->gone_pending = true;
                (void) sd_event_source_set_enabled(call->ipc->gone_defer, SD_EVENT_ONESHOT);
        }
}

int ipc_on_gone(sd_event_source *s, void *userdata) {
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

/* ---- Replies ------------------------------------------------------------ */

int ipc_reply_internal(sunkd_call *call, const char *error, json_object *params) {
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
