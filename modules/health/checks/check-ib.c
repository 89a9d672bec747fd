/* The `ib` check: InfiniBand ports are ACTIVE, at `min_rate` Gb/s or more,
 * as <root>/sys/class/infiniband/<device>/ports/<n>/{state,rate} say
 * ("4: ACTIVE", "400 Gb/sec (4X NDR)"), and, for each `max_<counter>` set,
 * the port's error counter <port>/counters/<counter> is at most that: the
 * counts the HCA keeps since they were last cleared (the driver's load, a
 * reboot, `perfquery -R`).  link_downed counts the link going down and
 * coming back (flaps, ib-link-flaps); the others are errors on the wire or
 * in the port (ib-errors).  A counter at the top of its width (255 for an
 * 8-bit one, 65535, 2^32 - 1, 2^64 - 1) has stopped counting: it fails
 * whatever its max, since it can no longer show it stays under.  Without `device`, every device's
 * InfiniBand ports are checked (RoCE ports, link_layer Ethernet, only when
 * their device is named); without `port`, every port of them.  No device at
 * all is UNKNOWN (no HCA, or its driver not loaded) unless one is named.
 * Reading a port asks the HCA's firmware, which a sick HCA may not answer:
 * a child runs this. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/macro.h"

#include "check-sysfs.h"
#include "check-util.h"

#define IB_CLASS "/sys/class/infiniband"
#define IB_NAME_MAX 64

/* The port counters a max may be set on, in the order they are judged:
 * the file under ports/<n>/counters/, its width in the port's PMA counters
 * (IBA PortCounters; the kernel reads the extended 64-bit ones where the
 * HCA has them), and the code a count over its max gives. */
typedef enum IbCounter {
        IB_LINK_DOWNED,
        IB_LINK_ERROR_RECOVERY,
        IB_SYMBOL_ERROR,
        IB_PORT_RCV_ERRORS,
        IB_PORT_RCV_REMOTE_PHYSICAL_ERRORS,
        IB_PORT_RCV_SWITCH_RELAY_ERRORS,
        IB_PORT_XMIT_DISCARDS,
        IB_PORT_XMIT_CONSTRAINT_ERRORS,
        IB_PORT_RCV_CONSTRAINT_ERRORS,
        IB_LOCAL_LINK_INTEGRITY_ERRORS,
        IB_EXCESSIVE_BUFFER_OVERRUN_ERRORS,
        IB_VL15_DROPPED,
        _IB_COUNTER_MAX,
} IbCounter;

static const struct {
        const char *file;
        unsigned bits;
        const char *code;
} ib_counters[_IB_COUNTER_MAX] = {
        [IB_LINK_DOWNED] = { "link_downed", 8, "ib-link-flaps" },
        [IB_LINK_ERROR_RECOVERY] = { "link_error_recovery", 8, "ib-errors" },
        [IB_SYMBOL_ERROR] = { "symbol_error", 16, "ib-errors" },
        [IB_PORT_RCV_ERRORS] = { "port_rcv_errors", 16, "ib-errors" },
        [IB_PORT_RCV_REMOTE_PHYSICAL_ERRORS] = { "port_rcv_remote_physical_errors", 16, "ib-errors" },
        [IB_PORT_RCV_SWITCH_RELAY_ERRORS] = { "port_rcv_switch_relay_errors", 16, "ib-errors" },
        [IB_PORT_XMIT_DISCARDS] = { "port_xmit_discards", 16, "ib-errors" },
        [IB_PORT_XMIT_CONSTRAINT_ERRORS] = { "port_xmit_constraint_errors", 8, "ib-errors" },
        [IB_PORT_RCV_CONSTRAINT_ERRORS] = { "port_rcv_constraint_errors", 8, "ib-errors" },
        [IB_LOCAL_LINK_INTEGRITY_ERRORS] = { "local_link_integrity_errors", 4, "ib-errors" },
        [IB_EXCESSIVE_BUFFER_OVERRUN_ERRORS] = { "excessive_buffer_overrun_errors", 4, "ib-errors" },
        [IB_VL15_DROPPED] = { "VL15_dropped", 16, "ib-errors" },
};

typedef struct IbConf {
        HealthCheckCommon common;
        char *device;
        int64_t port;
        int64_t min_rate;
        int64_t max[_IB_COUNTER_MAX]; /* -1: not checked */
} IbConf;

#define IB_MAX_KEY(key, c)                                                                                  \
        { key, SUNKD_CFG_INT, offsetof(IbConf, max[c]), 0, 0, INT64_MAX }

