/* Unit tests for the control socket, against a real sd-event loop and a
 * real AF_UNIX socket in a temporary directory.
 *
 * Most tests drive raw non-blocking client sockets from the test itself and
 * run the loop in between ("pump"), so timing is explicit and one process
 * holds both ends.  Where the blocking client library or another identity
 * is needed, a forked child is the client and the parent pumps the loop
 * until the child exits; its exit status is the step that failed.
 */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client/client.h"
#include "ipc.h"
#include "log.h"
#include "util/macro.h"
#include "util/time-util.h"
#include "proto/varlink.h"
#include "../lib/check-run.h"

#define SEC USEC_PER_SEC
#define MSEC USEC_PER_MSEC

typedef struct Server {
        sd_event *event;
        Ipc *ipc;
        char dir[64];
        char path[128];
        sunkd_call *pending;
        sd_event_source *later;
        unsigned n_count;
        int twice_result;
} Server;

static const uid_t allow_uids[] = { 4321 };
static const gid_t allow_gids[] = { 4242 };
static const IpcAllow allow = {
        .uids = (uid_t *) allow_uids,
        .n_uids = 1,
        .gids = (gid_t *) allow_gids,
        .n_gids = 1,
};

/* ---- Methods ------------------------------------------------------------ */

static int m_echo(sunkd_call *call, json_object *params, void *userdata) {
        return ipc_reply(call, json_object_get(params));
}

static int m_empty(sunkd_call *call, json_object *params, void *userdata) {
        return ipc_reply(call, NULL);
}

static int on_later(sd_event_source *src, uint64_t usec, void *userdata) {
        Server *s = userdata;
        json_object *p = json_object_new_object();

        json_object_object_add(p, "late", json_object_new_boolean(true));
        ck_assert_ptr_nonnull(s->pending);
        ck_assert_int_eq(ipc_reply(s->pending, p), 0);
        s->pending = NULL;
        return 0;
}

static int m_later(sunkd_call *call, json_object *params, void *userdata) {
        Server *s = userdata;

        ck_assert_ptr_null(s->pending);
        s->pending = call;
        ck_assert_int_eq(
                sd_event_add_time_relative(s->event, &s->later, CLOCK_MONOTONIC, 50 * MSEC, 0, on_later, s),
                0);
        sd_event_source_set_floating(s->later, true);
        sd_event_source_unref(s->later);
        s->later = NULL;
        return SUNKD_CALL_PENDING;
}

static int m_hold(sunkd_call *call, json_object *params, void *userdata) {
        Server *s = userdata;

        ck_assert_ptr_null(s->pending);
        s->pending = call;
        return SUNKD_CALL_PENDING;
}

static int m_fail(sunkd_call *call, json_object *params, void *userdata) {
        return -ENOENT;
}

static int m_silent(sunkd_call *call, json_object *params, void *userdata) {
        return 0;
}

static int m_twice(sunkd_call *call, json_object *params, void *userdata) {
        Server *s = userdata;

        ck_assert_int_eq(ipc_reply(call, NULL), 0);
        s->twice_result = ipc_reply(call, NULL);
        return 0;
}

static int m_count(sunkd_call *call, json_object *params, void *userdata) {
        Server *s = userdata;

        s->n_count++;
        return ipc_reply(call, NULL);
}

static int m_big(sunkd_call *call, json_object *params, void *userdata) {
        size_t n = (size_t) json_object_get_int64(json_object_object_get(params, "size"));
        json_object *p = json_object_new_object();
        char *b = malloc(n + 1);

        memset(b, 'x', n);
        b[n] = 0;
        json_object_object_add(p, "s", json_object_new_string(b));
        free(b);
        return ipc_reply(call, p);
}

static int m_creds(sunkd_call *call, json_object *params, void *userdata) {
        json_object *p = json_object_new_object();

        json_object_object_add(p, "uid", json_object_new_int64(ipc_call_uid(call)));
        json_object_object_add(p, "gid", json_object_new_int64(ipc_call_gid(call)));
        json_object_object_add(p, "pid", json_object_new_int64(ipc_call_pid(call)));
        json_object_object_add(p, "method", json_object_new_string(ipc_call_method(call)));
        return ipc_reply(call, p);
}

static const struct {
        const char *name;
        unsigned flags;
        IpcMethodFn fn;
} methods[] = {
        { "io.sunkd.Test.Echo", SUNKD_METHOD_ANY_UID, m_echo },
        { "io.sunkd.Test.Root", SUNKD_METHOD_ROOT, m_empty },
        { "io.sunkd.Test.Allowed", SUNKD_METHOD_ALLOW, m_empty },
        { "io.sunkd.Test.Later", SUNKD_METHOD_ANY_UID, m_later },
        { "io.sunkd.Test.Hold", SUNKD_METHOD_ANY_UID, m_hold },
        { "io.sunkd.Test.Fail", SUNKD_METHOD_ANY_UID, m_fail },
        { "io.sunkd.Test.Silent", SUNKD_METHOD_ANY_UID, m_silent },
        { "io.sunkd.Test.Twice", SUNKD_METHOD_ANY_UID, m_twice },
        { "io.sunkd.Test.Count", SUNKD_METHOD_ANY_UID, m_count },
        { "io.sunkd.Test.Big", SUNKD_METHOD_ANY_UID, m_big },
        { "io.sunkd.Test.Creds", SUNKD_METHOD_ANY_UID, m_creds },
        { "io.sunkd.Test.Anon", SUNKD_METHOD_ANY_UID | IPC_METHOD_ANONYMOUS, m_creds },
};

static void on_gone_count(sunkd_call *call, void *userdata);

/* ---- Server and raw clients -------------------------------------------- */

static void server_start(Server *s, const IpcLimits *limits) {
        *s = (Server){ 0 };
        strcpy(s->dir, "/tmp/test-ipc-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(s->dir));
        ck_assert_int_eq(chmod(s->dir, 0755), 0);
        snprintf(s->path, sizeof(s->path), "%s/run/io.sunkd", s->dir);

        ck_assert_int_eq(sd_event_new(&s->event), 0);
        ck_assert_int_eq(ipc_new(s->event, limits, &s->ipc), 0);
        ck_assert_int_eq(ipc_listen(s->ipc, s->path, 0666, (gid_t) -1), 0);
        for (size_t i = 0; i < ELEMENTSOF(methods); i++)
                ck_assert_int_eq(ipc_add_method(s->ipc, methods[i].name, methods[i].flags, methods[i].fn, s,
                                                &allow, s),
                                 0);
}

static void server_stop(Server *s) {
        char run[160];

        s->ipc = ipc_free(s->ipc);
        s->event = sd_event_unref(s->event);
        /* ipc_free() removed the socket it created. */
        ck_assert_int_eq(access(s->path, F_OK), -1);
        snprintf(run, sizeof(run), "%s/run", s->dir);
        ck_assert_int_eq(rmdir(run), 0);
        ck_assert_int_eq(rmdir(s->dir), 0);
}

static void pump(Server *s, uint64_t usec) {
        ck_assert_int_ge(sd_event_run(s->event, usec), 0);
}

static void pump_until_connections(Server *s, unsigned n) {
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + 5 * SEC;

        while (ipc_n_connections(s->ipc) != n) {
                ck_assert_msg(now_usec(CLOCK_MONOTONIC) < deadline, "%u connections, expected %u",
                              ipc_n_connections(s->ipc), n);
                pump(s, 10 * MSEC);
        }
}

typedef struct Raw {
        int fd;
        char *buf;
        size_t len;
        bool eof;
} Raw;

static void raw_connect(Server *s, Raw *c) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };

        *c = (Raw){ .fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0) };
        ck_assert_int_ge(c->fd, 0);
        strcpy(sa.sun_path, s->path);
        for (;;) {
                if (connect(c->fd, (struct sockaddr *) &sa, sizeof(sa)) == 0)
                        return;
                ck_assert_int_eq(errno, EAGAIN); /* backlog full: let the server accept */
                pump(s, 10 * MSEC);
        }
}

static void raw_close(Raw *c) {
        if (c->fd >= 0)
                close(c->fd);
        free(c->buf);
        *c = (Raw){ .fd = -1 };
}

/* Send it all, running the loop whenever the socket is full.  Returns
 * false if the server closed the connection first. */
static bool raw_send(Server *s, Raw *c, const char *data, size_t len) {
        size_t done = 0;

        while (done < len) {
                ssize_t n = send(c->fd, data + done, len - done, MSG_DONTWAIT | MSG_NOSIGNAL);

                if (n < 0 && (errno == EPIPE || errno == ECONNRESET))
                        return false;
                if (n < 0) {
                        ck_assert_int_eq(errno, EAGAIN);
                        pump(s, 10 * MSEC);
                        continue;
                }
                done += (size_t) n;
        }
        return true;
}

static void raw_send_str(Server *s, Raw *c, const char *str) {
        /* With its NUL: the test strings are single frames. */
        ck_assert(raw_send(s, c, str, strlen(str) + 1));
}

