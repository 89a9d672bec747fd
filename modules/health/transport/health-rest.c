/* The slurmrestd transport: a round of health.signal as HTTP requests made
 * by a worker thread (a plain job's work; libcurl is never used in a forked
 * child), through one libcurl handle so the requests share a connection:
 * GET /slurm/<version>/node/<name>, before a drain GET /slurm/<version>/nodes
 * for the fleet guard, then POST /slurm/<version>/node/<name>.  Node updates
 * came with data_parser v0.0.39 (Slurm 23.02); the request is
 * {"state":["DRAIN"],"reason":...} or {"state":["RESUME"]}.
 *
 * The token (X-SLURM-USER-TOKEN, beside X-SLURM-USER-NAME) is read from
 * token_file or minted from jwt_key_file at each round, so a rotated token
 * or key is taken; it goes into the header list only, which is wiped when
 * freed, and curl's verbose output stays off.  Every answer is bounded,
 * every request has a connect and a total timeout, TLS is verified, no
 * redirect is followed, and the job's cancel flag stops a request in
 * flight.  Nothing here logs: the round's message says what happened. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "health-jwt.h"
#include "health-node.h"
#include "health-restjson.h"
#include "health-state.h"
#include "util/cleanup.h"
#include "util/errloc.h"
#include "util/macro.h"
#include "util/secret-file.h"
#include "util/strbuf.h"

#define NODE_ANSWER_MAX (1u << 20)
#define NODES_ANSWER_MAX (64u << 20) /* /nodes of a 10k-node cluster is some 30 MB */
#define UPDATE_ANSWER_MAX (1u << 20)
#define CONNECT_TIMEOUT_MAX_USEC (10 * SUNKD_USEC_PER_SEC)
#define TOKEN_MAX 16384
#define MESSAGE_MAX 400
#define ERRORS_MAX 256 /* of slurmrestd's words in a message */

typedef struct Rest {
        const RestConf *conf;
        const sunkd_cancel *cancel;
        const char *node;
        CURL *curl;
        struct curl_slist *headers;
        StrBuf body; /* the last answer */
        size_t max;  /* its bound */
        bool too_big;
        char curl_error[CURL_ERROR_SIZE];
        char message[MESSAGE_MAX];
} Rest;

static void headers_wipe_free(struct curl_slist *l) {
        for (struct curl_slist *i = l; i; i = i->next)
                explicit_bzero(i->data, strlen(i->data));
        curl_slist_free_all(l);
}

static void rest_clear(Rest *h) {
        if (h->curl)
                curl_easy_cleanup(h->curl);
        headers_wipe_free(h->headers);
        strbuf_done(&h->body);
}

static size_t on_data(char *data, size_t size, size_t nmemb, void *userdata) {
        Rest *h = userdata;
        size_t n = size * nmemb;

        if (n > h->max - h->body.len) {
                h->too_big = true;
                return 0;
        }
        strbuf_append(&h->body, data, n);
        return h->body.oom ? 0 : n;
}

static int on_progress(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow) {
        const Rest *h = userdata;

        (void) dltotal, (void) dlnow, (void) ultotal, (void) ulnow;
        return sunkd_cancelled(h->cancel) ? 1 : 0;
}

/* The token, printable and without blanks: it goes into a header. */
static int token_check(char *tok, const char *path, char **ret_error) {
        size_t len = strlen(tok);

        while (len > 0 && (tok[len - 1] == ' ' || tok[len - 1] == '\t'))
                tok[--len] = '\0';
        if (len == 0)
                return errmsg_set(ret_error, -EBADMSG, "'%s' holds no token", path);
        for (size_t i = 0; i < len; i++)
                if (tok[i] <= ' ' || tok[i] >= 0x7f)
                        return errmsg_set(ret_error, -EBADMSG,
                                          "'%s': the token holds a blank or a control byte", path);
        return 0;
}