static const sunkd_cfg_key ib_keys[] = {
        HEALTH_COMMON_KEYS,
        { "device", SUNKD_CFG_STRING, offsetof(IbConf, device), 0, 0, 0 },
        { "port", SUNKD_CFG_INT, offsetof(IbConf, port), 0, 1, 255 },
        { "min_rate", SUNKD_CFG_INT, offsetof(IbConf, min_rate), 0, 1, 1000000 },
        IB_MAX_KEY("max_link_downed", IB_LINK_DOWNED),
        IB_MAX_KEY("max_link_error_recovery", IB_LINK_ERROR_RECOVERY),
        IB_MAX_KEY("max_symbol_error", IB_SYMBOL_ERROR),
        IB_MAX_KEY("max_port_rcv_errors", IB_PORT_RCV_ERRORS),
        IB_MAX_KEY("max_port_rcv_remote_physical_errors", IB_PORT_RCV_REMOTE_PHYSICAL_ERRORS),
        IB_MAX_KEY("max_port_rcv_switch_relay_errors", IB_PORT_RCV_SWITCH_RELAY_ERRORS),
        IB_MAX_KEY("max_port_xmit_discards", IB_PORT_XMIT_DISCARDS),
        IB_MAX_KEY("max_port_xmit_constraint_errors", IB_PORT_XMIT_CONSTRAINT_ERRORS),
        IB_MAX_KEY("max_port_rcv_constraint_errors", IB_PORT_RCV_CONSTRAINT_ERRORS),
        IB_MAX_KEY("max_local_link_integrity_errors", IB_LOCAL_LINK_INTEGRITY_ERRORS),
        IB_MAX_KEY("max_excessive_buffer_overrun_errors", IB_EXCESSIVE_BUFFER_OVERRUN_ERRORS),
        IB_MAX_KEY("max_vl15_dropped", IB_VL15_DROPPED),
};

static void ib_defaults(void *conf) {
        IbConf *c = conf;

        for (size_t i = 0; i < _IB_COUNTER_MAX; i++)
                c->max[i] = -1;
}

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
        char rel[CHECK_PATH_MAX];

        snprintf(rel, sizeof(rel), IB_CLASS "/%s/ports/%s/%s", dev, port, name);
        return check_sysfs_value(env, rel, CHECK_SYSFS_MAX, ret);
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

static void port_unknown(IbScan *s, const char *code, const char *fmt, va_list ap) _printf_(3, 0);
static void port_unknown(IbScan *s, const char *code, const char *fmt, va_list ap) {
        char detail[HEALTH_DETAIL_MAX];

        if (s->bad++ > 0)
                return;
        vsnprintf(detail, sizeof(detail), fmt, ap);
        health_result_set(&s->unknown, HEALTH_UNKNOWN, code, "%s", detail);
}

static void port_bad(IbScan *s, const char *fmt, ...) _printf_(2, 3);
static void port_bad(IbScan *s, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        port_unknown(s, "ib-input-bad", fmt, ap);
        va_end(ap);
}