/* The next reply, or NULL at EOF or after @timeout. */
static json_object *raw_recv(Server *s, Raw *c, uint64_t timeout) {
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + timeout;
        char tmp[4096];

        for (;;) {
                char *nul = c->len > 0 ? memchr(c->buf, 0, c->len) : NULL;

                if (nul) {
                        json_object *o = NULL;
                        size_t n = (size_t) (nul - c->buf);

                        ck_assert_int_eq(varlink_parse(c->buf, n, 2 * 1024 * 1024, 64, &o), 0);
                        memmove(c->buf, nul + 1, c->len - n - 1);
                        c->len -= n + 1;
                        return o;
                }
                if (c->eof)
                        return NULL;

                ssize_t k = recv(c->fd, tmp, sizeof(tmp), MSG_DONTWAIT);
                if (k > 0) {
                        c->buf = realloc(c->buf, c->len + (size_t) k);
                        memcpy(c->buf + c->len, tmp, (size_t) k);
                        c->len += (size_t) k;
                        continue;
                }
                if (k == 0 || errno == ECONNRESET) {
                        c->eof = true;
                        continue;
                }
                ck_assert_int_eq(errno, EAGAIN);
                if (now_usec(CLOCK_MONOTONIC) >= deadline)
                        return NULL;
                pump(s, 10 * MSEC);
        }
}

static json_object *call_raw(Server *s, Raw *c, const char *msg) {
        raw_send_str(s, c, msg);
        return raw_recv(s, c, 5 * SEC);
}

static void assert_reply(json_object *o) {
        ck_assert_ptr_nonnull(o);
        ck_assert_msg(!json_object_object_get_ex(o, "error", NULL), "error reply: %s",
                      json_object_to_json_string(o));
        ck_assert(json_object_is_type(json_object_object_get(o, "parameters"), json_type_object));
}

static void assert_error(json_object *o, const char *name) {
        json_object *e;

        ck_assert_ptr_nonnull(o);
        ck_assert_msg(json_object_object_get_ex(o, "error", &e), "not an error: %s",
                      json_object_to_json_string(o));
        ck_assert_str_eq(json_object_get_string(e), name);
        ck_assert(json_object_is_type(json_object_object_get(o, "parameters"), json_type_object));
}

static json_object *param(json_object *o, const char *key) {
        return json_object_object_get(json_object_object_get(o, "parameters"), key);
}

/* The next message on @c is a reply whose parameter @key is the integer @want. */
static void expect_reply_int(Server *s, Raw *c, const char *key, int want) {
        json_object *o = raw_recv(s, c, 5 * SEC);

        assert_reply(o);
        ck_assert_int_eq(json_object_get_int(param(o, key)), want);
        json_object_put(o);
}

/* The next message on @c is a reply whose parameter @key is true. */
static void expect_reply_true(Server *s, Raw *c, const char *key) {
        json_object *o = raw_recv(s, c, 5 * SEC);

        assert_reply(o);
        ck_assert(json_object_get_boolean(param(o, key)));
        json_object_put(o);
}

static void assert_eof(Server *s, Raw *c) {
        json_object *o = raw_recv(s, c, 5 * SEC);

        ck_assert_msg(!o, "unexpected %s", o ? json_object_to_json_string(o) : "");
        ck_assert(c->eof);
}

/* ---- Forked clients ----------------------------------------------------- */

typedef int (*ChildFn)(Server *s, const void *arg);

static int run_child(Server *s, ChildFn fn, const void *arg) {
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + 20 * SEC;
        pid_t pid = fork();
        int status;

        ck_assert_int_ge(pid, 0);
        if (pid == 0)
                _exit(fn(s, arg));
        for (;;) {
                pid_t r = waitpid(pid, &status, WNOHANG);

                if (r == pid)
                        break;
                ck_assert_int_eq(r, 0);
                if (now_usec(CLOCK_MONOTONIC) > deadline) {
                        kill(pid, SIGKILL);
                        ck_abort_msg("client child hangs");
                }
                pump(s, 10 * MSEC);
        }
        ck_assert(WIFEXITED(status));
        return WEXITSTATUS(status);
}

/* Call @method and compare: NULL error = success expected. */
static int child_call(const char *path, const char *method, const char *error) {
        json_object *reply = NULL;
        char *name = NULL;
        int fd, r, ok;

        r = client_connect(path, 5 * SEC, &fd);
        if (r < 0)
                return 100;
        r = client_call(fd, method, NULL, 5 * SEC, 0, &reply, &name);
        close(fd);
        if (!error)
                ok = r == 0 && reply && !name;
        else
                ok = r == -EREMOTEIO && name && streq(name, error) && reply;
        json_object_put(reply);
        free(name);
        return ok ? 0 : 101;
}

typedef struct Identity {
        uid_t uid;
        gid_t gid;
        size_t n_groups;
        gid_t groups[2];
        const char *method;
        const char *error;
} Identity;

static int child_as(Server *s, const void *arg) {
        const Identity *id = arg;

        if (setgroups(id->n_groups, id->groups) < 0 || setgid(id->gid) < 0 || setuid(id->uid) < 0)
                return 99;
        if (getuid() != id->uid || geteuid() != id->uid)
                return 98;
        return child_call(s->path, id->method, id->error);
}

/* Connect as @id and call Echo: 0 when that is answered as id->error says
 * (NULL: success), or when id->error is "refused" and the connection is
 * closed without an answer. */
static int child_echo_as(Server *s, const void *arg) {
        const Identity *id = arg;
        json_object *reply = NULL;
        char *name = NULL;
        int fd, r, ok;

        if (setgroups(id->n_groups, id->groups) < 0 || setgid(id->gid) < 0 || setuid(id->uid) < 0)
                return 99;
        if (!id->error || !streq(id->error, "refused"))
                return child_call(s->path, "io.sunkd.Test.Echo", id->error);
        r = client_connect(s->path, 5 * SEC, &fd);
        if (r < 0)
                return 100;
        r = client_call(fd, "io.sunkd.Test.Echo", NULL, 5 * SEC, 0, &reply, &name);
        close(fd);
        ok = r < 0 && r != -EREMOTEIO && r != -ETIMEDOUT;
        json_object_put(reply);
        free(name);
        return ok ? 0 : 102;
}

/* As nobody: holds @arg connections open with an answered call on each, then
 * expects the next one refused, then calls Hold and Echo on two of them. */
static int child_hog(Server *s, const void *arg) {
        unsigned n = *(const unsigned *) arg;
        int fds[8], fd, r;
        json_object *reply = NULL;
        char *name = NULL;

        if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
                return 99;
        for (unsigned i = 0; i < n; i++) {
                if (client_connect(s->path, 5 * SEC, &fds[i]) < 0)
                        return 100;
                if (client_call(fds[i], "io.sunkd.Test.Echo", NULL, 5 * SEC, 0, &reply, &name) < 0)
                        return 10 + (int) i;
                json_object_put(reply);
                reply = NULL;
        }
        /* Over the cap: closed without an answer. */
        if (client_connect(s->path, 5 * SEC, &fd) < 0)
                return 100;
        r = client_call(fd, "io.sunkd.Test.Echo", NULL, 5 * SEC, 0, &reply, &name);
        close(fd);
        if (r >= 0 || r == -EREMOTEIO || r == -ETIMEDOUT)
                return 30;
        /* One call pending: the next is over max_calls_per_uid = 1. */
        if (send(fds[0], "{\"method\":\"io.sunkd.Test.Hold\"}", 32, MSG_NOSIGNAL) != 32)
                return 31;
        r = client_call(fds[1], "io.sunkd.Test.Echo", NULL, 5 * SEC, 0, &reply, &name);
        if (r != -EREMOTEIO || !name || !streq(name, "io.sunkd.TooManyCalls"))
                return 32;
        free(name);
        json_object_put(reply);
        name = NULL;
        reply = NULL;
        /* Its caller gone, the pending call still counts until answered. */
        close(fds[0]);
        r = client_call(fds[1], "io.sunkd.Test.Echo", NULL, 5 * SEC, 0, &reply, &name);
        if (r != -EREMOTEIO || !name || !streq(name, "io.sunkd.TooManyCalls"))
                return 33;
        return 0;
}

/* The uid @method reports on @fd, or -1 on any failure. */
static int64_t call_uid(int fd, const char *method) {
        json_object *reply = NULL, *v;
        char *name = NULL;
        int64_t uid = -1;

        if (client_call(fd, method, NULL, 5 * SEC, 0, &reply, &name) >= 0 &&
            json_object_object_get_ex(reply, "uid", &v))
                uid = json_object_get_int64(v);
        json_object_put(reply);
        free(name);
        return uid;
}

/* As nobody: an anonymous method is answered without the peer's credentials
 * being read; the first other call reads them, and from then on the
 * connection is nobody's for every policy, anonymous methods included. */
