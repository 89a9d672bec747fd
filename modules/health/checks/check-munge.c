/* The `munge` check: a credential encoded and decoded again through
 * munged's socket, the payload and the uid coming back as they went.  What
 * fails is said in libmunge's own words ("Failed to access ...: No such file
 * or directory (Did you start munged?)", "Failed to connect to ...:
 * Connection refused"); munged out of reach is "munge-socket", apart from a
 * credential it refuses.  libmunge has no timeout of its own (its
 * EMUNGE_TIMEOUT is unused) and retries a refused connection for about two
 * seconds: a child runs this, ended at the check's timeout.  The socket is
 * munged's own, not a file under the root. */
#include <errno.h>
#include <munge.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/macro.h"

#include "check-util.h"

#define MUNGE_SOCKET_DEFAULT "/run/munge/munge.socket.2"

typedef struct MungeConf {
        HealthCheckCommon common;
        char *socket;
} MungeConf;

static const sunkd_cfg_key munge_keys[] = {
        HEALTH_COMMON_KEYS,
        { "socket", SUNKD_CFG_PATH, offsetof(MungeConf, socket), 0, 0, 0 },
};

static const char *munge_error(munge_ctx_t ctx, munge_err_t e) {
        const char *s = munge_ctx_strerror(ctx);

        return s ?: munge_strerror(e);
}

/* Encode @payload, decode it again, compare: the result in *ret. */
static void round_trip(munge_ctx_t ctx, const char *path, const char *payload, HealthResult *ret) {
        char *cred = NULL;
        void *back = NULL;
        int len = 0;
        uid_t uid = (uid_t) -1;
        gid_t gid;
        munge_err_t e;

        e = munge_encode(&cred, ctx, payload, (int) strlen(payload));
        if (e != EMUNGE_SUCCESS)
                health_result_set(ret, HEALTH_FAIL, e == EMUNGE_SOCKET ? "munge-socket" : "munge-encode",
                                  "munge encode: %s", munge_error(ctx, e));
        else if ((e = munge_decode(cred, ctx, &back, &len, &uid, &gid)) != EMUNGE_SUCCESS)
                health_result_set(ret, HEALTH_FAIL, e == EMUNGE_SOCKET ? "munge-socket" : "munge-decode",
                                  "munge decode: %s", munge_error(ctx, e));
        else if ((size_t) len != strlen(payload) || memcmp(back, payload, (size_t) len) != 0 ||
                 uid != geteuid())
                health_result_set(ret, HEALTH_FAIL, "munge-mismatch",
                                  "munge decode gave back another payload or uid (%u, not %u)",
                                  (unsigned) uid, (unsigned) geteuid());
        else
                health_result_set(ret, HEALTH_PASS, "ok", "a credential went through '%s' and back", path);
        free(cred);
        free(back);
}

static int munge_run(const void *conf, const HealthEnv *env, HealthResult *ret) {
        const MungeConf *c = conf;
        const char *path = c->socket ?: MUNGE_SOCKET_DEFAULT;
        char payload[96];
        struct timespec ts;
        munge_ctx_t ctx;
        munge_err_t e;

        ctx = munge_ctx_create();
        if (!ctx) {
                health_result_set(ret, HEALTH_UNKNOWN, "out-of-memory", "out of memory for a munge context");
                return -ENOMEM;
        }
        e = munge_ctx_set(ctx, MUNGE_OPT_SOCKET, path);
        if (e != EMUNGE_SUCCESS)
                health_result_set(ret, HEALTH_FAIL, "munge-encode", "munge socket '%s': %s", path,
                                  munge_error(ctx, e));
        else {
                /* a payload of this run only: a replayed or cached answer cannot pass */
                clock_gettime(CLOCK_MONOTONIC, &ts);
                snprintf(payload, sizeof(payload), "sunkd health %ld %lld.%09ld", (long) getpid(),
                         (long long) ts.tv_sec, ts.tv_nsec);
                round_trip(ctx, path, payload, ret);
        }
        munge_ctx_destroy(ctx);
        return 0;
}

static int munge_genconf(const HealthEnv *env, HealthGenconf *out);

const HealthCheckType health_check_munge = {
        .name = "munge",
        .keys = munge_keys,
        .n_keys = ELEMENTSOF(munge_keys),
        .conf_size = sizeof(MungeConf),
        .run = munge_run,
        .genconf = munge_genconf,
        .child = true,
};

/* The baseline: a munge check where munged's socket is (under the root, in
 * the tests' fake one), with the socket it always uses. */
static int munge_genconf(const HealthEnv *env, HealthGenconf *out) {
        char p[CHECK_PATH_MAX];
        struct stat st;

        if (check_path(p, env, MUNGE_SOCKET_DEFAULT) < 0 || stat(p, &st) < 0 || !S_ISSOCK(st.st_mode))
                return 0;
        return health_genconf_add(
                out, "{name: %s, type: munge}",
                health_genconf_name(out, "munge", NULL, (char[HEALTH_GENCONF_NAME_MAX + 1]){}));
}
