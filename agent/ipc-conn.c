/* A connection of the control socket: a small state machine.
 *
 * Every connection is driven by up to three sd-event sources of its own,
 * each created the first time it is needed and then re-armed, never
 * re-created.  A one-shot client (sunkctl, sunkd-authkeys) sends its call
 * and shuts down its sending side: such a connection is read, answered and
 * closed inside the accept callback (conn_start()) and never costs an epoll
 * registration, a timer or a second loop iteration.
 *
 *   io     the socket; EPOLLIN only while we want a request (no call in
 *          flight, no reply waiting to go out), EPOLLOUT only while a reply
 *          is buffered.  Not reading is the backpressure: a peer that
 *          pipelines requests leaves them in the kernel until its current
 *          call is answered and the answer is on its way, so one connection
 *          holds at most one request buffer (max_request, or
 *          IPC_ROOT_REQUEST_MAX for root) and one reply.
 *   idle   a one-shot timer: idle_timeout after the last read or write,
 *          but no later than request_timeout after the first byte of a
 *          request still incomplete; off while a call is pending.
 *   defer  "look at this connection again soon": a reply that arrives from
 *          outside the connection's own callbacks never recurses into the
 *          next request's handler and never frees anything under its caller.
 *
 * A connection is freed only from its own callbacks or from ipc_free().
 * Peers are not trusted: every malformed frame gets one InvalidMessage reply
 * and the connection is closed after it is flushed; nothing a peer sends
 * affects another connection.  Refusals and limits are logged at warning,
 * rate-limited, with the peer's uid and pid; everything else at debug.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipc-internal.h"
#include "log.h"
#include "util/cleanup.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "util/time-util.h"
#include "proto/varlink.h"

#define IPC_READ_CHUNK 4096
#define IPC_LOG_BURST 5

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

json_object *errno_params(int error) {
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
int conn_send(IpcConnection *c, const char *method, const char *error, json_object *params) {
        Ipc *ipc = c->ipc;
        _cleanup_free_ char *buf = NULL;
        const char *fallback = NULL;
        json_object *fallback_params = NULL;
        unsigned suppressed;
        size_t len = 0;
        int r;

        /* A reply that is not UTF-8 is a module's bug: text from outside is
         * made valid where it enters sunkd's state (util/text-escape.h).  As
         * a last defence the host escapes it itself and says so, rather
         * than answer InternalError for as long as the module keeps it. */
        json_object_get(params);
        r = reply_format(error, params, &buf, &len);
        if (r == -EILSEQ && params) {
                int n = varlink_repair_utf8(params);

                if (n > 0 &&
                    ratelimit_pass(&ipc->reply_rl, IPC_LOG_INTERVAL_USEC, IPC_LOG_BURST, &suppressed))
                        log_error("BUG: the reply to %s carried %d string(s) that are not UTF-8; sent them "
                                  "escaped%s",
                                  method ?: "request", n, suppressed > 0 ? ", more suppressed" : "");
                r = n < 0 ? n : reply_format(error, json_object_get(params), &buf, &len);
        }
        json_object_put(params);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                fallback = "io.sunkd.InternalError";
                fallback_params = errno_params(-r);
        } else if (len > ipc->limits.max_reply) {
                fallback = "io.sunkd.ReplyTooLarge";
                fallback_params = json_object_new_object();
                if (fallback_params) {
                        json_object_object_add(fallback_params, "size",
                                               json_object_new_int64((int64_t) len));
                        json_object_object_add(fallback_params, "max",
                                               json_object_new_int64((int64_t) ipc->limits.max_reply));
                }
        }
        if (fallback) {
                (void) ipc_admit_creds(c);
                if (ratelimit_pass(&ipc->reply_rl, IPC_LOG_INTERVAL_USEC, IPC_LOG_BURST, &suppressed))
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

IpcConnection *conn_free(IpcConnection *c) {
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
                ipc_admit_put_connection(c->ipc, c->ucred.uid);
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

void conn_touch(IpcConnection *c) {
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
void conn_kick(IpcConnection *c) {
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

/* How large a request of @need bytes may grow: max_request, or for root
 * max_request_root (IPC_ROOT_REQUEST_MAX).  Root's calls carry what no other caller's do (the
 * prolog client hands over a job's whole environment, up to the 6 MiB the
 * kernel lets execve() pass, as base64), and root can hurt sunkd in easier
 * ways than with memory.  The peer's credentials are read only once a
 * request outgrows max_request. */
static size_t conn_request_max(IpcConnection *c, size_t need) {
        size_t max = c->ipc->limits.max_request, root = c->ipc->limits.max_request_root;

        if (need < max || max >= root)
                return max;
        if (ipc_admit_creds(c) < 0 || c->ucred.uid != 0)
                return max;
        return root;
}

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

/* MethodNotFound's parameters: the method, and the methods its interface
 * has (none: no such interface, a module not enabled), so that a client
 * can say which verbs there are.  Their names are no secret: sunkd(8)
 * lists them.  NULL when out of memory. */
static json_object *method_not_found(Ipc *ipc, const char *method) {
        _cleanup_json_ json_object *o = json_object_new_object(), *l = json_object_new_array();
        const char *dot = strrchr(method, '.');
        size_t n = dot ? (size_t) (dot - method) + 1 : 0;

        if (!o || !l || json_object_object_add(o, "method", json_object_new_string(method)) < 0)
                return NULL;
        for (size_t i = 0; n > 0 && i < ipc->n_methods; i++)
                if (strncmp(ipc->methods[i].name, method, n) == 0 &&
                    !strchr(ipc->methods[i].name + n, '.') &&
                    json_object_array_add(l, json_object_new_string(ipc->methods[i].name)) < 0)
                        return NULL;
        if (json_object_object_add(o, "methods", l) < 0)
                return NULL;
        l = NULL; /* o holds it */
        return TAKE_PTR(o);
}

static int conn_dispatch(IpcConnection *c, const char *frame, size_t len) {
        Ipc *ipc = c->ipc;
        _cleanup_json_ json_object *msg = NULL;
        json_object *params, *o;
        const char *method;
        IpcMethod *m;
        unsigned suppressed;
        sunkd_call *call;
        IpcUid *u;
        bool oneway, anonymous;
        int r;

        r = varlink_parse(frame, len, conn_request_max(c, len + 1) - 1, ipc->limits.max_depth, &msg);
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
                o = method_not_found(ipc, method);
                if (!o)
                        return -ENOMEM;
                return conn_send(c, method, "org.varlink.service.MethodNotFound", o);
        }

        /* Anyone may call it and it holds nothing: neither the policy nor the
         * per-uid accounting needs to know who calls. */
        anonymous = (m->flags & IPC_METHOD_ANONYMOUS) && !c->creds_known;
        if (!anonymous) {
                r = ipc_admit_account(c);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return conn_fail(c, "cannot read the peer's credentials");
        }

        if (!anonymous && !ipc_admit_peer_allowed(c, m)) {
                m->n_refused++;
                /* what would open it: an allow: list, where the method has one */
                if (ratelimit_pass(&ipc->deny_rl, IPC_LOG_INTERVAL_USEC, IPC_LOG_BURST, &suppressed))
                        log_warning(
                                "Refused %s to uid=%u gid=%u pid=%u%s%s", method, (unsigned) c->ucred.uid,
                                (unsigned) c->ucred.gid, (unsigned) c->ucred.pid,
                                m->flags & SUNKD_METHOD_ALLOW
                                        ? ": neither root nor a user or @group of the module's allow: list"
                                        : ": root only",
                                suppressed > 0 ? " (similar messages suppressed)" : "");
                return oneway ? 0 : conn_send(c, method, "io.sunkd.PermissionDenied", NULL);
        }
        if (ipc->n_suspended > 0 && ipc_owner_suspended(ipc, m->owner))
                return oneway ? 0 : conn_send(c, method, "io.sunkd.Unavailable", NULL);
        if (!anonymous && !ipc_admit_call(c))
                return oneway ? 0 : conn_send(c, method, "io.sunkd.TooManyCalls", NULL);

        u = anonymous ? NULL : ipc_admit_uid_get(ipc, c->ucred.uid);
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
        call->ucred =
                anonymous ? (struct ucred){ .pid = 0, .uid = (uid_t) -1, .gid = (gid_t) -1 } : c->ucred;
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
 * grows by chunks up to the request limit of unconsumed bytes. */
static int conn_reserve(IpcConnection *c) {
        size_t max;

        if (c->in_start > 0) {
                memmove(c->in, c->in + c->in_start, c->in_len - c->in_start);
                c->in_len -= c->in_start;
                c->in_scanned -= c->in_start;
                c->in_start = 0;
        }
        max = conn_request_max(c, c->in_alloc + 1);
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
        int r;

        while (!c->call && c->out_len == 0 && !c->closing && !c->dead) {
                char *nul = memchr(c->in + c->in_scanned, 0, c->in_len - c->in_scanned);
                const char *frame;
                size_t len;

                if (!nul) {
                        c->in_scanned = c->in_len;
                        if (c->in_len - c->in_start >= conn_request_max(c, c->in_len - c->in_start))
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

int conn_write(IpcConnection *c) {
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

/* Returns -EUSERS, logged by ipc_admit_connection(), when the peer may not connect. */
int conn_new(Ipc *ipc, int fd) {
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
        c->ucred = (struct ucred){ .pid = 0, .uid = (uid_t) -1, .gid = (gid_t) -1 };
        r = ipc_admit_connection(ipc, c);
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

        log_debug("Connection %s, %u open", c->creds_known ? "checked" : "admitted unchecked",
                  ipc->n_connections);
        return 0;
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
void conn_start(IpcConnection *c) {
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
