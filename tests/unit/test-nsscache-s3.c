/* The s3 source's parts without an S3 server: libcurl's SigV4 signature
 * checked byte for byte against AWS's published Signature Version 4 test
 * suite, the x-amz- headers a fetch adds, the credentials file, object
 * URLs, and nsscache's JSON records. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>

#include "modules/nsscache/files/http-fetch.h"
#include "modules/nsscache/nsscache-conf.h"
#include "modules/nsscache/nsscache-source.h"
#include "modules/nsscache/files/s3-auth.h"
#include "modules/nsscache/files/s3-object.h"
#include "util/cleanup.h"
#include "../lib/check-run.h"

/* ---- a loopback listener that keeps one request ---------------------- */

typedef struct Capture {
        int fd;
        uint16_t port;
        pthread_t thread;
        char request[16384];
} Capture;

static void *capture_run(void *userdata) {
        static const char answer[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n[]";
        Capture *c = userdata;
        size_t len = 0;
        int fd = accept(c->fd, NULL, NULL);

        if (fd < 0)
                return NULL;
        while (len < sizeof(c->request) - 1 && !strstr(c->request, "\r\n\r\n")) {
                ssize_t n = read(fd, c->request + len, sizeof(c->request) - 1 - len);
                if (n <= 0)
                        break;
                len += (size_t) n;
                c->request[len] = 0;
        }
        (void) !write(fd, answer, sizeof(answer) - 1);
        close(fd);
        return NULL;
}

static void capture_start(Capture *c) {
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t l = sizeof(a);

        memset(c, 0, sizeof(*c));
        c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ck_assert_int_ge(c->fd, 0);
        ck_assert_int_eq(bind(c->fd, (struct sockaddr *) &a, sizeof(a)), 0);
        ck_assert_int_eq(listen(c->fd, 1), 0);
        ck_assert_int_eq(getsockname(c->fd, (struct sockaddr *) &a, &l), 0);
        c->port = ntohs(a.sin_port);
        ck_assert_int_eq(pthread_create(&c->thread, NULL, capture_run, c), 0);
}

static void capture_wait(Capture *c) {
        ck_assert_int_eq(pthread_join(c->thread, NULL), 0);
        close(c->fd);
}

/* The value of header @name (case-insensitive) in the captured request. */
static char *header_of(const char *request, const char *name) {
        size_t n = strlen(name);

        for (const char *p = strstr(request, "\r\n"); p && p[2] != '\r'; p = strstr(p + 2, "\r\n"))
                if (strncasecmp(p + 2, name, n) == 0 && p[2 + n] == ':') {
                        const char *v = p + 3 + n + strspn(p + 3 + n, " ");
                        return strndup(v, strcspn(v, "\r"));
                }
        return NULL;
}

static size_t discard(char *data, size_t size, size_t nmemb, void *userdata) {
        return size * nmemb;
}

/* ---- AWS's Signature Version 4 test suite ---------------------------- */

/* Service "service", not "s3": the vectors sign neither a payload header nor
 * anything libcurl might add for S3 alone. */
#define SUITE_KEY "AKIDEXAMPLE:wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
#define SUITE_SCOPE "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "

/* libcurl before 8.2 signs the query in the order given, not sorted (curl
 * issue 9717; Debian 12 has 7.88): there the query-order vector is sent
 * sorted, which gives the vector's canonical request.  sunkd's object URLs
 * carry no query (s3_object_url() encodes a '?'). */
static const struct {
        const char *name, *method, *target, *target_sorted, *authorization;
} vectors[] = {
        { "get-vanilla", "GET", "/", NULL,
          SUITE_SCOPE "SignedHeaders=host;x-amz-date, "
                      "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31" },
        { "get-vanilla-query-order-key-case", "GET", "/?Param2=value2&Param1=value1",
          "/?Param1=value1&Param2=value2",
          SUITE_SCOPE "SignedHeaders=host;x-amz-date, "
                      "Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500" },
        { "post-vanilla", "POST", "/", NULL,
          SUITE_SCOPE "SignedHeaders=host;x-amz-date, "
                      "Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b" },
};

START_TEST(test_sigv4_suite) {
        _cleanup_free_ char *url = NULL, *connect_to = NULL, *authz = NULL;
        struct curl_slist *h = NULL;
        Capture cap;
        CURL *curl = curl_easy_init();

        ck_assert_ptr_nonnull(curl);
        capture_start(&cap);
        const char *target = vectors[_i].target;

        if (vectors[_i].target_sorted && curl_version_info(CURLVERSION_NOW)->version_num < 0x080200)
                target = vectors[_i].target_sorted;
        ck_assert_int_ge(asprintf(&url, "http://example.amazonaws.com%s", target), 0);
        ck_assert_int_ge(asprintf(&connect_to, "example.amazonaws.com:80:127.0.0.1:%u", cap.port), 0);
        /* the vector's date: libcurl signs with an X-Amz-Date it is given */
        h = curl_slist_append(h, "X-Amz-Date: 20150830T123600Z");
        struct curl_slist *to = curl_slist_append(NULL, connect_to);
        ck_assert_int_eq(curl_easy_setopt(curl, CURLOPT_URL, url), CURLE_OK);
        ck_assert_int_eq(curl_easy_setopt(curl, CURLOPT_CONNECT_TO, to), CURLE_OK);
        ck_assert_int_eq(curl_easy_setopt(curl, CURLOPT_HTTPHEADER, h), CURLE_OK);
        ck_assert_int_eq(curl_easy_setopt(curl, CURLOPT_AWS_SIGV4, "aws:amz:us-east-1:service"), CURLE_OK);
        ck_assert_int_eq(curl_easy_setopt(curl, CURLOPT_USERPWD, SUITE_KEY), CURLE_OK);
        ck_assert_int_eq(curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard), CURLE_OK);
        if (strcmp(vectors[_i].method, "POST") == 0) {
                ck_assert_int_eq(curl_easy_setopt(curl, CURLOPT_POSTFIELDS, ""), CURLE_OK);
                ck_assert_int_eq(curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, 0L), CURLE_OK);
        }
        ck_assert_int_eq(curl_easy_perform(curl), CURLE_OK);
        capture_wait(&cap);
        authz = header_of(cap.request, "Authorization");
        ck_assert_msg(authz, "%s: no Authorization in\n%s", vectors[_i].name, cap.request);
        ck_assert_msg(strcmp(authz, vectors[_i].authorization) == 0, "%s:\n got  %s\n want %s",
                      vectors[_i].name, authz, vectors[_i].authorization);
        curl_slist_free_all(h);
        curl_slist_free_all(to);
        curl_easy_cleanup(curl);
}
END_TEST

