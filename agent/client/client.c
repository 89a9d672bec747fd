/* The blocking client side of the control socket.
 *
 * Its users are short-lived processes that sshd and slurmd run with a
 * deadline of their own, and that must fail closed: a missing daemon, a slow
 * one, a truncated or malformed reply all end in a negative errno and never
 * in partial output.  So every wait has one overall deadline (poll() on a
 * non-blocking socket, not per-syscall timeouts that add up), the reply is
 * bounded, and it goes through the same strict parser the daemon uses for
 * requests.  Connect errors keep their errno so a caller can tell "no
 * socket" (ENOENT) and "nobody listening" (ECONNREFUSED) apart and say
 * "is sunkd running?".
 *
 * One call at a time: the client never pipelines, so the server sends
 * nothing unasked and any byte after the reply's NUL is a protocol error.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "client.h"
#include "util/cleanup.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "util/time-util.h"
#include "proto/varlink.h"

#define CLIENT_MAX_DEPTH 64
#define CLIENT_READ_CHUNK 4096

static uint64_t deadline_from(uint64_t timeout_usec) {
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        if (timeout_usec == 0 || timeout_usec > UINT64_MAX - now)
                return UINT64_MAX;
        return now + timeout_usec;
}

static int wait_fd(int fd, short events, uint64_t deadline) {
        for (;;) {
                struct pollfd p = { .fd = fd, .events = events };
                int timeout_ms = -1, n;

                if (deadline != UINT64_MAX) {
                        uint64_t now = now_usec(CLOCK_MONOTONIC);

                        if (now >= deadline)
                                return -ETIMEDOUT;
                        timeout_ms = (int) MIN((deadline - now + USEC_PER_MSEC - 1) / USEC_PER_MSEC,
                                               (uint64_t) INT32_MAX);
                }
                n = poll(&p, 1, timeout_ms);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n > 0)
                        return 0;
        }
}

int client_connect(const char *path, uint64_t timeout_usec, int *ret_fd) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct timeval tv = { 0 };
        _cleanup_close_ int fd = -1;
        int flags;

        if (!path || !ret_fd)
                return -EINVAL;
        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        memcpy(sa.sun_path, path, strlen(path));

        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        /* An AF_UNIX connect() blocks only while the listen backlog is full,
         * and it waits for at most the send timeout. */
        if (timeout_usec > 0) {
                tv.tv_sec = (time_t) MIN(timeout_usec / USEC_PER_SEC, (uint64_t) INT32_MAX);
                tv.tv_usec = (suseconds_t) (timeout_usec % USEC_PER_SEC);
                if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
                        return -errno;
        }
        for (;;) {
                if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) >= 0)
                        break;
                if (errno == EINTR)
                        continue;
                if (errno == EAGAIN || errno == EINPROGRESS)
                        return -ETIMEDOUT;
                return -errno;
        }

        flags = fcntl(fd, F_GETFL);
        if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
                return -errno;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