static int child_anonymous(Server *s, const void *arg) {
        json_object *reply = NULL;
        char *name = NULL;
        int fd, r;

        if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
                return 99;
        if (client_connect(s->path, 5 * SEC, &fd) < 0)
                return 100;
        if (call_uid(fd, "io.sunkd.Test.Anon") != (int64_t) (uid_t) -1)
                return 10;
        if (call_uid(fd, "io.sunkd.Test.Creds") != 65534)
                return 11;
        if (call_uid(fd, "io.sunkd.Test.Anon") != 65534)
                return 12;
        r = client_call(fd, "io.sunkd.Test.Root", NULL, 5 * SEC, 0, &reply, &name);
        if (r != -EREMOTEIO || !name || !streq(name, "io.sunkd.PermissionDenied"))
                return 13;
        free(name);
        json_object_put(reply);
        close(fd);
        /* An unknown peer is never root: a root-only call after an anonymous one is checked. */
        if (client_connect(s->path, 5 * SEC, &fd) < 0)
                return 100;
        if (call_uid(fd, "io.sunkd.Test.Anon") != (int64_t) (uid_t) -1)
                return 14;
        name = NULL;
        r = client_call(fd, "io.sunkd.Test.Root", NULL, 5 * SEC, 0, &reply, &name);
        if (r != -EREMOTEIO || !name || !streq(name, "io.sunkd.PermissionDenied"))
                return 15;
        free(name);
        json_object_put(reply);
        close(fd);
        return 0;
}

/* As nobody, with max_connections_per_uid = 2: two connections that only
 * ever called an anonymous method were admitted unchecked, yet a third is
 * refused: reaching the cap counts every open connection under its uid. */
static int child_unchecked_then_capped(Server *s, const void *arg) {
        json_object *reply = NULL;
        char *name = NULL;
        int fds[2], fd, r;

        if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
                return 99;
        for (int i = 0; i < 2; i++) {
                if (client_connect(s->path, 5 * SEC, &fds[i]) < 0)
                        return 100;
                if (call_uid(fds[i], "io.sunkd.Test.Anon") != (int64_t) (uid_t) -1)
                        return 10 + i;
        }
        if (client_connect(s->path, 5 * SEC, &fd) < 0)
                return 100;
        r = client_call(fd, "io.sunkd.Test.Anon", NULL, 5 * SEC, 0, &reply, &name);
        close(fd);
        if (r >= 0 || r == -EREMOTEIO || r == -ETIMEDOUT)
                return 20;
        /* One closed: a slot is free again for this uid. */
        close(fds[0]);
        for (int tries = 0;; tries++) {
                if (client_connect(s->path, 5 * SEC, &fd) < 0)
                        return 100;
                r = (int) call_uid(fd, "io.sunkd.Test.Creds");
                close(fd);
                if (r == 65534)
                        break;
                /* the server may not have seen the close yet: it is refused, never answered wrongly */
                if (r != -1 || tries > 1000)
                        return 21;
        }
        close(fds[1]);
        return 0;
}

/* ---- Tests -------------------------------------------------------------- */

START_TEST(test_immediate) {
        Server s;
        Raw c;
        json_object *o;

        server_start(&s, NULL);
        raw_connect(&s, &c);
        o = call_raw(&s, &c, "{\"method\":\"io.sunkd.Test.Echo\",\"parameters\":{\"x\":[1,\"two\"]}}");
        assert_reply(o);
        ck_assert_str_eq(json_object_to_json_string_ext(json_object_object_get(o, "parameters"),
                                                        JSON_C_TO_STRING_PLAIN),
                         "{\"x\":[1,\"two\"]}");
        json_object_put(o);
        ck_assert_uint_eq(ipc_n_connections(s.ipc), 1);

        /* Absent parameters are an empty object; credentials are the peer's. */
        o = call_raw(&s, &c, "{\"method\":\"io.sunkd.Test.Creds\"}");
        assert_reply(o);
        ck_assert_int_eq(json_object_get_int(param(o, "uid")), (int) getuid());
        ck_assert_int_eq(json_object_get_int(param(o, "pid")), (int) getpid());
        ck_assert_str_eq(json_object_get_string(param(o, "method")), "io.sunkd.Test.Creds");
        json_object_put(o);

        raw_close(&c);
        pump_until_connections(&s, 0);
        server_stop(&s);
}
END_TEST

START_TEST(test_pending_and_pipelined) {
        Server s;
        Raw c;
        json_object *o;
        const char batch[] = "{\"method\":\"io.sunkd.Test.Echo\",\"parameters\":{\"i\":1}}\0"
                             "{\"method\":\"io.sunkd.Test.Later\"}\0"
                             "{\"method\":\"io.sunkd.Test.Echo\",\"parameters\":{\"i\":2}}\0"
                             "{\"method\":\"io.sunkd.Test.Nope\"}\0"
                             "{\"method\":\"io.sunkd.Test.Echo\",\"parameters\":{\"i\":3}}";

        server_start(&s, NULL);
        raw_connect(&s, &c);
        /* Five requests in one write, answered one by one and in order, the
         * pending one included. */
        ck_assert(raw_send(&s, &c, batch, sizeof(batch)));
        expect_reply_int(&s, &c, "i", 1);
        expect_reply_true(&s, &c, "late");
        expect_reply_int(&s, &c, "i", 2);
        o = raw_recv(&s, &c, 5 * SEC);
        assert_error(o, "org.varlink.service.MethodNotFound");
        ck_assert_str_eq(json_object_get_string(param(o, "method")), "io.sunkd.Test.Nope");
        json_object_put(o);
        expect_reply_int(&s, &c, "i", 3);
        ck_assert_ptr_null(s.pending);

        raw_close(&c);
        server_stop(&s);
}
END_TEST

START_TEST(test_disconnect_while_pending) {
        Server s;
        Raw c;
        sunkd_call *call;

        server_start(&s, NULL);
        raw_connect(&s, &c);
        raw_send_str(&s, &c, "{\"method\":\"io.sunkd.Test.Hold\",\"parameters\":{\"keep\":\"me\"}}");
        while (!s.pending)
                pump(&s, 10 * MSEC);
        call = s.pending;
        ck_assert(!ipc_call_is_orphaned(call));

        raw_close(&c);
        pump_until_connections(&s, 0);
        /* The handle outlives its connection. */
        ck_assert(ipc_call_is_orphaned(call));
        ck_assert_int_eq(ipc_call_uid(call), getuid());
        ck_assert_str_eq(ipc_call_method(call), "io.sunkd.Test.Hold");
        ck_assert_int_eq(ipc_reply(call, json_object_new_object()), 0);
        s.pending = NULL;

        /* Pending at ipc_free(): orphaned too, and the reply frees it. */
        raw_connect(&s, &c);
        raw_send_str(&s, &c, "{\"method\":\"io.sunkd.Test.Hold\"}");
        while (!s.pending)
                pump(&s, 10 * MSEC);
        s.ipc = ipc_free(s.ipc);
        ck_assert_int_eq(ipc_reply_error(s.pending, "io.sunkd.Gone", NULL), 0);
        assert_eof(&s, &c);
        raw_close(&c);
        s.event = sd_event_unref(s.event);
        ck_assert_int_eq(access(s.path, F_OK), -1);
        char run[160];
        snprintf(run, sizeof(run), "%s/run", s.dir);
        ck_assert_int_eq(rmdir(run), 0);
        ck_assert_int_eq(rmdir(s.dir), 0);
}
END_TEST

/* @data holds calls with "i": 1 and 2, sent in one write and half-closed:
 * both answered, in order, then the end. */
static void two_calls_then_eof(Server *s, const char *data, size_t len) {
        Raw c;

        raw_connect(s, &c);
        ck_assert(raw_send(s, &c, data, len));
        ck_assert_int_eq(shutdown(c.fd, SHUT_WR), 0);
        expect_reply_int(s, &c, "i", 1);
        expect_reply_int(s, &c, "i", 2);
        assert_eof(s, &c);
        raw_close(&c);
        pump_until_connections(s, 0);
}

/* A client that shuts down its sending side after its call (sunkctl,
 * sunkd-authkeys) is answered and closed from the accept itself: one loop
 * iteration, no registration left behind. */