/* ---- what a signed fetch sends ---------------------------------------- */

START_TEST(test_fetch_headers) {
        _cleanup_free_ char *url = NULL, *authz = NULL, *sha = NULL, *token = NULL, *ims = NULL, *inm = NULL,
                            *err = NULL;
        _cleanup_(http_fetch_freep) HttpFetch *f = NULL;
        HttpValidators since = { .last_modified = 1700000000, .etag = (char *) "\"abc\"" };
        HttpBody b = {};
        Capture cap;
        const HttpFetchOptions o = {
                .tls_verify = true,
                .timeout_usec = 10 * SUNKD_USEC_PER_SEC,
                .max_size = 4096,
                .attempts = 1,
                .aws_sigv4 = "aws:amz:eu-west-1:s3",
                .userpwd = "AKID:SECRET",
                .security_token = "TOKEN/x+y=",
        };

        capture_start(&cap);
        ck_assert_int_ge(asprintf(&url, "http://127.0.0.1:%u/bucket/maps/passwd.json", cap.port), 0);
        ck_assert_int_eq(http_fetch_new(&o, &f), 0);
        ck_assert_int_eq(http_fetch_get(f, url, &since, NULL, NULL, &b, &err), 0);
        capture_wait(&cap);
        authz = header_of(cap.request, "Authorization");
        sha = header_of(cap.request, "x-amz-content-sha256");
        token = header_of(cap.request, "x-amz-security-token");
        inm = header_of(cap.request, "If-None-Match");
        ims = header_of(cap.request, "If-Modified-Since");
        ck_assert_ptr_nonnull(authz);
        ck_assert_msg(strncmp(authz, "AWS4-HMAC-SHA256 Credential=AKID/", 33) == 0, "%s", authz);
        ck_assert_msg(strstr(authz, "/eu-west-1/s3/aws4_request, "), "%s", authz);
        /* the payload hash and the token are signed, not only sent */
        ck_assert_msg(strstr(authz, "x-amz-content-sha256;") && strstr(authz, "x-amz-security-token"), "%s",
                      authz);
        ck_assert_str_eq(sha, HTTP_SHA256_EMPTY);
        ck_assert_str_eq(token, "TOKEN/x+y=");
        ck_assert_str_eq(inm, "\"abc\"");
        ck_assert_ptr_null(ims); /* the ETag alone: see conditional_headers() */
        http_body_done(&b);
}
END_TEST

