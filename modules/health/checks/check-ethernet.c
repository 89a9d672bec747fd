/* The `ethernet` check: a network interface exists, is up, and runs at
 * `min_speed` Mb/s or more, as <root>/sys/class/net/<interface>/
 * {operstate,carrier,speed} say.  LBNL NHC's check_hw_eth asks only that
 * the interface exist (be listed in /proc/net/dev); sunkd also asks that
 * it be up: operstate "up", or "unknown" (a driver that does not track it:
 * lo, tun) with carrier 1.  A missing interface is the failure itself
 * ("ethernet-missing"), as in NHC.  A speed the driver does not know (-1,
 * or unreadable while the link is up) is UNKNOWN when `min_speed` asks for
 * one.  Reading the speed asks the driver (ethtool's link settings, under
 * the kernel's rtnl lock), which a sick NIC or a busy lock may hold: a
 * child runs this. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/macro.h"

#include "check-sysfs.h"

#define NET_CLASS "/sys/class/net"
/* IFNAMSIZ */
#define ETH_NAME_MAX 16

typedef struct EthernetConf {
        HealthCheckCommon common;
        char *interface;
        int64_t min_speed;
} EthernetConf;

static const sunkd_cfg_key ethernet_keys[] = {
        HEALTH_COMMON_KEYS,
        { "interface", SUNKD_CFG_STRING, offsetof(EthernetConf, interface), SUNKD_CFG_REQUIRED, 0, 0 },
        { "min_speed", SUNKD_CFG_INT, offsetof(EthernetConf, min_speed), 0, 1, 100000000 },
};

static int ethernet_validate(void *conf, char **ret_error) {
        const EthernetConf *c = conf;

        if (!check_sysfs_name_ok(c->interface, ETH_NAME_MAX) || strpbrk(c->interface, " \t\n:"))
                return check_invalid(ret_error, "interface", "'%s' is not an interface name such as eth0",
                                     c->interface);
        return 0;
}

/* <class>/<if>/<file> quietly: 0 with *ret, or -errno. */
static int if_value(const HealthEnv *env, const char *ifname, const char *file, char **ret) {
        char rel[CHECK_PATH_MAX];

        snprintf(rel, sizeof(rel), NET_CLASS "/%s/%s", ifname, file);
        return check_sysfs_value(env, rel, 64, ret);
}

/* Whether the link is up; -errno or -EBADMSG when operstate cannot be read. */
static int if_up(const HealthEnv *env, const char *ifname, char **ret_state) {
        _cleanup_free_ char *carrier = NULL;
        int r;

        r = if_value(env, ifname, "operstate", ret_state);
        if (r < 0)
                return r;
        if (streq(*ret_state, "up"))
                return 1;
        if (streq(*ret_state, "unknown"))
                return if_value(env, ifname, "carrier", &carrier) >= 0 && streq(carrier, "1");
        return 0;
}

/* The speed in Mb/s; -ENODATA for one the driver does not know. */
static int64_t if_speed(const HealthEnv *env, const char *ifname) {
        _cleanup_free_ char *v = NULL;
        uint64_t mbps;
        int r;

        r = if_value(env, ifname, "speed", &v);
        if (r < 0)
                return r == -EINVAL || r == -ENOENT ? -ENODATA : r;
        if (streq(v, "-1") || streq(v, "4294967295") || streq(v, "0"))
                return -ENODATA;
        if (check_parse_u64(v, &mbps) < 0 || mbps > 100000000)
                return -EBADMSG;
        return (int64_t) mbps;
}