START_TEST(test_half_close) {
        const char two[] = "{\"method\":\"io.sunkd.Test.Echo\",\"parameters\":{\"i\":1}}\0"
                           "{\"method\":\"io.sunkd.Test.Echo\",\"parameters\":{\"i\":2}}";
        Server s;
        Raw c;
        json_object *o;

        server_start(&s, NULL);
        raw_connect(&s, &c);
        raw_send_str(&s, &c, "{\"method\":\"io.sunkd.Test.Echo\",\"parameters\":{\"i\":7}}");
        ck_assert_int_eq(shutdown(c.fd, SHUT_WR), 0);
        pump(&s, 5 * SEC);
        ck_assert_uint_eq(ipc_n_connections(s.ipc), 0);
        expect_reply_int(&s, &c, "i", 7);
        assert_eof(&s, &c);
        raw_close(&c);

        /* Two calls, then the end: both answered, in order. */
        two_calls_then_eof(&s, two, sizeof(two));

        /* A call that fills the first read exactly, and one after it in the
         * same write: both answered, in order, each once. */
        {
                char big[4096 + 128];
                const char *head = "{\"method\":\"io.sunkd.Test.Echo\",\"parameters\":{\"i\":1,\"pad\":\"";
                const char *tail = "\"}}";
                const char next[] = "{\"method\":\"io.sunkd.Test.Echo\",\"parameters\":{\"i\":2}}";
                size_t pad = 4095 - strlen(head) - strlen(tail), len = 0;

                memcpy(big, head, strlen(head));
                len += strlen(head);
                memset(big + len, 'x', pad);
                len += pad;
                memcpy(big + len, tail, strlen(tail));
                len += strlen(tail);
                big[len++] = '\0';
                ck_assert_uint_eq(len, 4096);
                memcpy(big + len, next, sizeof(next));
                len += sizeof(next);
                two_calls_then_eof(&s, big, len);
        }

        /* A pending call: a half-close is not a hangup; the reply still comes. */
        raw_connect(&s, &c);
        raw_send_str(&s, &c, "{\"method\":\"io.sunkd.Test.Hold\"}");
        ck_assert_int_eq(shutdown(c.fd, SHUT_WR), 0);
        while (!s.pending)
                pump(&s, 10 * MSEC);
        ck_assert_int_eq(ipc_call_on_gone(s.pending, on_gone_count, &s), 0);
        pump(&s, 50 * MSEC);
        ck_assert(!ipc_call_is_orphaned(s.pending));
        ck_assert_uint_eq(s.n_count, 0);
        ck_assert_int_eq(ipc_reply(s.pending, json_object_new_object()), 0);
        s.pending = NULL;
        o = raw_recv(&s, &c, 5 * SEC);
        assert_reply(o);
        json_object_put(o);
        assert_eof(&s, &c);
        raw_close(&c);
        pump_until_connections(&s, 0);

        /* Half a call, then the end. */
        raw_connect(&s, &c);
        ck_assert(raw_send(&s, &c, "{\"method\":", 10));
        ck_assert_int_eq(shutdown(c.fd, SHUT_WR), 0);
        o = raw_recv(&s, &c, 5 * SEC);
        assert_error(o, "io.sunkd.InvalidMessage");
        json_object_put(o);
        assert_eof(&s, &c);
        raw_close(&c);
        pump_until_connections(&s, 0);
        server_stop(&s);
}
END_TEST

START_TEST(test_policy) {
        static const Identity cases[] = {
                /* nobody: any-uid yes, root-only no, allow-list no */
                { 65534, 65534, 0, { 0 }, "io.sunkd.Test.Echo", NULL },
                { 65534, 65534, 0, { 0 }, "io.sunkd.Test.Root", "io.sunkd.PermissionDenied" },
                { 65534, 65534, 0, { 0 }, "io.sunkd.Test.Allowed", "io.sunkd.PermissionDenied" },
                /* allowed by uid, by primary gid, by a supplementary group */
                { 4321, 65534, 0, { 0 }, "io.sunkd.Test.Allowed", NULL },
                { 65534, 4242, 0, { 0 }, "io.sunkd.Test.Allowed", NULL },
                { 65534, 65534, 2, { 100, 4242 }, "io.sunkd.Test.Allowed", NULL },
                { 65534, 65534, 2, { 100, 4242 }, "io.sunkd.Test.Root", "io.sunkd.PermissionDenied" },
                /* root: everything */
                { 0, 0, 0, { 0 }, "io.sunkd.Test.Root", NULL },
                { 0, 0, 0, { 0 }, "io.sunkd.Test.Allowed", NULL },
        };
        Server s;

        ck_assert_int_eq(geteuid(), 0); /* the tests run as root */
        server_start(&s, NULL);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                ck_assert_msg(run_child(&s, child_as, &cases[i]) == 0, "case %zu", i);
        pump_until_connections(&s, 0);
        server_stop(&s);
}
END_TEST

START_TEST(test_unknown_method) {
        Server s;
        Raw c;
        json_object *o;

        server_start(&s, NULL);
        raw_connect(&s, &c);
        o = call_raw(&s, &c, "{\"method\":\"io.sunkd.Test.Missing\",\"parameters\":{}}");
        assert_error(o, "org.varlink.service.MethodNotFound");
        ck_assert_str_eq(json_object_get_string(param(o, "method")), "io.sunkd.Test.Missing");
        json_object_put(o);
        /* Not fatal: the connection keeps working. */
        o = call_raw(&s, &c, "{\"method\":\"io.sunkd.Test.Echo\"}");
        assert_reply(o);
        json_object_put(o);

        /* Removed methods are unknown. */
        ipc_remove_methods(s.ipc, &s);
        o = call_raw(&s, &c, "{\"method\":\"io.sunkd.Test.Echo\"}");
        assert_error(o, "org.varlink.service.MethodNotFound");
        json_object_put(o);
        raw_close(&c);
        server_stop(&s);
}
END_TEST

static const char frame_head[] = "{\"method\":\"io.sunkd.Test.Echo\",\"parameters\":{\"s\":\"";
static const char frame_tail[] = "\"}}";

static char *frame_of_size(size_t total) {
        /* {"method":"io.sunkd.Test.Echo","parameters":{"s":"xxx"}} plus NUL = total bytes */
        const char *head = frame_head, *tail = frame_tail;
        char *b = malloc(total);

        memset(b, 'x', total);
        memcpy(b, head, strlen(head));
        memcpy(b + total - 1 - strlen(tail), tail, strlen(tail));
        b[total - 1] = 0;
        return b;
}

/* On @big: a request of exactly @limit bytes with the NUL is answered; one
 * byte more gets InvalidMessage, and the connection is closed. */
static void expect_limit(Server *s, Raw *big, size_t limit) {
        json_object *o;
        char *b;

        b = frame_of_size(limit);
        ck_assert(raw_send(s, big, b, limit));
        free(b);
        o = raw_recv(s, big, 5 * SEC);
        assert_reply(o);
        ck_assert_uint_eq(strlen(json_object_get_string(param(o, "s"))),
                          limit - 1 - strlen(frame_head) - strlen(frame_tail));
        json_object_put(o);

        b = frame_of_size(limit + 1);
        (void) raw_send(s, big, b, limit + 1);
        free(b);
        o = raw_recv(s, big, 5 * SEC);
        assert_error(o, "io.sunkd.InvalidMessage");
        ck_assert_str_eq(json_object_get_string(param(o, "reason")), "message too large");
        json_object_put(o);
        assert_eof(s, big);
        raw_close(big);
}

START_TEST(test_oversize) {
        /* as for any uid but root: this process is root */
        IpcLimits limits = { .max_request_root = 64 * 1024 };
        Server s;
        Raw big, other;
        json_object *o;

        server_start(&s, &limits);
        raw_connect(&s, &other);
        raw_connect(&s, &big);
        expect_limit(&s, &big, 64 * 1024);

        /* Everybody else is unaffected. */
        o = call_raw(&s, &other, "{\"method\":\"io.sunkd.Test.Echo\"}");
        assert_reply(o);
        json_object_put(o);
        pump_until_connections(&s, 1);
        raw_close(&other);
        server_stop(&s);
}
END_TEST

/* Root may send more than max_request (the prolog client hands over a
 * job's whole environment), up to max_request_root. */
START_TEST(test_oversize_root) {
        IpcLimits limits = { .max_request_root = 256 * 1024 };
        Server s;
        Raw big;

        server_start(&s, &limits);
        raw_connect(&s, &big);
        expect_limit(&s, &big, 256 * 1024);
        server_stop(&s);
}
END_TEST

#define BAD_TEXT "not valid UTF-8, or contains a NUL"

START_TEST(test_bad_messages) {
        static const struct {
                const char *frame;
                const char *reason;
        } cases[] = {
                { "{\"method\":\"a.B\",\"method\":\"a.C\"}", "duplicate key" },
                { "{\"method\":\"a.B\",\"parameters\":{\"x\":1,\"y\":{\"z\":1,\"z\":1}}}", "duplicate key" },
                { "{\"method\":\"a.B\",\"parameters\":{\"s\":\"\xc0\x80\"}}", BAD_TEXT },
                { "{\"method\":\"a.B\",\"parameters\":{\"s\":\"\\u0000\"}}", BAD_TEXT },
                { "[{\"method\":\"a.B\"}]", "not a well-formed JSON object" },
                { "{\"method\":\"a.B\"} {}", "not a well-formed JSON object" },
                { "{\"method\":\"a.B\"", "not a well-formed JSON object" },
                { "{\"method\":\"a.B\",\"bogus\":1}", "not a method call" },
                { "{\"parameters\":{}}", "not a method call" },
                { "{\"method\":\"no spaces.B\"}", "not a method call" },
                { "{\"method\":\"a.B\",\"parameters\":{\"a\":{\"a\":{\"a\":{}}}}}", "nested too deeply" },
        };
        IpcLimits limits = { .max_depth = 4 };
        Server s;
        Raw c;
        json_object *o;

        server_start(&s, &limits);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                raw_connect(&s, &c);
                /* A good call first: the connection is healthy until the bad one. */
                o = call_raw(&s, &c,
                             "{\"method\":\"io.sunkd.Test.Echo\",\"parameters\":{\"a\":{\"a\":{}}}}");
                assert_reply(o);
                json_object_put(o);
                o = call_raw(&s, &c, cases[i].frame);
                assert_error(o, "io.sunkd.InvalidMessage");
                ck_assert_msg(streq(json_object_get_string(param(o, "reason")), cases[i].reason),
                              "case %zu: %s", i, json_object_get_string(param(o, "reason")));
                json_object_put(o);
                assert_eof(&s, &c);
                raw_close(&c);
        }
        pump_until_connections(&s, 0);
        server_stop(&s);
}
END_TEST