/* ---- credentials, region, URLs ---------------------------------------- */

static char *write_creds(const char *text, mode_t mode) {
        char *path = strdup("/tmp/test-s3-creds.XXXXXX");
        int fd = mkstemp(path);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        ck_assert_int_eq(fchmod(fd, mode), 0);
        close(fd);
        return path;
}

static const struct {
        const char *text;
        mode_t mode;
        int r;
        const char *userpwd, *token, *error;
} creds[] = {
        { "[other]\naws_access_key_id = NO\naws_secret_access_key = no\n"
          "[default]\n  aws_access_key_id=AKIDEXAMPLE \r\naws_secret_access_key = se/cr+et\n; c\n# "
          "c\nregion = x\n",
          0600, 0, "AKIDEXAMPLE:se/cr+et", NULL, NULL },
        { "[default]\naws_access_key_id = A\naws_secret_access_key = B\naws_session_token = T0k/en=\n", 0400,
          0, "A:B", "T0k/en=", NULL },
        { "[default]\naws_access_key_id = A\n", 0600, -EBADMSG, NULL, NULL,
          "[default] needs aws_access_key_id" },
        { "[other]\naws_access_key_id = A\naws_secret_access_key = B\n", 0600, -EBADMSG, NULL, NULL,
          "[default] needs" },
        { "[default]\naws_access_key_id = A:B\naws_secret_access_key = B\n", 0600, -EBADMSG, NULL, NULL,
          "aws_access_key_id: must be letters and digits" },
        { "[default]\naws_access_key_id = A\naws_secret_access_key = B C\n", 0600, -EBADMSG, NULL, NULL,
          "aws_secret_access_key: empty, or a space" },
        { "[default\naws_access_key_id = A\n", 0600, -EBADMSG, NULL, NULL, "line 1: bad section header" },
        { "[default]\njust words\n", 0600, -EBADMSG, NULL, NULL, "line 2: expected 'key = value'" },
        { "\n\n[default]\n\njust words\n", 0600, -EBADMSG, NULL, NULL, "line 5: expected 'key = value'" },
        { "[default]\naws_access_key_id = A\naws_secret_access_key = B\n", 0640, -EPERM, NULL, NULL,
          "refused" },
};

START_TEST(test_credentials) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = NULL;
        _cleanup_(s3_auth_done) S3Auth a = {};
        _cleanup_free_ char *err = NULL;
        const char *key = NULL;
        char *path = write_creds(creds[_i].text, creds[_i].mode);
        int r;

        ck_assert_int_eq(nsscache_conf_new(&c), 0);
        c->s3_credentials_file = path;
        r = s3_auth_load(c, &a, &key, &err);
        unlink(path);
        ck_assert_msg(r == creds[_i].r, "case %d: %d (%s)", _i, r, err ?: "");
        if (r < 0) {
                ck_assert_str_eq(key, "s3_credentials_file");
                ck_assert_msg(err && strstr(err, creds[_i].error) && strstr(err, path), "case %d: %s", _i,
                              err);
                return;
        }
        ck_assert_str_eq(a.userpwd, creds[_i].userpwd);
        ck_assert_pstr_eq(a.token, creds[_i].token);
        ck_assert_str_eq(a.sigv4, "aws:amz:us-east-1:s3");
}
END_TEST

START_TEST(test_environment_and_region) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = NULL;
        _cleanup_(s3_auth_done) S3Auth a = {};
        _cleanup_free_ char *err = NULL;
        const char *key = NULL;

        ck_assert_int_eq(nsscache_conf_new(&c), 0);
        unsetenv("AWS_ACCESS_KEY_ID");
        unsetenv("AWS_REGION");
        unsetenv("AWS_DEFAULT_REGION");
        ck_assert_int_eq(s3_auth_load(c, &a, &key, &err), -ENOKEY);
        ck_assert_ptr_nonnull(
                strstr(err, "set s3_credentials_file, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"));
        setenv("AWS_ACCESS_KEY_ID", "AKID", 1);
        setenv("AWS_SECRET_ACCESS_KEY", "S", 1);
        setenv("AWS_DEFAULT_REGION", "eu-central-1", 1);
        ck_assert_int_eq(s3_auth_load(c, &a, &key, &err), 0);
        ck_assert_str_eq(a.sigv4, "aws:amz:eu-central-1:s3");
        s3_auth_done(&a);
        setenv("AWS_REGION", "us-west-2", 1);
        ck_assert_int_eq(s3_auth_load(c, &a, &key, &err), 0);
        ck_assert_str_eq(a.sigv4, "aws:amz:us-west-2:s3");
        s3_auth_done(&a);
        setenv("AWS_REGION", "us:west", 1); /* would add a field to CURLOPT_AWS_SIGV4 */
        free(err), err = NULL;
        ck_assert_int_eq(s3_auth_load(c, &a, &key, &err), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "S3 region 'us:west' is not valid"));
        unsetenv("AWS_REGION");
        unsetenv("AWS_DEFAULT_REGION");
        unsetenv("AWS_ACCESS_KEY_ID");
        unsetenv("AWS_SECRET_ACCESS_KEY");
}
END_TEST

