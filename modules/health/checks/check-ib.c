/* The `ib` check: InfiniBand ports are ACTIVE, at `min_rate` Gb/s or more,
 * as <root>/sys/class/infiniband/<device>/ports/<n>/{state,rate} say
 * ("4: ACTIVE", "400 Gb/sec (4X NDR)").  Without `device`, every device's
 * InfiniBand ports are checked (RoCE ports, link_layer Ethernet, only when
 * their device is named); without `port`, every port of them.  No device at
 * all is UNKNOWN (no HCA, or its driver not loaded) unless one is named.
 * Reading a port asks the HCA's firmware, which a sick HCA may not answer:
 * a child runs this. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/macro.h"

#include "check-util.h"

#define IB_CLASS "/sys/class/infiniband"
#define IB_NAME_MAX 64

typedef struct IbConf {
        HealthCheckCommon common;
        char *device;
        int64_t port;
        int64_t min_rate;
} IbConf;

static const sunkd_cfg_key ib_keys[] = {
        HEALTH_COMMON_KEYS,
        { "device", SUNKD_CFG_STRING, offsetof(IbConf, device), 0, 0, 0 },
        { "port", SUNKD_CFG_INT, offsetof(IbConf, port), 0, 1, 255 },
        { "min_rate", SUNKD_CFG_INT, offsetof(IbConf, min_rate), 0, 1, 1000000 },
};

/* What the ports checked came to: the first failure and the first port
 * whose files did not read as the kernel writes them, and counts. */
typedef struct IbScan {
        unsigned ports, failed, bad;
        HealthResult fail, unknown;
        char last[128]; /* "mlx5_0 port 1 ACTIVE at 400 Gb/s" */
} IbScan;

static int ib_validate(void *conf, char **ret_error) {
        const IbConf *c = conf;

        if (c->device && (isempty(c->device) || strlen(c->device) >= IB_NAME_MAX || strchr(c->device, '/') ||
                          streq(c->device, ".") || streq(c->device, "..")))
                return check_invalid(ret_error, "device", "'%s' is not a device name such as mlx5_0",
                                     c->device);
        return 0;
}

static int name_filter(const struct dirent *de) {
        return de->d_name[0] != '.' && strlen(de->d_name) < IB_NAME_MAX;
}

static void free_names(struct dirent **names, int n) {
        for (int i = 0; i < n; i++)
                free(names[i]);
        free(names);
}

/* A port's file, its trailing newline dropped, in *ret; -errno, or -EBADMSG for a NUL byte. */
static int port_file(const HealthEnv *env, const char *dev, const char *port, const char *name, char **ret) {
        _cleanup_free_ char *text = NULL;
        char rel[CHECK_PATH_MAX], p[CHECK_PATH_MAX];
        size_t len;
        int r;

        snprintf(rel, sizeof(rel), IB_CLASS "/%s/ports/%s/%s", dev, port, name);
        r = check_path(p, env, rel);
        if (r >= 0)
                r = fileio_read(p, 4096, &text, &len);
        if (r < 0)
                return r;
        if (strlen(text) != len)
                return -EBADMSG;
        if (len > 0 && text[len - 1] == '\n')
                text[len - 1] = 0;
        *ret = TAKE_PTR(text);
        return 0;
}

static void port_fail(IbScan *s, const char *code, const char *fmt, ...) _printf_(3, 4);
static void port_fail(IbScan *s, const char *code, const char *fmt, ...) {
        char detail[HEALTH_DETAIL_MAX];
        va_list ap;

        if (s->failed++ > 0)
                return;
        va_start(ap, fmt);
        vsnprintf(detail, sizeof(detail), fmt, ap);
        va_end(ap);
        health_result_set(&s->fail, HEALTH_FAIL, code, "%s", detail);
}