START_TEST(test_truncated_then_eof) {
        Server s;
        Raw c;
        json_object *o;

        server_start(&s, NULL);

        /* Half a message, then the peer stops sending but still listens. */
        raw_connect(&s, &c);
        ck_assert(raw_send(&s, &c, "{\"method\":\"io.sunkd.Te", 22));
        pump(&s, 10 * MSEC);
        ck_assert_int_eq(shutdown(c.fd, SHUT_WR), 0);
        o = raw_recv(&s, &c, 5 * SEC);
        assert_error(o, "io.sunkd.InvalidMessage");
        ck_assert_str_eq(json_object_get_string(param(o, "reason")), "truncated message");
        json_object_put(o);
        assert_eof(&s, &c);
        raw_close(&c);

        /* A whole message and a half, then a full close. */
        raw_connect(&s, &c);
        ck_assert(raw_send(&s, &c, "{\"method\":\"io.sunkd.Test.Count\",\"oneway\":true}\0{\"meth", 52));
        raw_close(&c);
        while (s.n_count < 1)
                pump(&s, 10 * MSEC);
        pump_until_connections(&s, 0);
        ck_assert_uint_eq(s.n_count, 1);

        /* A complete call, then SHUT_WR: answered, then closed. */
        raw_connect(&s, &c);
        raw_send_str(&s, &c, "{\"method\":\"io.sunkd.Test.Later\"}");
        ck_assert_int_eq(shutdown(c.fd, SHUT_WR), 0);
        o = raw_recv(&s, &c, 5 * SEC);
        assert_reply(o);
        json_object_put(o);
        assert_eof(&s, &c);
        raw_close(&c);

        pump_until_connections(&s, 0);
        server_stop(&s);
}
END_TEST

START_TEST(test_idle_timeout) {
        IpcLimits limits = { .idle_timeout_usec = 200 * MSEC };
        Server s;
        Raw quiet, busy, waiting;
        uint64_t start, end;
        json_object *o;

        server_start(&s, &limits);
        start = now_usec(CLOCK_MONOTONIC);
        raw_connect(&s, &quiet);
        raw_connect(&s, &busy);
        raw_connect(&s, &waiting);
        raw_send_str(&s, &waiting, "{\"method\":\"io.sunkd.Test.Hold\"}");

        /* The busy one talks every 50 ms for 600 ms: its timer is re-armed. */
        for (int i = 0; i < 12; i++) {
                o = call_raw(&s, &busy, "{\"method\":\"io.sunkd.Test.Echo\"}");
                assert_reply(o);
                json_object_put(o);
                uint64_t until = now_usec(CLOCK_MONOTONIC) + 50 * MSEC;
                while (now_usec(CLOCK_MONOTONIC) < until)
                        pump(&s, 10 * MSEC);
        }
        /* The quiet one was closed after about 200 ms. */
        assert_eof(&s, &quiet);
        end = now_usec(CLOCK_MONOTONIC);
        ck_assert_uint_ge(end - start, 200 * MSEC);
        raw_close(&quiet);

        /* A pending call is our turn, not the peer's: no timeout meanwhile. */
        ck_assert_ptr_nonnull(s.pending);
        ck_assert(!ipc_call_is_orphaned(s.pending));
        ck_assert_int_eq(ipc_reply(s.pending, NULL), 0);
        s.pending = NULL;
        o = raw_recv(&s, &waiting, 5 * SEC);
        assert_reply(o);
        json_object_put(o);

        /* And both are closed once they fall silent. */
        assert_eof(&s, &busy);
        assert_eof(&s, &waiting);
        raw_close(&busy);
        raw_close(&waiting);
        pump_until_connections(&s, 0);
        server_stop(&s);
}
END_TEST

static void raise_fd_limit(void) {
        struct rlimit rl;

        ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
        if (rl.rlim_cur < 4096) {
                rl.rlim_cur = MIN(rl.rlim_max, (rlim_t) 4096);
                ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
        }
        ck_assert_uint_ge(rl.rlim_cur, 1100);
}

static void many_clients(Server *s, unsigned n) {
        Raw *c = calloc(n, sizeof(Raw));
        char msg[128];

        for (unsigned i = 0; i < n; i++)
                raw_connect(s, &c[i]);
        for (unsigned i = 0; i < n; i++) {
                snprintf(msg, sizeof(msg), "{\"method\":\"io.sunkd.Test.Echo\",\"parameters\":{\"i\":%u}}",
                         i);
                raw_send_str(s, &c[i], msg);
        }
        for (unsigned i = 0; i < n; i++) {
                json_object *o = raw_recv(s, &c[i], 10 * SEC);

                assert_reply(o);
                ck_assert_int_eq(json_object_get_int(param(o, "i")), (int) i);
                json_object_put(o);
        }
        ck_assert_uint_eq(ipc_n_connections(s->ipc), n);
        for (unsigned i = 0; i < n; i++)
                raw_close(&c[i]);
        free(c);
        pump_until_connections(s, 0);
}

START_TEST(test_many_clients) {
        IpcLimits limits = IPC_LIMITS_DEFAULT;
        Server s;

        raise_fd_limit();
        /* 500 at once, with room for them. */
        limits.max_connections = 512;
        server_start(&s, &limits);
        many_clients(&s, 500);
        server_stop(&s);

        /* 500 with the default limit of 256: in waves that fit. */
        server_start(&s, NULL);
        for (int wave = 0; wave < 2; wave++)
                many_clients(&s, 250);
        server_stop(&s);
}
END_TEST

START_TEST(test_max_connections) {
        IpcLimits limits = { .max_connections = 4 };
        Server s;
        Raw c[5];
        json_object *o;

        server_start(&s, &limits);
        for (int i = 0; i < 4; i++) {
                raw_connect(&s, &c[i]);
                o = call_raw(&s, &c[i], "{\"method\":\"io.sunkd.Test.Echo\"}");
                assert_reply(o);
                json_object_put(o);
        }
        ck_assert_uint_eq(ipc_n_connections(s.ipc), 4);

        /* The fifth is accepted and closed at once. */
        raw_connect(&s, &c[4]);
        assert_eof(&s, &c[4]);
        raw_close(&c[4]);
        ck_assert_uint_eq(ipc_n_connections(s.ipc), 4);
        for (int i = 0; i < 4; i++) {
                o = call_raw(&s, &c[i], "{\"method\":\"io.sunkd.Test.Echo\"}");
                assert_reply(o);
                json_object_put(o);
        }

        /* A free slot is a slot again. */
        raw_close(&c[0]);
        pump_until_connections(&s, 3);
        raw_connect(&s, &c[0]);
        o = call_raw(&s, &c[0], "{\"method\":\"io.sunkd.Test.Echo\"}");
        assert_reply(o);
        json_object_put(o);

        for (int i = 0; i < 4; i++)
                raw_close(&c[i]);
        pump_until_connections(&s, 0);
        server_stop(&s);
}
END_TEST

START_TEST(test_oneway) {
        Server s;
        Raw c;
        json_object *o;
        const char batch[] = "{\"method\":\"io.sunkd.Test.Count\",\"oneway\":true}\0"
                             "{\"method\":\"io.sunkd.Test.Missing\",\"oneway\":true}\0"
                             "{\"method\":\"io.sunkd.Test.Fail\",\"oneway\":true}\0"
                             "{\"method\":\"io.sunkd.Test.Count\",\"oneway\":false}\0"
                             "{\"method\":\"io.sunkd.Test.Echo\",\"parameters\":{\"last\":true}}";

        server_start(&s, NULL);
        raw_connect(&s, &c);
        ck_assert(raw_send(&s, &c, batch, sizeof(batch)));
        /* Only the two calls that were not oneway are answered. */
        o = raw_recv(&s, &c, 5 * SEC);
        assert_reply(o);
        ck_assert_ptr_null(param(o, "last"));
        json_object_put(o);
        expect_reply_true(&s, &c, "last");
        ck_assert_uint_eq(s.n_count, 2);

        /* Oneway and gone at once: the call still runs. */
        raw_close(&c);
        raw_connect(&s, &c);
        raw_send_str(&s, &c, "{\"method\":\"io.sunkd.Test.Count\",\"oneway\":true}");
        raw_close(&c);
        while (s.n_count < 3)
                pump(&s, 10 * MSEC);
        pump_until_connections(&s, 0);
        ck_assert_uint_eq(s.n_count, 3);

        /* A pending oneway call is answered into the void. */
        raw_connect(&s, &c);
        raw_send_str(&s, &c, "{\"method\":\"io.sunkd.Test.Later\",\"oneway\":true}");
        o = call_raw(&s, &c, "{\"method\":\"io.sunkd.Test.Echo\",\"parameters\":{\"after\":1}}");
        assert_reply(o);
        ck_assert_int_eq(json_object_get_int(param(o, "after")), 1);
        json_object_put(o);
        ck_assert_ptr_null(s.pending);
        raw_close(&c);
        pump_until_connections(&s, 0);
        server_stop(&s);
}
END_TEST