START_TEST(test_object_url) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = NULL;
        _cleanup_free_ char *u1 = NULL, *u2 = NULL;

        ck_assert_int_eq(nsscache_conf_new(&c), 0);
        c->s3_bucket = strdup("fleet");
        ck_assert_int_eq(s3_object_url(c, "eu-west-1", "maps/pass wd+1.json?x=1#y", &u1), 0);
        ck_assert_str_eq(u1, "https://s3.eu-west-1.amazonaws.com/fleet/maps/pass%20wd%2B1.json%3Fx%3D1%23y");
        c->s3_endpoint = strdup("https://storage.googleapis.com/");
        ck_assert_int_eq(s3_object_url(c, "auto", "passwd", &u2), 0);
        ck_assert_str_eq(u2, "https://storage.googleapis.com/fleet/passwd");
        ck_assert(!s3_bucket_valid("Fleet"));
        ck_assert(!s3_bucket_valid("ab"));
        ck_assert(s3_bucket_valid("my.fleet_1-x"));
        ck_assert(!s3_object_valid("/passwd"));
        ck_assert(!s3_object_valid("pass\nwd"));
        ck_assert(!s3_region_valid(""));
        ck_assert(!s3_region_valid("US-EAST-1"));
}
END_TEST

/* ---- nsscache's JSON records ------------------------------------------ */

typedef struct Count {
        size_t good, bad;
        char last[512];
} Count;

static int on_entry(void *userdata, NssMapType t, const void *entry) {
        Count *n = userdata;

        n->good++;
        if (t == NSS_MAP_PASSWD) {
                const NssPasswd *p = entry;
                snprintf(n->last, sizeof(n->last), "%s:%s:%u:%u:%s:%s:%s", p->name, p->passwd, p->uid,
                         p->gid, p->gecos, p->dir, p->shell);
        } else if (t == NSS_MAP_GROUP) {
                const NssGroup *g = entry;
                snprintf(n->last, sizeof(n->last), "%s:%u:%s,%s", g->name, g->gid, g->members[0] ?: "",
                         g->members[0] && g->members[1] ? g->members[1] : "");
        } else if (t == NSS_MAP_SHADOW) {
                const NssShadow *s = entry;
                snprintf(n->last, sizeof(n->last), "%s:%s:%lld:%lld", s->name, s->passwd,
                         (long long) s->lstchg, (long long) s->max);
        }
        return 0;
}

static int on_bad(void *userdata, NssMapType t, size_t line, const char *name) {
        ((Count *) userdata)->bad++;
        return 0;
}