static void port_bad(IbScan *s, const char *fmt, ...) _printf_(2, 3);
static void port_bad(IbScan *s, const char *fmt, ...) {
        char detail[HEALTH_DETAIL_MAX];
        va_list ap;

        if (s->bad++ > 0)
                return;
        va_start(ap, fmt);
        vsnprintf(detail, sizeof(detail), fmt, ap);
        va_end(ap);
        health_result_set(&s->unknown, HEALTH_UNKNOWN, "ib-input-bad", "%s", detail);
}

/* "4: ACTIVE" is ACTIVE; the name after the colon is shown otherwise. */
static void check_state(IbScan *s, const char *dev, const char *port, const char *state) {
        const char *colon = strchr(state, ':'), *name = colon ? colon + 1 + strspn(colon + 1, " ") : NULL;

        if (!name || colon == state || strspn(state, "0123456789") != (size_t) (colon - state) || !*name)
                port_bad(s, "%s port %s: state '%.32s' does not read '<n>: <STATE>'", dev, port, state);
        else if (!streq(name, "ACTIVE"))
                port_fail(s, "ib-port-state", "%s port %s is %.32s, not ACTIVE", dev, port, name);
}

/* "400 Gb/sec (4X NDR)" against min_rate. */
static void check_rate(IbScan *s, const IbConf *c, const char *dev, const char *port, const char *rate,
                       uint64_t *ret_milli) {
        const char *end;
        char have[32];

        if (check_parse_milli(rate, &end, ret_milli) < 0 || strncmp(end, " Gb/sec", 7) != 0) {
                port_bad(s, "%s port %s: rate '%.32s' does not read '<n> Gb/sec'", dev, port, rate);
                *ret_milli = 0;
        } else if (c->min_rate > 0 && *ret_milli < (uint64_t) c->min_rate * 1000)
                port_fail(s, "ib-rate", "%s port %s runs at %s Gb/s, want at least %" PRIi64, dev, port,
                          check_format_milli(*ret_milli, have), c->min_rate);
}

static void check_port(IbScan *s, const IbConf *c, const HealthEnv *env, const char *dev, const char *port) {
        _cleanup_free_ char *layer = NULL, *state = NULL, *rate = NULL;
        unsigned before = s->failed + s->bad;
        uint64_t milli = 0;
        char have[32];
        int r;

        /* RoCE ports of devices found, not named, are no InfiniBand link to check */
        if (!c->device && port_file(env, dev, port, "link_layer", &layer) >= 0 &&
            !streq(layer, "InfiniBand"))
                return;
        s->ports++;
        r = port_file(env, dev, port, "state", &state);
        if (r == -EBADMSG || r == -EFBIG || r == -EINVAL)
                port_bad(s, "%s port %s: state does not read '<n>: <STATE>'", dev, port);
        else if (r < 0)
                port_fail(s, "ib-port-state", "%s port %s: state: %s", dev, port, strerror(-r));
        else
                check_state(s, dev, port, state);
        if (s->failed + s->bad > before)
                return;
        r = port_file(env, dev, port, "rate", &rate);
        if (r == -EBADMSG || r == -EFBIG || r == -EINVAL)
                port_bad(s, "%s port %s: rate does not read '<n> Gb/sec'", dev, port);
        else if (r < 0)
                port_fail(s, "ib-rate", "%s port %s: rate: %s", dev, port, strerror(-r));
        else
                check_rate(s, c, dev, port, rate, &milli);
        /* a device's name is at most 64 bytes (IB_DEVICE_NAME_MAX), a port's a number */
        snprintf(s->last, sizeof(s->last), "%.64s port %.8s ACTIVE at %s Gb/s", dev, port,
                 check_format_milli(milli, have));
}

/* The ports of @dev (only `port` when named).  -ENOENT when @dev has no
 * ports directory: no such device. */