START_TEST(test_handler_errors) {
        IpcLimits limits = { .max_reply = 1024 };
        Server s;
        Raw c;
        json_object *o;

        server_start(&s, &limits);
        raw_connect(&s, &c);

        o = call_raw(&s, &c, "{\"method\":\"io.sunkd.Test.Fail\"}");
        assert_error(o, "io.sunkd.InternalError");
        ck_assert_int_eq(json_object_get_int(param(o, "errno")), ENOENT);
        ck_assert_str_eq(json_object_get_string(param(o, "message")), "No such file or directory");
        json_object_put(o);

        o = call_raw(&s, &c, "{\"method\":\"io.sunkd.Test.Silent\"}");
        assert_error(o, "io.sunkd.InternalError");
        ck_assert_int_eq(json_object_get_int(param(o, "errno")), EPROTO);
        json_object_put(o);

        s.twice_result = 0;
        o = call_raw(&s, &c, "{\"method\":\"io.sunkd.Test.Twice\"}");
        assert_reply(o);
        json_object_put(o);
        ck_assert_int_eq(s.twice_result, -EALREADY);

        /* Replies over max_reply become ReplyTooLarge; the connection lives on. */
        o = call_raw(&s, &c, "{\"method\":\"io.sunkd.Test.Big\",\"parameters\":{\"size\":2000}}");
        assert_error(o, "io.sunkd.ReplyTooLarge");
        json_object_put(o);
        o = call_raw(&s, &c, "{\"method\":\"io.sunkd.Test.Big\",\"parameters\":{\"size\":990}}");
        assert_reply(o);
        json_object_put(o);
        o = call_raw(&s, &c, "{\"method\":\"io.sunkd.Test.Big\",\"parameters\":{\"size\":1010}}");
        assert_error(o, "io.sunkd.ReplyTooLarge");
        json_object_put(o);

        raw_close(&c);
        server_stop(&s);
}
END_TEST

static int add(Ipc *ipc, const char *name, unsigned flags, IpcMethodFn fn) {
        return ipc_add_method(ipc, name, flags, fn, NULL, NULL, NULL);
}

START_TEST(test_methods_table) {
        Server s;

        server_start(&s, NULL);
        ck_assert_int_eq(add(s.ipc, "io.sunkd.Test.Echo", SUNKD_METHOD_ROOT, m_echo), -EEXIST);
        ck_assert_int_eq(add(s.ipc, "io.sunkd.Test.New", 0, m_echo), -EINVAL);
        ck_assert_int_eq(add(s.ipc, "io.sunkd.Test.New", SUNKD_METHOD_ROOT | SUNKD_METHOD_ANY_UID, m_echo),
                         -EINVAL);
        ck_assert_int_eq(add(s.ipc, "io.sunkd.Test.New", SUNKD_METHOD_ROOT | 0x100, m_echo), -EINVAL);
        ck_assert_int_eq(add(s.ipc, "NoDot", SUNKD_METHOD_ROOT, m_echo), -EINVAL);
        ck_assert_int_eq(add(s.ipc, "io.sunkd.Test.New", SUNKD_METHOD_ROOT, NULL), -EINVAL);
        /* Registration order does not matter to the lookup. */
        ck_assert_int_eq(add(s.ipc, "aaa.First", SUNKD_METHOD_ANY_UID, m_echo), 0);
        ck_assert_int_eq(add(s.ipc, "zzz.Last", SUNKD_METHOD_ANY_UID, m_echo), 0);
        ck_assert_int_eq(add(s.ipc, "mmm.Middle", SUNKD_METHOD_ANY_UID, m_echo), 0);

        Raw c;
        raw_connect(&s, &c);
        static const char *const names[] = { "aaa.First", "zzz.Last", "mmm.Middle", "io.sunkd.Test.Echo" };
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                char msg[128];
                json_object *o;

                snprintf(msg, sizeof(msg), "{\"method\":\"%s\"}", names[i]);
                o = call_raw(&s, &c, msg);
                assert_reply(o);
                json_object_put(o);
        }
        raw_close(&c);
        server_stop(&s);
}
END_TEST

static int child_client(Server *s, const void *arg) {
        json_object *reply = NULL, *params;
        char *name = NULL;
        int fd, r;

        /* A call with parameters, and its reply. */
        if (client_connect(s->path, 5 * SEC, &fd) < 0)
                return 1;
        params = json_object_new_object();
        json_object_object_add(params, "k", json_object_new_string("v"));
        r = client_call(fd, "io.sunkd.Test.Echo", params, 5 * SEC, 0, &reply, &name);
        json_object_put(params);
        if (r != 0 || name || !reply ||
            !streq(json_object_get_string(json_object_object_get(reply, "k")), "v"))
                return 2;
        json_object_put(reply);

        /* Errors come back as -EREMOTEIO with their name and parameters. */
        r = client_call(fd, "io.sunkd.Test.Fail", NULL, 5 * SEC, 0, &reply, &name);
        if (r != -EREMOTEIO || !streq(name, "io.sunkd.InternalError") ||
            json_object_get_int(json_object_object_get(reply, "errno")) != ENOENT)
                return 3;
        json_object_put(reply);
        free(name);

        /* A reply over the client's own limit. */
        params = json_object_new_object();
        json_object_object_add(params, "size", json_object_new_int(5000));
        r = client_call(fd, "io.sunkd.Test.Big", params, 5 * SEC, 4096, &reply, &name);
        json_object_put(params);
        if (r != -EMSGSIZE || reply || name)
                return 4;
        close(fd);

        /* A call nobody answers in time. */
        if (client_connect(s->path, 5 * SEC, &fd) < 0)
                return 5;
        r = client_call(fd, "io.sunkd.Test.Hold", NULL, 200 * MSEC, 0, &reply, &name);
        if (r != -ETIMEDOUT || reply || name)
                return 6;
        close(fd);

        /* The last call half-closes: answered, then the end of the stream. */
        if (client_connect(s->path, 5 * SEC, &fd) < 0)
                return 9;
        r = client_call_last(fd, "io.sunkd.Test.Echo", NULL, 5 * SEC, 0, &reply, &name);
        if (r != 0 || name || !reply)
                return 10;
        json_object_put(reply);
        {
                struct pollfd pfd = { .fd = fd, .events = POLLIN };
                char b;

                if (poll(&pfd, 1, 5000) != 1 || read(fd, &b, 1) != 0)
                        return 11;
        }
        close(fd);

        /* Bad arguments. */
        if (client_connect(s->path, 5 * SEC, &fd) < 0)
                return 7;
        if (client_call(fd, "nodot", NULL, SEC, 0, &reply, &name) != -EINVAL)
                return 8;
        close(fd);
        return 0;
}

static int child_closed(Server *s, const void *arg) {
        json_object *reply = NULL;
        char *name = NULL;
        int fd, r;

        /* The server hangs up without an answer. */
        if (client_connect(s->path, 5 * SEC, &fd) < 0)
                return 1;
        r = client_call(fd, "io.sunkd.Test.Hold", NULL, 5 * SEC, 0, &reply, &name);
        close(fd);
        return r == -ECONNRESET && !reply && !name ? 0 : 2;
}

static int on_drop_pending(sd_event_source *src, void *userdata) {
        Server *s = userdata;

        if (s->pending) {
                /* Stop the server's side: the connection closes under the call. */
                s->ipc = ipc_free(s->ipc);
                ck_assert_int_eq(ipc_reply(s->pending, NULL), 0);
                s->pending = NULL;
        }
        return 0;
}