static int token_get(const RestConf *c, char **ret, char **ret_error) {
        _cleanup_free_ char *why = NULL;
        int r;

        if (c->jwt_key_file) {
                r = health_jwt_mint(c->jwt_key_file, (uid_t) -1, c->user, (uint64_t) time(NULL),
                                    c->jwt_lifetime_usec / SUNKD_USEC_PER_SEC, ret, &why);
                if (r < 0)
                        return errmsg_set(ret_error, r, "cannot mint a Slurm token: %s",
                                          why ?: strerror(-r));
                return 0;
        }
        r = secret_file_read(c->token_file, TOKEN_MAX, ret, &why);
        if (r < 0)
                return errmsg_set(ret_error, r, "cannot read the Slurm token: %s", why ?: strerror(-r));
        r = token_check(*ret, c->token_file, ret_error);
        if (r < 0) {
                erase_and_free(*ret);
                *ret = NULL;
        }
        return r;
}

static int header_add(Rest *h, const char *name, const char *value) {
        _cleanup_(erase_and_freep) char *line = NULL;
        struct curl_slist *l;

        if (asprintf(&line, "%s: %s", name, value) < 0)
                return -ENOMEM;
        l = curl_slist_append(h->headers, line);
        if (!l)
                return -ENOMEM;
        h->headers = l;
        return 0;
}

static int headers_set(Rest *h, char **ret_error) {
        _cleanup_(erase_and_freep) char *tok = NULL;
        struct curl_slist *l;
        int r;

        r = token_get(h->conf, &tok, ret_error);
        if (r < 0)
                return r;
        if (header_add(h, "X-SLURM-USER-NAME", h->conf->user) < 0 ||
            header_add(h, "X-SLURM-USER-TOKEN", tok) < 0 ||
            header_add(h, "Accept", "application/json") < 0 ||
            header_add(h, "Content-Type", "application/json") < 0)
                return -ENOMEM;
        /* no "Expect: 100-continue" round trip */
        l = curl_slist_append(h->headers, "Expect:");
        if (!l)
                return -ENOMEM;
        h->headers = l;
        return 0;
}

static int rest_open(Rest *h, char **ret_error) {
        const RestConf *c = h->conf;
        CURLcode cr = CURLE_OK;
        int r;

        h->curl = curl_easy_init();
        if (!h->curl)
                return -ENOMEM;
        r = headers_set(h, ret_error);
        if (r < 0)
                return r;
#define SET(opt, val)                                                                                       \
        do {                                                                                                \
                if (cr == CURLE_OK)                                                                         \
                        cr = curl_easy_setopt(h->curl, opt, val);                                           \
        } while (0)
        SET(CURLOPT_HTTPHEADER, h->headers);
        SET(CURLOPT_NOSIGNAL, 1L);
        SET(CURLOPT_FOLLOWLOCATION, 0L);
        SET(CURLOPT_PROTOCOLS_STR, "http,https");
        SET(CURLOPT_USERAGENT, "sunkd-health/" PACKAGE_VERSION);
        SET(CURLOPT_TIMEOUT_MS, (long) (c->timeout_usec / SUNKD_USEC_PER_MSEC));
        SET(CURLOPT_CONNECTTIMEOUT_MS,
            (long) (MIN(c->timeout_usec, CONNECT_TIMEOUT_MAX_USEC) / SUNKD_USEC_PER_MSEC));
        SET(CURLOPT_WRITEFUNCTION, on_data);
        SET(CURLOPT_WRITEDATA, h);
        SET(CURLOPT_NOPROGRESS, 0L);
        SET(CURLOPT_XFERINFOFUNCTION, on_progress);
        SET(CURLOPT_XFERINFODATA, h);
        SET(CURLOPT_ERRORBUFFER, h->curl_error);
        SET(CURLOPT_SSL_VERIFYPEER, 1L);
        SET(CURLOPT_SSL_VERIFYHOST, 2L);
        if (c->ca_file)
                SET(CURLOPT_CAINFO, c->ca_file);
        SET(CURLOPT_VERBOSE, 0L);
#undef SET
        if (cr != CURLE_OK)
                return errmsg_set(ret_error, -EINVAL, "cannot set up libcurl: %s", curl_easy_strerror(cr));
        return 0;
}

/* "<url>/slurm/<version>/<what>[/<node, escaped>]". */
static int rest_url(Rest *h, const char *what, bool with_node, char **ret) {
        char *e = NULL;
        int r;

        if (with_node && !(e = curl_easy_escape(h->curl, h->node, 0)))
                return -ENOMEM;
        r = asprintf(ret, "%s/slurm/%s/%s%s%s", h->conf->url, h->conf->version, what, e ? "/" : "", e ?: "");
        curl_free(e);
        return r < 0 ? -ENOMEM : 0;
}