static void port_missing(IbScan *s, const char *fmt, ...) _printf_(2, 3);
static void port_missing(IbScan *s, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        port_unknown(s, "ib-input-missing", fmt, ap);
        va_end(ap);
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

/* A counter as the kernel prints it: decimal digits, nothing else. */
static int parse_counter(const char *text, uint64_t *ret) {
        uint64_t v = 0;

        if (!*text || strspn(text, "0123456789") != strlen(text))
                return -EINVAL;
        for (const char *p = text; *p; p++) {
                if (v > (UINT64_MAX - (uint64_t) (*p - '0')) / 10)
                        return -ERANGE;
                v = v * 10 + (uint64_t) (*p - '0');
        }
        *ret = v;
        return 0;
}

static bool saturated(IbCounter c, uint64_t v) {
        return v == (UINT64_C(1) << ib_counters[c].bits) - 1 || v == UINT32_MAX || v == UINT64_MAX;
}

/* Each counter with a max, in table order; the first over its max is the
 * port's failure.  Returns whether the port failed or did not read. */
static bool check_counters(IbScan *s, const IbConf *c, const HealthEnv *env, const char *dev,
                           const char *port) {
        unsigned before = s->failed + s->bad;

        for (size_t i = 0; i < _IB_COUNTER_MAX && s->failed + s->bad == before; i++) {
                _cleanup_free_ char *text = NULL;
                char name[128];
                uint64_t v;
                int r;

                if (c->max[i] < 0)
                        continue;
                snprintf(name, sizeof(name), "counters/%s", ib_counters[i].file);
                r = port_file(env, dev, port, name, &text);
                if (r == -ENOENT)
                        port_missing(s, "%s port %s: %s is missing", dev, port, name);
                else if (r == -EBADMSG || r == -EFBIG || r == -EINVAL)
                        port_bad(s, "%s port %s: %s does not read as a count", dev, port, name);
                else if (r < 0)
                        port_bad(s, "%s port %s: %s: %s", dev, port, name, strerror(-r));
                else if ((r = parse_counter(text, &v)) < 0)
                        port_bad(s, "%s port %s: %s '%.32s' is %s", dev, port, name, text,
                                 r == -ERANGE ? "past 2^64" : "not a count");
                else if (saturated((IbCounter) i, v))
                        port_fail(s, ib_counters[i].code,
                                  "%s port %s: %s %" PRIu64 " is saturated (stopped counting), max %" PRIi64,
                                  dev, port, ib_counters[i].file, v, c->max[i]);
                else if (v > (uint64_t) c->max[i])
                        port_fail(s, ib_counters[i].code, "%s port %s: %s %" PRIu64 ", max %" PRIi64, dev,
                                  port, ib_counters[i].file, v, c->max[i]);
        }
        return s->failed + s->bad > before;
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
        if (s->failed + s->bad > before || check_counters(s, c, env, dev, port))
                return;
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
        char want[96] = "";
        bool counters = false;

        for (size_t i = 0; i < _IB_COUNTER_MAX; i++)
                counters = counters || c->max[i] >= 0;
        if (c->min_rate > 0)
                snprintf(want, sizeof(want), " at %" PRIi64 " Gb/s or more", c->min_rate);
        if (counters)
                strcat(want, ", error counters within their max");
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

/* The baseline: each InfiniBand port ACTIVE now, at the rate it runs at
 * (whole Gb/s, rounded down: 2.5 Gb/s SDR asks for 2). */
static void genconf_port(const HealthEnv *env, const char *dev, const char *port, unsigned *k,
                         HealthGenconf *out) {
        _cleanup_free_ char *layer = NULL, *state = NULL, *rate = NULL;
        char quoted[2 * IB_NAME_MAX + 8], name[40];
        const char *colon, *end;
        uint64_t milli;

        if (port_file(env, dev, port, "link_layer", &layer) >= 0 && !streq(layer, "InfiniBand"))
                return;
        if (port_file(env, dev, port, "state", &state) < 0 || !(colon = strchr(state, ':')) ||
            !streq(colon + 1 + strspn(colon + 1, " "), "ACTIVE"))
                return;
        if (port_file(env, dev, port, "rate", &rate) < 0 || check_parse_milli(rate, &end, &milli) < 0 ||
            strncmp(end, " Gb/sec", 7) != 0 || milli < 1000 ||
            !health_genconf_quote(dev, quoted, sizeof(quoted)))
                return;
        ++*k;
        if (strlen(dev) + strlen(port) + 4 > 32 ||
            strspn(dev, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != strlen(dev))
                snprintf(name, sizeof(name), "ib-%u", *k);
        else
                snprintf(name, sizeof(name), "ib-%.24s-%.3s", dev, port);
        (void) health_genconf_add(out, "{name: %s, type: ib, device: %s, port: %s, min_rate: %" PRIu64 "}",
                                  name, quoted, port, milli / 1000);
}

static int ib_genconf(const HealthEnv *env, HealthGenconf *out) {
        struct dirent **devs = NULL;
        char class[CHECK_PATH_MAX];
        unsigned k = 0;
        int n, r;

        r = check_path(class, env, IB_CLASS);
        if (r < 0)
                return r;
        n = scandir(class, &devs, name_filter, versionsort);
        if (n < 0)
                return errno == ENOENT ? 0 : negative_errno(); /* no HCA, no driver: nothing */
        for (int i = 0; i < n; i++) {
                struct dirent **ports = NULL;
                char rel[CHECK_PATH_MAX], p[CHECK_PATH_MAX];
                int m;

                snprintf(rel, sizeof(rel), IB_CLASS "/%s/ports", devs[i]->d_name);
                if (check_path(p, env, rel) < 0 || (m = scandir(p, &ports, name_filter, versionsort)) < 0)
                        continue;
                for (int j = 0; j < m; j++)
                        if (strspn(ports[j]->d_name, "0123456789") == strlen(ports[j]->d_name) &&
                            strlen(ports[j]->d_name) <= 3)
                                genconf_port(env, devs[i]->d_name, ports[j]->d_name, &k, out);
                free_names(ports, m);
        }
        free_names(devs, n);
        return out->oom ? -ENOMEM : 0;
}

const HealthCheckType health_check_ib = {
        .name = "ib",
        .keys = ib_keys,
        .n_keys = ELEMENTSOF(ib_keys),
        .conf_size = sizeof(IbConf),
        .defaults = ib_defaults,
        .validate = ib_validate,
        .run = ib_run,
        .genconf = ib_genconf,
        .child = true,
};