static int ethernet_run(const void *conf, const HealthEnv *env, HealthResult *ret) {
        const EthernetConf *c = conf;
        _cleanup_free_ char *state = NULL;
        char rel[CHECK_PATH_MAX], p[CHECK_PATH_MAX];
        int64_t speed;
        int r;

        snprintf(rel, sizeof(rel), NET_CLASS "/%s", c->interface);
        r = check_path(p, env, rel);
        if (r >= 0 && access(p, F_OK) < 0)
                r = negative_errno();
        if (r == -ENOENT || r == -ENOTDIR) {
                health_result_set(ret, HEALTH_FAIL, "ethernet-missing", "no interface %s", c->interface);
                return 0;
        }
        if (r >= 0)
                r = if_up(env, c->interface, &state);
        if (r == -ENOMEM) {
                health_result_set(ret, HEALTH_UNKNOWN, "out-of-memory", "out of memory");
                return r;
        }
        if (r == -EBADMSG)
                return check_input_bad(ret, "ethernet", "%s: operstate holds a NUL byte", c->interface);
        if (r < 0 && strlen(p) + sizeof("/operstate") <= sizeof(p))
                strcat(p, "/operstate");
        if (r < 0)
                return check_input_error(ret, "ethernet", p, r);
        if (r == 0) {
                health_result_set(ret, HEALTH_FAIL, "ethernet-down", "%s is %s, not up", c->interface,
                                  state);
                return 0;
        }
        if (c->min_speed == 0) {
                health_result_set(ret, HEALTH_PASS, "ok", "%s is up", c->interface);
                return 0;
        }
        speed = if_speed(env, c->interface);
        if (speed == -ENOMEM) {
                health_result_set(ret, HEALTH_UNKNOWN, "out-of-memory", "out of memory");
                return -ENOMEM;
        }
        if (speed == -ENODATA)
                return check_input_bad(ret, "ethernet", "%s is up at a speed its driver does not give",
                                       c->interface);
        if (speed < 0)
                return check_input_bad(ret, "ethernet", "%s: speed does not read as Mb/s", c->interface);
        if (speed < c->min_speed)
                health_result_set(ret, HEALTH_FAIL, "ethernet-speed",
                                  "%s runs at %" PRIi64 " Mb/s, want at least %" PRIi64, c->interface, speed,
                                  c->min_speed);
        else
                health_result_set(ret, HEALTH_PASS, "ok", "%s is up at %" PRIi64 " Mb/s", c->interface,
                                  speed);
        return 0;
}

static int name_filter(const struct dirent *de) {
        return check_sysfs_name_ok(de->d_name, ETH_NAME_MAX) && !strpbrk(de->d_name, " \t\n:");
}

/* Each physical Ethernet interface (a device behind it, link type 1) that is up, at its speed. */
static int ethernet_genconf(const HealthEnv *env, HealthGenconf *out) {
        struct dirent **names = NULL;
        char p[CHECK_PATH_MAX];
        int n, r = 0;

        if (check_path(p, env, NET_CLASS) < 0)
                return -ENAMETOOLONG;
        n = scandir(p, &names, name_filter, versionsort);
        if (n < 0)
                return errno == ENOENT ? 0 : negative_errno();
        for (int i = 0; i < n && r >= 0; i++) {
                _cleanup_free_ char *type = NULL, *state = NULL;
                char dev[CHECK_PATH_MAX], rel[CHECK_PATH_MAX], name[64], qname[96], q[64],
                        speed_key[48] = "";
                const char *ifname = names[i]->d_name;
                int64_t speed;

                snprintf(rel, sizeof(rel), NET_CLASS "/%.15s/device", ifname);
                if (check_path(dev, env, rel) < 0 || access(dev, F_OK) < 0 ||
                    if_value(env, ifname, "type", &type) < 0 || !streq(type, "1") ||
                    if_up(env, ifname, &state) <= 0 || !check_genconf_text_ok(ifname) ||
                    !health_genconf_quote(ifname, q, sizeof(q)))
                        continue;
                /* a check's name has letters, digits, '_' and '-' only: "eth0.100" as "ethernet-eth0_100" */
                snprintf(name, sizeof(name), "ethernet-%.15s", ifname);
                for (char *ch = name; *ch; ch++)
                        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", *ch))
                                *ch = '_';
                if (!health_genconf_quote(name, qname, sizeof(qname)))
                        continue;
                speed = if_speed(env, ifname);
                if (speed > 0)
                        snprintf(speed_key, sizeof(speed_key), ", min_speed: %" PRIi64, speed);
                r = health_genconf_add(out, "{name: %s, type: ethernet, interface: %s%s}", qname, q,
                                       speed_key);
        }
        for (int i = 0; i < n; i++)
                free(names[i]);
        free(names);
        return r;
}

const HealthCheckType health_check_ethernet = {
        .name = "ethernet",
        .keys = ethernet_keys,
        .n_keys = ELEMENTSOF(ethernet_keys),
        .conf_size = sizeof(EthernetConf),
        .validate = ethernet_validate,
        .run = ethernet_run,
        .genconf = ethernet_genconf,
        .child = true,
};