static int transfer_failed(Rest *h, CURLcode cr, const char *method, const char *url) {
        switch (cr) {
        case CURLE_ABORTED_BY_CALLBACK:
                (void) snprintf(h->message, sizeof(h->message), "%s %s: cancelled", method, url);
                return -ECANCELED;
        case CURLE_WRITE_ERROR:
        case CURLE_FILESIZE_EXCEEDED:
                if (!h->too_big && cr == CURLE_WRITE_ERROR)
                        break;
                (void) snprintf(h->message, sizeof(h->message),
                                "slurmrestd's answer to %s %s is larger than %zu bytes: refused", method,
                                url, h->max);
                return -EFBIG;
        case CURLE_OPERATION_TIMEDOUT:
                (void) snprintf(h->message, sizeof(h->message),
                                "slurmrestd gave no answer to %s %s within %us", method, url,
                                (unsigned) (h->conf->timeout_usec / SUNKD_USEC_PER_SEC));
                return -ETIMEDOUT;
        default:
                break;
        }
        (void) snprintf(h->message, sizeof(h->message), "no answer from slurmrestd to %s %s: %s", method,
                        url, *h->curl_error ? h->curl_error : curl_easy_strerror(cr));
        return -EIO;
}

/* One request, its answer in h->body.  Return: the HTTP status, or a
 * negative errno with h->message saying why. */
static long request(Rest *h, const char *method, const char *url, const char *post, size_t max) {
        CURLcode cr;
        long status = 0;

        strbuf_truncate(&h->body, 0);
        h->max = max;
        h->too_big = false;
        h->curl_error[0] = '\0';
        cr = curl_easy_setopt(h->curl, CURLOPT_URL, url);
        if (cr == CURLE_OK)
                cr = curl_easy_setopt(h->curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t) max);
        if (cr == CURLE_OK && post) {
                cr = curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, post);
                if (cr == CURLE_OK)
                        cr = curl_easy_setopt(h->curl, CURLOPT_POSTFIELDSIZE_LARGE,
                                              (curl_off_t) strlen(post));
        } else if (cr == CURLE_OK)
                cr = curl_easy_setopt(h->curl, CURLOPT_HTTPGET, 1L);
        if (cr == CURLE_OK)
                cr = curl_easy_perform(h->curl);
        if (cr != CURLE_OK)
                return transfer_failed(h, cr, method, url);
        if (h->body.oom)
                return -ENOMEM;
        (void) curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &status);
        return status;
}

/* A refusal: the status and slurmrestd's own words. */
static void refused(Rest *h, long status, const char *method, const char *url) {
        char errors[ERRORS_MAX];

        if (!health_rest_errors(h->body.data, h->body.len, errors, sizeof(errors)))
                (void) snprintf(errors, sizeof(errors), "no error given");
        (void) snprintf(h->message, sizeof(h->message), "slurmrestd answered HTTP %ld to %s %s: %s", status,
                        method, url, errors);
}

static bool ok_status(long status) {
        return status >= 200 && status < 300;
}

/* The nodes of the answer in h->body, or a message. */
static int nodes_read(Rest *h, const char *url, HealthNode **ret, size_t *ret_n) {
        _cleanup_free_ char *why = NULL;
        int r;

        r = health_rest_nodes_parse(h->body.data, h->body.len, ret, ret_n, &why);
        if (r < 0)
                (void) snprintf(h->message, sizeof(h->message),
                                "cannot read slurmrestd's answer to GET %s: %s", url, why ?: strerror(-r));
        return r;
}

static void query_node(Rest *h, HealthSignal *sig) {
        _cleanup_free_ char *url = NULL;
        HealthNode *nodes = NULL;
        char errors[ERRORS_MAX];
        size_t n = 0;
        long status;

        if (rest_url(h, "node", true, &url) < 0)
                return health_signal_failed(sig, -ENOMEM, NULL);
        status = request(h, "GET", url, NULL, NODE_ANSWER_MAX);
        if (status < 0)
                return health_signal_failed(sig, (int) status, h->message);
        if (!ok_status(status)) {
                /* slurmctld knows no such node: an error, by version 500 or 422 */
                if (health_rest_errors(h->body.data, h->body.len, errors, sizeof(errors)) &&
                    strstr(errors, "Invalid node name specified"))
                        return health_signal_node(sig, NULL);
                refused(h, status, "GET", url);
                return health_signal_failed(sig, -EIO, h->message);
        }
        if (nodes_read(h, url, &nodes, &n) < 0)
                return health_signal_failed(sig, -EBADMSG, h->message);
        health_signal_node(sig, health_nodes_find(nodes, n, h->node));
        health_nodes_free(nodes, n);
}