static const struct {
        NssMapType t;
        const char *json;
        int r;
        size_t good, bad;
        const char *last;
} objects[] = {
        { NSS_MAP_PASSWD, "[{\"Value\": {\"gid\": 10000, \"uid\": 10000}, \"Key\": \"user1\"}]", 0, 1, 0,
          "user1:x:10000:10000::/home/user1:/bin/bash" },
        { NSS_MAP_PASSWD,
          "[{\"Key\": \"u\", \"Value\": {\"uid\": \"10\", \"gid\": 11, \"comment\": \"C\", "
          "\"home\": \"/h\", \"shell\": \"/bin/sh\", \"passwd\": \"x\"}}]",
          0, 1, 0, "u:x:10:11:C:/h:/bin/sh" },
        { NSS_MAP_PASSWD, "[{\"Key\": \"u\", \"Value\": {\"uid\": 1, \"gid\": 1, \"passwd\": \"$6$h\"}}]", 0,
          0, 1, "" },
        { NSS_MAP_PASSWD, "[{\"Key\": \"u\", \"Value\": {\"uid\": 1.5, \"gid\": 1}}]", 0, 0, 1, "" },
        { NSS_MAP_PASSWD, "[{\"Key\": \"u\", \"Value\": {\"uid\": -1, \"gid\": 1}}]", 0, 0, 1, "" },
        { NSS_MAP_PASSWD, "[{\"Key\": \"u\", \"Value\": {\"uid\": 4294967296, \"gid\": 1}}]", 0, 0, 1, "" },
        { NSS_MAP_PASSWD, "[{\"Key\": \"u\", \"Value\": {\"gid\": 1}}]", 0, 0, 1, "" },
        { NSS_MAP_PASSWD, "[{\"Key\": \"u\", \"Value\": {\"uid\": 1, \"gid\": 1, \"shell\": 7}}]", 0, 0, 1,
          "" },
        { NSS_MAP_PASSWD, "[{\"Key\": \"u\", \"Value\": {\"uid\": 1, \"gid\": 1, \"Uid\": 2}}]", 0, 0, 1,
          "" },
        { NSS_MAP_PASSWD, "[{\"Key\": \"u\", \"Value\": {\"uid\": 1, \"gid\": 1}, \"More\": 1}]", 0, 0, 1,
          "" },
        { NSS_MAP_PASSWD, "[{\"Key\": \"\", \"Value\": {\"uid\": 1, \"gid\": 1}}, 7, null, []]", 0, 0, 4,
          "" },
        { NSS_MAP_PASSWD, "{\"Key\": \"u\"}", -EBADMSG, 0, 0, "" },
        { NSS_MAP_PASSWD, "[{\"Key\": \"u\", ", -EBADMSG, 0, 0, "" },
        { NSS_MAP_PASSWD, "[] []", -EBADMSG, 0, 0, "" },
        /* the array is walked record by record: its syntax is still checked whole */
        { NSS_MAP_PASSWD, " \n[ ]\r\n", 0, 0, 0, "" },
        { NSS_MAP_PASSWD, "", -EBADMSG, 0, 0, "" },
        { NSS_MAP_PASSWD, "[", -EBADMSG, 0, 0, "" },
        { NSS_MAP_PASSWD, "[7", -EBADMSG, 0, 1, "" },
        { NSS_MAP_PASSWD, "[7 , \"s\" ,true,false]", 0, 0, 4, "" },
        { NSS_MAP_PASSWD,
          "[{\"Key\": \"a\", \"Value\": {\"uid\": 1, \"gid\": 1}}\n,\n{\"Key\": \"b\", "
          "\"Value\": {\"uid\": 2, \"gid\": 2}}]",
          0, 2, 0, "b:x:2:2::/home/b:/bin/bash" },
        { NSS_MAP_PASSWD, "[{\"Key\": \"a\", \"Value\": {\"uid\": 1, \"gid\": 1}} {\"Key\": \"b\"}]",
          -EBADMSG, 1, 0, "" },
        { NSS_MAP_PASSWD, "[{\"Key\": \"a\", \"Value\": {\"uid\": 1, \"gid\": 1}},]", -EBADMSG, 1, 0, "" },
        { NSS_MAP_PASSWD, "[,]", -EBADMSG, 0, 0, "" },
        { NSS_MAP_PASSWD, "[1]x", -EBADMSG, 0, 1, "" },
        { NSS_MAP_PASSWD, "[\"],[\", {\"Key\": \"a]\", \"Value\": {\"uid\": 1, \"gid\": 1}}]", 0, 1, 1,
          "a]:x:1:1::/home/a]:/bin/bash" },
        { NSS_MAP_PASSWD, "[{\"Key\": \"a\", \"Value\": {\"uid\": 1, \"gid\": 1}}, 01]", -EBADMSG, 1, 0,
          "" },
        { NSS_MAP_GROUP,
          "[{\"Value\": {\"gid\": 20000, \"members\": \"user1\\nuser2\\n\"}, \"Key\": \"group1\"}]", 0, 1, 0,
          "group1:20000:user1,user2" },
        { NSS_MAP_GROUP, "[{\"Key\": \"g\", \"Value\": {\"gid\": 2, \"members\": [\"a\"]}}]", 0, 0, 1, "" },
        { NSS_MAP_SHADOW, "[{\"Value\": {\"passwd\": \"*\"}, \"Key\": \"user1\"}]", 0, 1, 0,
          "user1:*:-1:-1" },
        { NSS_MAP_SHADOW, "[{\"Key\": \"u\", \"Value\": {\"lstchg\": 19000, \"max\": \"99999\"}}]", 0, 1, 0,
          "u:*:19000:99999" },
        { NSS_MAP_SHADOW, "[{\"Key\": \"u\", \"Value\": {\"passwd\": \"\"}}]", 0, 0, 1, "" },
        { NSS_MAP_SSHKEY, "[{\"Value\": {\"sshPublicKey\": \"ssh-rsa AAAA\"}, \"Key\": \"user1\"}]", 0, 1, 0,
          "" },
};