static int send_all(int fd, const char *buf, size_t len, uint64_t deadline) {
        size_t done = 0;
        int r;

        while (done < len) {
                ssize_t n = send(fd, buf + done, len - done, MSG_NOSIGNAL | MSG_DONTWAIT);

                if (n >= 0) {
                        done += (size_t) n;
                        continue;
                }
                if (errno == EINTR)
                        continue;
                if (errno == EPIPE)
                        return -ECONNRESET;
                if (errno != EAGAIN)
                        return -errno;
                r = wait_fd(fd, POLLOUT, deadline);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Read one frame of at most @max bytes, its NUL included; *ret_len excludes it. */
static int recv_frame(int fd, size_t max, uint64_t deadline, char **ret, size_t *ret_len) {
        _cleanup_free_ char *buf = NULL;
        size_t alloc = 0, len = 0;
        int r;

        for (;;) {
                ssize_t n;
                char *nul;

                if (len == alloc) {
                        size_t a = MIN(MAX(alloc * 2, (size_t) CLIENT_READ_CHUNK), max);
                        char *b;

                        if (a <= alloc)
                                return -EMSGSIZE;
                        b = realloc(buf, a);
                        if (!b)
                                return -ENOMEM;
                        buf = b;
                        alloc = a;
                }
                n = recv(fd, buf + len, alloc - len, MSG_DONTWAIT);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno != EAGAIN)
                                return -errno;
                        r = wait_fd(fd, POLLIN, deadline);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (n == 0)
                        return -ECONNRESET;

                nul = memchr(buf + len, 0, (size_t) n);
                len += (size_t) n;
                if (nul) {
                        if ((size_t) (nul - buf) != len - 1)
                                return -EBADMSG;
                        *ret_len = len - 1;
                        *ret = TAKE_PTR(buf);
                        return 0;
                }
        }
}

typedef struct ReplyKey {
        const char *name;
        json_type type;
} ReplyKey;

static const ReplyKey reply_keys[] = {
        { "parameters", json_type_object },
        { "error", json_type_string },
        { "continues", json_type_boolean },
};

static int reply_check(json_object *reply) {
        json_object *o;

        json_object_object_foreach(reply, key, value) {
                bool ok = false;

                for (size_t i = 0; i < ELEMENTSOF(reply_keys); i++)
                        if (streq(reply_keys[i].name, key)) {
                                ok = json_object_is_type(value, reply_keys[i].type);
                                break;
                        }
                if (!ok)
                        return -EBADMSG;
        }
        /* We never ask for "more", so a streamed reply is a protocol error. */
        if (json_object_object_get_ex(reply, "continues", &o) && json_object_get_boolean(o))
                return -EPROTO;
        return 0;
}

static int call(int fd, const char *method, json_object *params, uint64_t timeout_usec, size_t max_reply,
                bool last, json_object **ret_reply, char **ret_error_name, bool *ret_sent) {
        _cleanup_json_ json_object *msg = NULL, *reply = NULL;
        _cleanup_free_ char *out = NULL, *in = NULL;
        json_object *p = NULL, *e = NULL;
        uint64_t deadline = deadline_from(timeout_usec);
        size_t out_len, in_len = 0;
        int r;

        if (ret_reply)
                *ret_reply = NULL;
        if (ret_error_name)
                *ret_error_name = NULL;
        if (ret_sent)
                *ret_sent = false;
        if (fd < 0 || !method || !ret_reply)
                return -EINVAL;
        if (!varlink_method_name_is_valid(method, strlen(method)))
                return -EINVAL;
        if (params && !json_object_is_type(params, json_type_object))
                return -EINVAL;
        if (max_reply == 0)
                max_reply = CLIENT_MAX_REPLY_DEFAULT;
        if (max_reply < 2)
                return -EINVAL;

        msg = json_object_new_object();
        if (!msg)
                return -ENOMEM;
        if (json_object_object_add(msg, "method", json_object_new_string(method)) < 0)
                return -ENOMEM;
        p = params ? json_object_get(params) : json_object_new_object();
        if (!p || json_object_object_add(msg, "parameters", p) < 0) {
                json_object_put(p);
                return -ENOMEM;
        }
        r = varlink_format(msg, &out, &out_len);
        if (r < 0)
                return r;

        r = send_all(fd, out, out_len, deadline);
        if (r < 0)
                return r;
        if (ret_sent)
                *ret_sent = true;
        /* Nothing more to say: sunkd sees the end with the call and answers
         * and closes without another loop iteration. */
        if (last && shutdown(fd, SHUT_WR) < 0)
                return -errno;
        r = recv_frame(fd, max_reply, deadline, &in, &in_len);
        if (r < 0)
                return r;
        r = varlink_parse(in, in_len, max_reply - 1, CLIENT_MAX_DEPTH, &reply);
        if (r < 0)
                return r;
        r = reply_check(reply);
        if (r < 0)
                return r;

        if (json_object_object_get_ex(reply, "parameters", &p))
                json_object_get(p);
        else {
                p = json_object_new_object();
                if (!p)
                        return -ENOMEM;
        }
        if (json_object_object_get_ex(reply, "error", &e)) {
                if (ret_error_name) {
                        *ret_error_name = strdup(json_object_get_string(e));
                        if (!*ret_error_name) {
                                json_object_put(p);
                                return -ENOMEM;
                        }
                }
                *ret_reply = p;
                return -EREMOTEIO;
        }
        *ret_reply = p;
        return 0;
}

int client_call(int fd, const char *method, json_object *params, uint64_t timeout_usec, size_t max_reply,
                json_object **ret_reply, char **ret_error_name) {
        return call(fd, method, params, timeout_usec, max_reply, false, ret_reply, ret_error_name, NULL);
}

int client_call_last(int fd, const char *method, json_object *params, uint64_t timeout_usec,
                     size_t max_reply, json_object **ret_reply, char **ret_error_name) {
        return call(fd, method, params, timeout_usec, max_reply, true, ret_reply, ret_error_name, NULL);
}

int client_call_last_sent(int fd, const char *method, json_object *params, uint64_t timeout_usec,
                          size_t max_reply, json_object **ret_reply, char **ret_error_name, bool *ret_sent) {
        return call(fd, method, params, timeout_usec, max_reply, true, ret_reply, ret_error_name, ret_sent);
}