static int check_device(IbScan *s, const IbConf *c, const HealthEnv *env, const char *dev) {
        struct dirent **names = NULL;
        char rel[CHECK_PATH_MAX], p[CHECK_PATH_MAX], want[DECIMAL_STR_MAX(int64_t)] = "";
        int n, r;

        if (c->port > 0)
                snprintf(want, sizeof(want), "%" PRIi64, c->port);
        snprintf(rel, sizeof(rel), IB_CLASS "/%s/ports", dev);
        r = check_path(p, env, rel);
        if (r < 0)
                return r;
        n = scandir(p, &names, name_filter, versionsort);
        if (n < 0)
                return negative_errno();
        for (int i = 0; i < n; i++)
                if (strspn(names[i]->d_name, "0123456789") == strlen(names[i]->d_name) &&
                    (c->port == 0 || streq(names[i]->d_name, want)))
                        check_port(s, c, env, dev, names[i]->d_name);
        free_names(names, n);
        return 0;
}

static int check_all(IbScan *s, const IbConf *c, const HealthEnv *env, const char *class,
                     HealthResult *ret) {
        struct dirent **devs = NULL;
        int n;

        n = scandir(class, &devs, name_filter, versionsort);
        if (n < 0) {
                check_input_error(ret, "ib", class, negative_errno());
                return -ENOENT;
        }
        for (int i = 0; i < n; i++)
                (void) check_device(s, c, env, devs[i]->d_name); /* not a device, or gone */
        free_names(devs, n);
        return 0;
}

static void result(const IbScan *s, const IbConf *c, const char *class, HealthResult *ret) {
        char want[64] = "";

        if (c->min_rate > 0)
                snprintf(want, sizeof(want), " at %" PRIi64 " Gb/s or more", c->min_rate);
        if (s->failed > 1)
                health_result_set(ret, HEALTH_FAIL, s->fail.code, "%s (%u ports failing)", s->fail.detail,
                                  s->failed);
        else if (s->failed == 1)
                *ret = s->fail;
        else if (s->bad > 0)
                *ret = s->unknown;
        else if (s->ports == 0 && c->device && c->port > 0)
                health_result_set(ret, HEALTH_FAIL, "ib-missing", "%s has no port %" PRIi64, c->device,
                                  c->port);
        else if (s->ports == 0 && c->device)
                health_result_set(ret, HEALTH_FAIL, "ib-missing", "%s has no ports", c->device);
        else if (s->ports == 0 && c->port > 0)
                health_result_set(ret, HEALTH_FAIL, "ib-missing", "no InfiniBand device has port %" PRIi64,
                                  c->port);
        else if (s->ports == 0)
                health_result_set(ret, HEALTH_UNKNOWN, "ib-input-missing", "no InfiniBand port under '%s'",
                                  class);
        else if (s->ports == 1)
                health_result_set(ret, HEALTH_PASS, "ok", "%s", s->last);
        else
                health_result_set(ret, HEALTH_PASS, "ok", "%u InfiniBand ports ACTIVE%s", s->ports, want);
}

static int ib_run(const void *conf, const HealthEnv *env, HealthResult *ret) {
        const IbConf *c = conf;
        IbScan s = {};
        char class[CHECK_PATH_MAX];
        int r;

        r = check_path(class, env, IB_CLASS);
        if (r < 0)
                return check_input_error(ret, "ib", IB_CLASS, r);
        if (!c->device && check_all(&s, c, env, class, ret) < 0)
                return 0;
        if (c->device) {
                r = check_device(&s, c, env, c->device);
                if (r < 0) {
                        health_result_set(ret, HEALTH_FAIL, "ib-missing", "device %s: %s", c->device,
                                          r == -ENOENT ? "not found" : strerror(-r));
                        return 0;
                }
        }
        result(&s, c, class, ret);
        return 0;
}

const HealthCheckType health_check_ib = {
        .name = "ib",
        .keys = ib_keys,
        .n_keys = ELEMENTSOF(ib_keys),
        .conf_size = sizeof(IbConf),
        .validate = ib_validate,
        .run = ib_run,
        .child = true,
};