START_TEST(test_client) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char stale[160], longpath[200];
        sd_event_source *post = NULL;
        Server s;
        int fd, lfd;

        server_start(&s, NULL);

        /* No socket, a socket nobody listens on, a path too long. */
        snprintf(stale, sizeof(stale), "%s/missing", s.dir);
        ck_assert_int_eq(client_connect(stale, SEC, &fd), -ENOENT);
        snprintf(stale, sizeof(stale), "%s/stale", s.dir);
        lfd = socket(AF_UNIX, SOCK_STREAM, 0);
        strcpy(sa.sun_path, stale);
        ck_assert_int_eq(bind(lfd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        ck_assert_int_eq(client_connect(stale, SEC, &fd), -ECONNREFUSED);
        close(lfd);
        ck_assert_int_eq(unlink(stale), 0);
        memset(longpath, 'a', sizeof(longpath) - 1);
        longpath[0] = '/';
        longpath[sizeof(longpath) - 1] = 0;
        ck_assert_int_eq(client_connect(longpath, SEC, &fd), -ENAMETOOLONG);

        ck_assert_int_eq(run_child(&s, child_client, NULL), 0);
        /* The Hold call of the timed-out client is still ours to answer. */
        ck_assert_ptr_nonnull(s.pending);
        ck_assert_int_eq(ipc_reply(s.pending, NULL), 0);
        s.pending = NULL;
        pump_until_connections(&s, 0);

        ck_assert_int_eq(sd_event_add_post(s.event, &post, on_drop_pending, &s), 0);
        ck_assert_int_eq(run_child(&s, child_closed, NULL), 0);
        sd_event_source_unref(post);
        ck_assert_ptr_null(s.ipc);
        s.event = sd_event_unref(s.event);
        char run[160];
        snprintf(run, sizeof(run), "%s/run", s.dir);
        ck_assert_int_eq(rmdir(run), 0);
        ck_assert_int_eq(rmdir(s.dir), 0);
}
END_TEST

START_TEST(test_listen) {
        Server s;
        Ipc *other = NULL;
        struct stat st;
        int fd, lfd;

        server_start(&s, NULL);
        ck_assert_int_eq(stat(s.path, &st), 0);
        ck_assert(S_ISSOCK(st.st_mode));
        ck_assert_int_eq(st.st_mode & 07777, 0666);

        /* A live socket is not taken over; a second listen on one Ipc is refused. */
        ck_assert_int_eq(ipc_new(s.event, NULL, &other), 0);
        ck_assert_int_eq(ipc_listen(other, s.path, 0600, (gid_t) -1), -EADDRINUSE);
        ck_assert_int_eq(ipc_listen(s.ipc, s.path, 0600, (gid_t) -1), -EBUSY);
        ck_assert_int_eq(ipc_listen(other, "relative/path", 0600, (gid_t) -1), -EINVAL);

        /* Lame duck: existing connections stay, new ones are refused. */
        Raw c;
        raw_connect(&s, &c);
        pump_until_connections(&s, 1);
        ipc_stop_accepting(s.ipc);
        json_object *o = call_raw(&s, &c, "{\"method\":\"io.sunkd.Test.Echo\"}");
        assert_reply(o);
        json_object_put(o);
        /* ...and the path is gone at once: a new client is told nobody is there. */
        ck_assert_int_eq(client_connect(s.path, SEC, &fd), -ENOENT);
        raw_close(&c);
        pump_until_connections(&s, 0);

        /* A stale socket (left by a process that died) is replaced, with the
         * mode and group asked for. */
        {
                struct sockaddr_un sun = { .sun_family = AF_UNIX };
                int dead = socket(AF_UNIX, SOCK_STREAM, 0);

                ck_assert_int_ge(dead, 0);
                strcpy(sun.sun_path, s.path);
                ck_assert_int_eq(bind(dead, (struct sockaddr *) &sun, sizeof(sun)), 0);
                close(dead);
                ck_assert_int_eq(client_connect(s.path, SEC, &fd), -ECONNREFUSED);
        }
        ck_assert_int_eq(ipc_listen(other, s.path, 0660, 4242), 0);
        ck_assert_int_eq(stat(s.path, &st), 0);
        ck_assert_int_eq(st.st_mode & 07777, 0660);
        ck_assert_int_eq(st.st_gid, 4242);
        ck_assert_int_eq(
                ipc_add_method(other, "io.sunkd.Test.Echo", SUNKD_METHOD_ANY_UID, m_echo, NULL, NULL, NULL),
                0);
        raw_connect(&s, &c);
        o = call_raw(&s, &c, "{\"method\":\"io.sunkd.Test.Echo\"}");
        assert_reply(o);
        json_object_put(o);
        raw_close(&c);
        other = ipc_free(other);
        ck_assert_int_eq(access(s.path, F_OK), -1);

        /* Something that is not a socket is left alone. */
        fd = open(s.path, O_CREAT | O_WRONLY, 0600);
        ck_assert_int_ge(fd, 0);
        close(fd);
        ck_assert_int_eq(ipc_new(s.event, NULL, &other), 0);
        ck_assert_int_eq(ipc_listen(other, s.path, 0600, (gid_t) -1), -EEXIST);
        ck_assert_int_eq(unlink(s.path), 0);

        /* Adoption: a listening AF_UNIX stream socket only. */
        lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ck_assert_int_eq(ipc_adopt(other, lfd), -EINVAL);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        strcpy(sa.sun_path, s.path);
        ck_assert_int_eq(bind(lfd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        ck_assert_int_eq(listen(lfd, 16), 0);
        ck_assert_int_eq(ipc_adopt(other, lfd), 0);
        ck_assert_int_eq(
                ipc_add_method(other, "io.sunkd.Test.Echo", SUNKD_METHOD_ANY_UID, m_echo, NULL, NULL, NULL),
                0);
        raw_connect(&s, &c);
        o = call_raw(&s, &c, "{\"method\":\"io.sunkd.Test.Echo\"}");
        assert_reply(o);
        json_object_put(o);
        raw_close(&c);
        other = ipc_free(other);
        /* Not ours to remove: the socket came from outside. */
        ck_assert_int_eq(unlink(s.path), 0);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        ck_assert_int_eq(ipc_new(s.event, NULL, &other), 0);
        ck_assert_int_eq(ipc_adopt(other, fd), -EAFNOSUPPORT);
        close(fd);
        other = ipc_free(other);

        s.ipc = ipc_free(s.ipc);
        s.event = sd_event_unref(s.event);
        char run[160];
        snprintf(run, sizeof(run), "%s/run", s.dir);
        ck_assert_int_eq(rmdir(run), 0);
        ck_assert_int_eq(rmdir(s.dir), 0);
}
END_TEST

START_TEST(test_per_uid_limits) {
        IpcLimits limits = { .max_connections = 16,
                             .max_connections_per_uid = 2,
                             .max_calls_per_uid = 1,
                             .reserved_connections = 2 };
        static const Identity nobody = { 65534, 65534, 0, { 0 }, NULL, NULL };
        const unsigned n = 2;
        Server s;
        Raw c[4];
        json_object *o;

        server_start(&s, &limits);
        ck_assert_int_eq(run_child(&s, child_hog, &n), 0);
        /* Once the server has seen the child's connections go, the orphaned
         * call is answered and the uid may call again. */
        pump_until_connections(&s, 0);
        ck_assert_ptr_nonnull(s.pending);
        ck_assert(ipc_call_is_orphaned(s.pending));
        ck_assert_int_eq(ipc_reply(s.pending, NULL), 0);
        s.pending = NULL;
        ck_assert_int_eq(run_child(&s, child_echo_as, &nobody), 0);

        /* Root is exempt from the cap. */
        for (int i = 0; i < 4; i++) {
                raw_connect(&s, &c[i]);
                o = call_raw(&s, &c[i], "{\"method\":\"io.sunkd.Test.Echo\"}");
                assert_reply(o);
                json_object_put(o);
        }
        for (int i = 0; i < 4; i++)
                raw_close(&c[i]);
        pump_until_connections(&s, 0);
        server_stop(&s);
}
END_TEST

START_TEST(test_anonymous) {
        Server s;

        server_start(&s, NULL);
        ck_assert_int_eq(run_child(&s, child_anonymous, NULL), 0);
        pump_until_connections(&s, 0);
        /* Anonymous is only for any-uid methods. */
        ck_assert_int_eq(ipc_add_method(s.ipc, "io.sunkd.Test.AnonRoot",
                                        SUNKD_METHOD_ROOT | IPC_METHOD_ANONYMOUS, m_empty, NULL, NULL, NULL),
                         -EINVAL);
        ck_assert_int_eq(ipc_add_method(s.ipc, "io.sunkd.Test.AnonAllow",
                                        SUNKD_METHOD_ALLOW | IPC_METHOD_ANONYMOUS, m_empty, NULL, NULL,
                                        NULL),
                         -EINVAL);
        server_stop(&s);
}
END_TEST

START_TEST(test_unchecked_connections_capped) {
        IpcLimits limits = { .max_connections = 16,
                             .max_connections_per_uid = 2,
                             .reserved_connections = 2 };
        Server s;

        server_start(&s, &limits);
        ck_assert_int_eq(run_child(&s, child_unchecked_then_capped, NULL), 0);
        pump_until_connections(&s, 0);
        server_stop(&s);
}
END_TEST

START_TEST(test_reserved_slots) {
        IpcLimits limits = { .max_connections = 4, .reserved_connections = 2 };
        static const Identity nobody = { 65534, 65534, 0, { 0 }, NULL, "refused" };
        static const Identity listed = { 4321, 65534, 0, { 0 }, NULL, NULL };
        static const Identity listed_refused = { 4321, 65534, 0, { 0 }, NULL, "refused" };
        static const Identity by_group = { 65534, 65534, 2, { 100, 4242 }, NULL, NULL };
        static const Identity nobody_ok = { 65534, 65534, 0, { 0 }, NULL, NULL };
        const IpcAllow *allows[] = { NULL, &allow };
        Server s;
        Raw c[4];

        server_start(&s, &limits);
        /* Two slots taken: the two left are reserved. */
        raw_connect(&s, &c[0]);
        raw_connect(&s, &c[1]);
        pump_until_connections(&s, 2);
        ck_assert_int_eq(run_child(&s, child_echo_as, &nobody), 0);
        pump_until_connections(&s, 2); /* the child's connection is gone */
        ck_assert_int_eq(run_child(&s, child_echo_as, &listed_refused), 0);
        pump_until_connections(&s, 2); /* the child's connection is gone */
        ck_assert_int_eq(ipc_admit_set_privileged(s.ipc, allows, ELEMENTSOF(allows)), 0);
        ck_assert_int_eq(run_child(&s, child_echo_as, &listed), 0);
        pump_until_connections(&s, 2); /* the child's connection is gone */
        ck_assert_int_eq(run_child(&s, child_echo_as, &by_group), 0);
        pump_until_connections(&s, 2); /* the child's connection is gone */
        ck_assert_int_eq(run_child(&s, child_echo_as, &nobody), 0);
        pump_until_connections(&s, 2); /* the child's connection is gone */
        /* Replaced, not merged. */
        ck_assert_int_eq(ipc_admit_set_privileged(s.ipc, NULL, 0), 0);
        ck_assert_int_eq(run_child(&s, child_echo_as, &listed_refused), 0);
        pump_until_connections(&s, 2); /* the child's connection is gone */
        ck_assert_int_eq(ipc_admit_set_privileged(s.ipc, NULL, 1), -EINVAL);
        /* Root takes the reserved slots, up to max_connections. */
        raw_connect(&s, &c[2]);
        raw_connect(&s, &c[3]);
        pump_until_connections(&s, 4);
        raw_close(&c[0]);
        pump_until_connections(&s, 3);
        ck_assert_int_eq(run_child(&s, child_echo_as, &nobody), 0);
        pump_until_connections(&s, 3); /* the child's connection is gone */
        raw_close(&c[1]);
        raw_close(&c[2]);
        pump_until_connections(&s, 1);
        ck_assert_int_eq(run_child(&s, child_echo_as, &nobody_ok), 0);
        pump_until_connections(&s, 1); /* the child's connection is gone */
        raw_close(&c[3]);
        pump_until_connections(&s, 0);
        server_stop(&s);
}
END_TEST

START_TEST(test_request_deadline) {
        IpcLimits limits = { .idle_timeout_usec = 10 * SEC, .request_timeout_usec = 300 * MSEC };
        Server s;
        Raw c, d;
        uint64_t start;
        json_object *o;

        server_start(&s, &limits);
        raw_connect(&s, &c);
        raw_connect(&s, &d);
        start = now_usec(CLOCK_MONOTONIC);
        /* A byte every 50 ms does not extend the request's deadline. */
        while (!c.eof) {
                if (!raw_send(&s, &c, " ", 1))
                        break;
                uint64_t until = now_usec(CLOCK_MONOTONIC) + 50 * MSEC;
                while (now_usec(CLOCK_MONOTONIC) < until)
                        pump(&s, 10 * MSEC);
                ck_assert_msg(now_usec(CLOCK_MONOTONIC) - start < 5 * SEC, "the trickle is never cut off");
                if (ipc_n_connections(s.ipc) < 2)
                        break;
        }
        ck_assert_uint_ge(now_usec(CLOCK_MONOTONIC) - start, 300 * MSEC);
        pump_until_connections(&s, 1);
        /* The quiet one is still open (idle timeout 10 s) and served. */
        o = call_raw(&s, &d, "{\"method\":\"io.sunkd.Test.Echo\"}");
        assert_reply(o);
        json_object_put(o);
        raw_close(&c);
        raw_close(&d);
        pump_until_connections(&s, 0);
        server_stop(&s);
}
END_TEST

static void on_gone_count(sunkd_call *call, void *userdata) {
        Server *s = userdata;

        s->n_count++;
        ck_assert(ipc_call_is_orphaned(call));
        ck_assert_int_eq(ipc_reply(call, NULL), 0);
        if (s->pending == call)
                s->pending = NULL;
}

START_TEST(test_call_on_gone) {
        Server s;
        Raw c;

        server_start(&s, NULL);
        ck_assert_int_eq(ipc_call_on_gone(NULL, on_gone_count, &s), -EINVAL);
        raw_connect(&s, &c);
        raw_send_str(&s, &c, "{\"method\":\"io.sunkd.Test.Hold\"}");
        while (!s.pending)
                pump(&s, 10 * MSEC);
        ck_assert_int_eq(ipc_call_on_gone(s.pending, on_gone_count, &s), 0);
        raw_close(&c);
        while (s.n_count == 0)
                pump(&s, 10 * MSEC);
        ck_assert_uint_eq(s.n_count, 1);
        ck_assert_ptr_null(s.pending);

        /* Registered after the peer left: runs from the loop, not at once. */
        raw_connect(&s, &c);
        raw_send_str(&s, &c, "{\"method\":\"io.sunkd.Test.Hold\"}");
        while (!s.pending)
                pump(&s, 10 * MSEC);
        raw_close(&c);
        pump_until_connections(&s, 0);
        ck_assert_int_eq(ipc_call_on_gone(s.pending, on_gone_count, &s), 0);
        ck_assert_uint_eq(s.n_count, 1);
        while (s.n_count == 1)
                pump(&s, 10 * MSEC);
        ck_assert_ptr_null(s.pending);

        /* Removed, it does not run; an answered call takes none. */
        raw_connect(&s, &c);
        raw_send_str(&s, &c, "{\"method\":\"io.sunkd.Test.Hold\"}");
        while (!s.pending)
                pump(&s, 10 * MSEC);
        ck_assert_int_eq(ipc_call_on_gone(s.pending, on_gone_count, &s), 0);
        ck_assert_int_eq(ipc_call_on_gone(s.pending, NULL, NULL), 0);
        raw_close(&c);
        pump_until_connections(&s, 0);
        pump(&s, 50 * MSEC);
        ck_assert_uint_eq(s.n_count, 2);
        ck_assert_int_eq(ipc_reply(s.pending, NULL), 0);
        s.pending = NULL;
        server_stop(&s);
}
END_TEST

START_TEST(test_suspend_and_remove) {
        Server s;
        Raw held, c, gone;
        json_object *o;
        sunkd_call *orphan;

        server_start(&s, NULL);
        raw_connect(&s, &held);
        raw_send_str(&s, &held, "{\"method\":\"io.sunkd.Test.Hold\"}");
        while (!s.pending)
                pump(&s, 10 * MSEC);

        /* Suspended: new calls are answered at once, the pending one stays. */
        ipc_suspend_owner(s.ipc, &s);
        ipc_suspend_owner(s.ipc, &s);
        raw_connect(&s, &c);
        o = call_raw(&s, &c, "{\"method\":\"io.sunkd.Test.Count\"}");
        assert_error(o, "io.sunkd.Unavailable");
        json_object_put(o);
        ck_assert_uint_eq(s.n_count, 0);
        ck_assert(!ipc_call_is_orphaned(s.pending));

        /* A second pending call whose peer is gone, with an on-gone callback
         * that must not run once the methods are removed. */
        orphan = s.pending;
        s.pending = NULL;
        ipc_remove_methods(s.ipc, NULL); /* another owner's: nothing happens */
        ck_assert(!ipc_call_is_orphaned(orphan));
        s.pending = orphan;

        raw_connect(&s, &gone);
        ck_assert_int_eq(ipc_call_on_gone(s.pending, on_gone_count, &s), 0);
        ipc_remove_methods(s.ipc, &s);
        s.pending = NULL; /* answered and freed by ipc_remove_methods() */
        o = raw_recv(&s, &held, 5 * SEC);
        assert_error(o, "io.sunkd.Unavailable");
        json_object_put(o);
        raw_close(&held);
        pump_until_connections(&s, 2);
        pump(&s, 50 * MSEC);
        ck_assert_uint_eq(s.n_count, 0);

        /* Gone, the methods are unknown; the suspension went with them. */
        o = call_raw(&s, &c, "{\"method\":\"io.sunkd.Test.Echo\"}");
        assert_error(o, "org.varlink.service.MethodNotFound");
        json_object_put(o);
        ck_assert_int_eq(
                ipc_add_method(s.ipc, "io.sunkd.Test.Echo", SUNKD_METHOD_ANY_UID, m_echo, &s, NULL, &s), 0);
        o = call_raw(&s, &c, "{\"method\":\"io.sunkd.Test.Echo\"}");
        assert_reply(o);
        json_object_put(o);
        raw_close(&c);
        raw_close(&gone);
        pump_until_connections(&s, 0);
        server_stop(&s);
}
END_TEST

static Suite *ipc_suite(void) {
        Suite *s = suite_create("ipc");
        TCase *tc = tcase_create("server");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_immediate);
        tcase_add_test(tc, test_pending_and_pipelined);
        tcase_add_test(tc, test_disconnect_while_pending);
        tcase_add_test(tc, test_half_close);
        tcase_add_test(tc, test_policy);
        tcase_add_test(tc, test_unknown_method);
        tcase_add_test(tc, test_oversize);
        tcase_add_test(tc, test_oversize_root);
        tcase_add_test(tc, test_bad_messages);
        tcase_add_test(tc, test_truncated_then_eof);
        tcase_add_test(tc, test_idle_timeout);
        tcase_add_test(tc, test_many_clients);
        tcase_add_test(tc, test_max_connections);
        tcase_add_test(tc, test_oneway);
        tcase_add_test(tc, test_handler_errors);
        tcase_add_test(tc, test_methods_table);
        tcase_add_test(tc, test_client);
        tcase_add_test(tc, test_listen);
        tcase_add_test(tc, test_per_uid_limits);
        tcase_add_test(tc, test_anonymous);
        tcase_add_test(tc, test_unchecked_connections_capped);
        tcase_add_test(tc, test_reserved_slots);
        tcase_add_test(tc, test_request_deadline);
        tcase_add_test(tc, test_call_on_gone);
        tcase_add_test(tc, test_suspend_and_remove);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        if (getenv("SUNKD_TEST_DEBUG"))
                log_set_max_level(LOG_DEBUG);

        return check_run(ipc_suite());
}