static void query_fleet(Rest *h, HealthSignal *sig) {
        _cleanup_free_ char *url = NULL;
        HealthNode *nodes = NULL;
        const HealthNode *self;
        size_t n = 0, total, ours;
        long status;

        if (rest_url(h, "nodes", false, &url) < 0)
                return health_signal_failed(sig, -ENOMEM, NULL);
        status = request(h, "GET", url, NULL, NODES_ANSWER_MAX);
        if (status < 0)
                return health_signal_failed(sig, (int) status, h->message);
        if (!ok_status(status)) {
                refused(h, status, "GET", url);
                return health_signal_failed(sig, -EIO, h->message);
        }
        if (nodes_read(h, url, &nodes, &n) < 0)
                return health_signal_failed(sig, -EBADMSG, h->message);
        self = health_nodes_find(nodes, n, h->node);
        if (!self)
                health_signal_failed(sig, -EBADMSG, "slurmrestd's node list lacks this node");
        else {
                health_signal_fleet_count(nodes, n, self, sig->fleet_prefix, &total, &ours);
                health_signal_fleet(sig, total, ours);
        }
        health_nodes_free(nodes, n);
}

static void update(Rest *h, HealthSignal *sig) {
        _cleanup_free_ char *url = NULL, *body = NULL;
        bool drain = sig->step == HEALTH_STEP_DRAIN;
        char errors[ERRORS_MAX];
        long status;

        if (rest_url(h, "node", true, &url) < 0 || health_rest_update_body(drain, sig->reason, &body) < 0)
                return health_signal_failed(sig, -ENOMEM, NULL);
        status = request(h, "POST", url, body, UPDATE_ANSWER_MAX);
        if (status < 0)
                return health_signal_updated(sig, (int) status, h->message);
        if (ok_status(status))
                return health_signal_updated(sig, 0, NULL);
        /* resuming a node that is not drained: it is resumed already */
        if (!drain && health_rest_errors(h->body.data, h->body.len, errors, sizeof(errors)) &&
            strstr(errors, "Invalid node state specified"))
                return health_signal_updated(sig, 0, NULL);
        refused(h, status, "POST", url);
        health_signal_updated(sig, -EIO, h->message);
}

void rest_round(HealthSignal *sig, const RestConf *c, const char *node_name, const sunkd_cancel *cancel) {
        _cleanup_(rest_clear) Rest h = { .conf = c, .cancel = cancel, .node = node_name };
        _cleanup_free_ char *why = NULL;
        int r;

        sig->step = HEALTH_STEP_QUERY_NODE;
        r = rest_open(&h, &why);
        if (r < 0)
                return health_signal_failed(sig, r, why);
        while (sig->step != HEALTH_STEP_DONE)
                switch (sig->step) {
                case HEALTH_STEP_QUERY_NODE:
                        query_node(&h, sig);
                        break;
                case HEALTH_STEP_QUERY_FLEET:
                        query_fleet(&h, sig);
                        break;
                case HEALTH_STEP_DRAIN:
                case HEALTH_STEP_RESUME:
                        update(&h, sig);
                        break;
                case HEALTH_STEP_REBOOT: /* refused at the config: slurmrestd has no node reboot */
                        health_signal_updated(sig, -EOPNOTSUPP, "slurmrestd has no node reboot");
                        break;
                case HEALTH_STEP_DONE:
                        break;
                }
}

/* libcurl is this module's to initialise, as nsscache's: curl_global_init()
 * is thread-safe since 7.84 and counts its callers. */
int rest_init(State *s) {
        if (s->transport != TRANSPORT_SLURMRESTD)
                return 0;
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
                return sunkd_log_error_errno(s->ctx, -ELIBBAD, "Cannot initialise libcurl for slurmrestd.");
        s->rest_ready = true;
        return 0;
}

void rest_fini(State *s) {
        if (s->rest_ready)
                curl_global_cleanup();
        s->rest_ready = false;
}