START_TEST(test_objects) {
        _cleanup_free_ char *err = NULL;
        Count n = {};
        int r = s3_object_parse(objects[_i].t, objects[_i].json, strlen(objects[_i].json), on_entry, on_bad,
                                &n, &err);

        ck_assert_msg(r == objects[_i].r, "case %d: %d %s", _i, r, err ?: "");
        ck_assert_msg(n.good == objects[_i].good && n.bad == objects[_i].bad, "case %d: %zu good, %zu bad",
                      _i, n.good, n.bad);
        if (objects[_i].good && *objects[_i].last)
                ck_assert_str_eq(n.last, objects[_i].last);
        if (r < 0)
                ck_assert_ptr_nonnull(err);
}
END_TEST

/* ---- nsscache.conf ---------------------------------------------------- */

static const struct {
        const char *text, *error;
} confs[] = {
        { "gcs_bucket = b\n",
          "test.conf:2: key 'gcs_bucket': nsscache's gcs source is not supported: use source = s3 "
          "with s3_endpoint = https://storage.googleapis.com" },
        { "gcs_passwd_object = p\n", "key 'gcs_passwd_object': nsscache's gcs source" },
        { "source = gcs\n", "test.conf:2: key 'source': nsscache's gcs source is not supported" },
        { "source = s4\n", "only 'scim', 'ldap', 'http' and 's3' are supported, not 's4'" },
        { "s3_endpoint = http://x\n", "test.conf:2: key 's3_endpoint': unknown or unsupported key" },
};

START_TEST(test_conf) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = NULL;
        _cleanup_free_ char *text = NULL, *err = NULL;

        ck_assert_int_ge(asprintf(&text, "[DEFAULT]\n%s", confs[_i].text), 0);
        ck_assert_int_eq(nsscache_conf_new(&c), 0);
        ck_assert_int_eq(nsscache_conf_parse_ini(c, text, strlen(text), "test.conf", &err), -EINVAL);
        ck_assert_msg(strstr(err, confs[_i].error), "got '%s', want '%s'", err, confs[_i].error);
}
END_TEST

START_TEST(test_conf_s3) {
        static const char text[] =
                "[DEFAULT]\nsource = s3\ncache = files\nfiles_dir = /tmp\nmaps = passwd, group\n"
                "s3_bucket = fleet\ns3_passwd_object = p.json\ns3_group_object = g.json\n";
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = NULL;
        _cleanup_free_ char *err = NULL;

        ck_assert_int_eq(nsscache_conf_new(&c), 0);
        ck_assert_int_eq(nsscache_conf_parse_ini(c, text, strlen(text), "test.conf", &err), 0);
        ck_assert_int_eq(nsscache_conf_finalize(c, &err), 0);
        ck_assert(nsscache_conf_is_s3(c) && nsscache_source(c)->files);
        ck_assert_str_eq(nsscache_source(c)->describe(c), "fleet");
        free(c->s3_object[NSS_MAP_GROUP]);
        c->s3_object[NSS_MAP_GROUP] = NULL;
        ck_assert_int_eq(nsscache_conf_finalize(c, &err), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "key 's3_group_object': required for the group map"));
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("nsscache-s3");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 60);
        tcase_add_loop_test(tc, test_sigv4_suite, 0, sizeof(vectors) / sizeof(vectors[0]));
        tcase_add_test(tc, test_fetch_headers);
        tcase_add_loop_test(tc, test_credentials, 0, sizeof(creds) / sizeof(creds[0]));
        tcase_add_test(tc, test_environment_and_region);
        tcase_add_test(tc, test_object_url);
        tcase_add_loop_test(tc, test_objects, 0, sizeof(objects) / sizeof(objects[0]));
        tcase_add_loop_test(tc, test_conf, 0, sizeof(confs) / sizeof(confs[0]));
        tcase_add_test(tc, test_conf_s3);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        curl_global_init(CURL_GLOBAL_ALL);
        int r = check_run(suite());
        curl_global_cleanup();
        return r;
}
