/* The XID policy and the gpu check's judge: the policy's defaults from
 * NVIDIA's catalogue and a site's overrides, parsed through the host's
 * config functions with malformed and hostile sections refused where they
 * are wrong; the judge against the fact gres.gpus as gres publishes it:
 * each event counted once, a reset (NVML's recovery action, or the GPU
 * coming back) and a reboot (a new boot id under a fake root) ending what
 * they should, storms counted in bounded room, the GPU count, and the state
 * the module keeps across a restart, hostile files refused; the memory
 * policy's defaults and overrides, and a GPU's memory counters (a failed row
 * remap, uncorrectable ECC errors) failing the check by it; the check's
 * limits on a GPU's telemetry (NVLink state and errors, temperature, clocks
 * events, power limit, persistence mode) passing, failing with their code
 * and remedy, and unknown for what the fact does not say or says wrongly. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "conf-tree.h"
#include "module-loader.h"
#include "util/cleanup.h"
#include "util/json-util.h"

#include "../../modules/health/checks/health-gpu-limits.h"
#include "../../modules/health/health-gpu-memory.h"
#include "../../modules/health/health-gpu.h"
#include "../../modules/health/health-xid-policy.h"
#include "../lib/check-run.h"

#define SEC 1000000ULL
#define T0 1800000000000000ULL /* a CLOCK_REALTIME now */

/* ---- The policy ------------------------------------------------------------- */

/* The key @key of the section @yaml under modules.health, as the module
 * would hand it over (NULL when absent); *ret_tree holds it until freed. */
static const ConfNode *health_key(const char *yaml, const char *key, ConfTree **ret_tree, char **e) {
        _cleanup_free_ char *doc = NULL;

        *e = NULL;
        *ret_tree = NULL;
        ck_assert_int_ge(asprintf(&doc, "modules:\n  health:\n%s", yaml), 0);
        ck_assert_msg(conf_tree_parse("sunkd.yaml", doc, strlen(doc), ret_tree, e) == 0, "%s", *e);
        return conf_node_get(conf_node_get(conf_node_get((*ret_tree)->root, "modules"), "health"), key);
}

/* Parses "xid_policy: ..." in @yaml. */
static int parse(const char *yaml, HealthXidPolicy *p, char **e) {
        ConfTree *t;
        int r = health_xid_policy_parse(&host_api, health_key(yaml, "xid_policy", &t, e), p, e);

        conf_tree_free(t);
        return r;
}

START_TEST(test_policy_defaults) {
        HealthXidPolicy p;
        char *e;
        static const unsigned reset[] = { 46, 62, 64, 95, 109, 110, 119, 120, 136, 140, 143, 155, 156, 158 };
        static const unsigned ignore[] = { 13, 31, 43, 45 };

        ck_assert_int_eq(parse("    interval: 1m\n", &p, &e), 0);
        for (size_t i = 0; i < sizeof(reset) / sizeof(reset[0]); i++)
                ck_assert_msg(health_xid_rule(&p, reset[i]).action == HEALTH_XID_RESET, "XID %u", reset[i]);
        for (size_t i = 0; i < sizeof(ignore) / sizeof(ignore[0]); i++)
                ck_assert_int_eq(health_xid_rule(&p, ignore[i]).action, HEALTH_XID_IGNORE);
        ck_assert_int_eq(health_xid_rule(&p, 79).action, HEALTH_XID_REBOOT);
        ck_assert_int_eq(health_xid_rule(&p, 79).count, 1);
        ck_assert_int_eq(health_xid_rule(&p, 79).window_usec, 0);
        /* one the catalogue does not name: the default, ignore */
        ck_assert_int_eq(health_xid_rule(&p, 48).action, HEALTH_XID_IGNORE);
        ck_assert_int_eq(health_xid_rule(&p, 4294967295ULL).action, HEALTH_XID_IGNORE);
        /* empty forms are the defaults too */
        ck_assert_int_eq(parse("    xid_policy:\n", &p, &e), 0);
        ck_assert_int_eq(parse("    xid_policy: {}\n", &p, &e), 0);
        ck_assert_int_eq(parse("    xid_policy:\n      overrides: []\n", &p, &e), 0);
        ck_assert_int_eq(p.n_overrides, 0);
}
END_TEST

START_TEST(test_policy_overrides) {
        HealthXidPolicy p;
        HealthXidRule r;
        char *e;

        ck_assert_int_eq(parse("    xid_policy:\n"
                               "      default: reset\n"
                               "      overrides:\n"
                               "        - { xid: 31, count: 10, window: 1h, action: drain }\n"
                               "        - xid: 79\n"
                               "          action: ignore\n"
                               "        - { xid: 48, action: reboot }\n"
                               "        - { xid: 95, count: 3, window: 10m, action: reset }\n",
                               &p, &e),
                         0);
        ck_assert_int_eq(p.n_overrides, 4);
        r = health_xid_rule(&p, 31);
        ck_assert_int_eq(r.action, HEALTH_XID_DRAIN);
        ck_assert_int_eq(r.count, 10);
        ck_assert_uint_eq(r.window_usec, 3600 * SEC);
        ck_assert_int_eq(health_xid_rule(&p, 79).action, HEALTH_XID_IGNORE);
        ck_assert_int_eq(health_xid_rule(&p, 48).action, HEALTH_XID_REBOOT);
        ck_assert_int_eq(health_xid_rule(&p, 95).count, 3);
        /* the catalogue still names the rest; the default takes the others */
        ck_assert_int_eq(health_xid_rule(&p, 13).action, HEALTH_XID_IGNORE);
        ck_assert_int_eq(health_xid_rule(&p, 46).action, HEALTH_XID_RESET);
        ck_assert_int_eq(health_xid_rule(&p, 12345).action, HEALTH_XID_RESET);
}
END_TEST

/* Each is refused with the file, line and column of what is wrong. */
START_TEST(test_policy_bad) {
        static const struct {
                const char *yaml, *error;
        } bad[] = {
                { "    xid_policy: reset\n",
                  "sunkd.yaml:3:5: key 'xid_policy': a mapping with 'default' and 'overrides'" },
                { "    xid_policy: [1, 2]\n", "sunkd.yaml:3:5: key 'xid_policy': a mapping" },
                { "    xid_policy:\n      defaults: ignore\n",
                  "sunkd.yaml:4:7: key 'xid_policy': unknown key 'defaults'" },
                { "    xid_policy:\n      default: drain\n",
                  "sunkd.yaml:4:7: key 'xid_policy': default: ignore, reset or reboot" },
                { "    xid_policy:\n      default: [x]\n", "sunkd.yaml:4:7: key 'xid_policy': default:" },
                { "    xid_policy:\n      overrides: 79\n",
                  "sunkd.yaml:4:7: key 'xid_policy': overrides: a list" },
                { "    xid_policy:\n      overrides: {xid: 79}\n",
                  "sunkd.yaml:4:7: key 'xid_policy': overrides: a list" },
                { "    xid_policy:\n      overrides:\n        - 79\n", "sunkd.yaml:5:11: " },
                { "    xid_policy:\n      overrides:\n        - { action: reset }\n",
                  "sunkd.yaml:5:11: key 'xid'" },
                { "    xid_policy:\n      overrides:\n        - { xid: 79 }\n",
                  "sunkd.yaml:5:11: key 'action'" },
                { "    xid_policy:\n      overrides:\n        - { xid: 79, action: nuke }\n",
                  "sunkd.yaml:5:22: key 'xid_policy': override of XID 79: action 'nuke': ignore, reset, "
                  "reboot or drain" },
                { "    xid_policy:\n      overrides:\n        - { xid: -1, action: reset }\n",
                  "sunkd.yaml:5:13: key 'xid'" },
                { "    xid_policy:\n      overrides:\n        - { xid: 4294967296, action: reset }\n",
                  "sunkd.yaml:5:13: key 'xid'" },
                { "    xid_policy:\n      overrides:\n        - { xid: x79, action: reset }\n",
                  "sunkd.yaml:5:13: key 'xid'" },
                { "    xid_policy:\n      overrides:\n        - { xid: 79, count: 0, action: reset }\n",
                  "sunkd.yaml:5:22: key 'count'" },
                { "    xid_policy:\n      overrides:\n        - { xid: 79, window: soon, action: reset }\n",
                  "sunkd.yaml:5:22: key 'window'" },
                { "    xid_policy:\n      overrides:\n        - { xid: 31, count: 5, action: drain }\n",
                  "sunkd.yaml:5:11: key 'xid_policy': override of XID 31: drain needs a window" },
                { "    xid_policy:\n      overrides:\n        - { xid: 79, action: reset, colour: red }\n",
                  "sunkd.yaml:5:37: key 'colour'" },
                { "    xid_policy:\n      overrides:\n        - { xid: 79, action: reset }\n        - { "
                  "xid: 79, action: ignore }\n",
                  "sunkd.yaml:6:11: key 'xid_policy': XID 79 is overridden twice" },
        };
        HealthXidPolicy p, keep;
        char *e;

        health_xid_policy_defaults(&keep);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                p = keep;
                ck_assert_msg(parse(bad[i].yaml, &p, &e) == -EINVAL, "accepted: %s", bad[i].yaml);
                ck_assert_msg(e && strncmp(e, bad[i].error, strlen(bad[i].error)) == 0,
                              "%s: got '%s', expected '%s...'", bad[i].yaml, e, bad[i].error);
                ck_assert_int_eq(p.n_overrides, 0);
                free(e);
        }
}
END_TEST

/* More overrides than the policy holds: refused, not cut. */
START_TEST(test_policy_too_many) {
        _cleanup_free_ char *yaml = NULL;
        HealthXidPolicy p;
        size_t len = 0;
        FILE *f = open_memstream(&yaml, &len);
        char *e;

        fprintf(f, "    xid_policy:\n      overrides:\n");
        for (unsigned i = 0; i <= HEALTH_XID_OVERRIDES_MAX; i++)
                fprintf(f, "        - { xid: %u, action: reset }\n", 1000 + i);
        fclose(f);
        ck_assert_int_eq(parse(yaml, &p, &e), -EINVAL);
        ck_assert_ptr_nonnull(strstr(e, "overrides: more than 256"));
        free(e);
}
END_TEST

/* ---- The judge --------------------------------------------------------------- */

static char root[64];

static void set_boot(const char *id) {
        _cleanup_free_ char *p = NULL;
        FILE *f;

        ck_assert_int_ge(asprintf(&p, "%s/proc/sys/kernel/random/boot_id", root), 0);
        f = fopen(p, "we");
        ck_assert_ptr_nonnull(f);
        fprintf(f, "%s\n", id);
        ck_assert_int_eq(fclose(f), 0);
}

static void root_setup(void) {
        char *cmd;

        strcpy(root, "/tmp/test-health-gpu.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(root));
        ck_assert_int_ge(asprintf(&cmd, "mkdir -p '%s/proc/sys/kernel/random'", root), 0);
        ck_assert_int_eq(system(cmd), 0);
        free(cmd);
        set_boot("11111111-1111-1111-1111-111111111111");
}

static void root_teardown(void) {
        char *cmd;

        ck_assert_int_ge(asprintf(&cmd, "rm -rf '%s'", root), 0);
        ck_assert_int_eq(system(cmd), 0);
        free(cmd);
}

#define UUID(n) "GPU-0000000" #n "-1111-2222-3333-444444444444"
#define BOOT1 "11111111-1111-1111-1111-111111111111"

/* A fact as gres publishes it: @n GPUs at 0000:1n:00.0, each with @recovery
 * (-1: none reported), read at @read; events are added with ev(). */
static json_object *fact(unsigned n, int recovery, uint64_t read) {
        json_object *f = json_object_new_object(), *gpus = json_object_new_array();

        for (unsigned i = 0; i < n; i++) {
                json_object *g = json_object_new_object();
                char bus[32], uuid[64];

                snprintf(bus, sizeof(bus), "0000:1%u:00.0", i);
                snprintf(uuid, sizeof(uuid), "GPU-0000000%u-1111-2222-3333-444444444444", i);
                json_object_object_add(g, "uuid", json_object_new_string(uuid));
                json_object_object_add(g, "bus_id", json_object_new_string(bus));
                json_object_object_add(g, "type", json_object_new_string("h100"));
                if (recovery >= 0)
                        json_object_object_add(g, "recovery_action", json_object_new_int(recovery));
                json_object_array_add(gpus, g);
        }
        json_object_object_add(f, "found", json_object_new_int64(n));
        json_object_object_add(f, "expected", json_object_new_int64(n));
        json_object_object_add(f, "check", json_object_new_boolean(true));
        json_object_object_add(f, "gpus", gpus);
        json_object_object_add(f, "missing", json_object_new_array());
        json_object_object_add(f, "read_usec", json_object_new_int64((int64_t) read));
        json_object_object_add(f, "boot_id", json_object_new_string(BOOT1));
        json_object_object_add(f, "xid_events", json_object_new_array());
        json_object_object_add(f, "xid_seq", json_object_new_int64(0));
        return f;
}

/* An entry of the fact's XID log, folding @count events numbered from @seq. */
static void ev(json_object *f, uint64_t seq, uint64_t count, unsigned xid, unsigned gpu, uint64_t t,
               const char *boot) {
        json_object *e = json_object_new_object(), *list = json_object_object_get(f, "xid_events");
        char bus[16];

        snprintf(bus, sizeof(bus), "0000:1%u:00.0", gpu);
        json_object_object_add(e, "seq", json_object_new_int64((int64_t) seq));
        json_object_object_add(e, "last_seq", json_object_new_int64((int64_t) (seq + count - 1)));
        json_object_object_add(e, "count", json_object_new_int64((int64_t) count));
        json_object_object_add(e, "xid", json_object_new_int64(xid));
        json_object_object_add(e, "bus_id", json_object_new_string(bus));
        json_object_object_add(e, "time_usec", json_object_new_int64((int64_t) t));
        json_object_object_add(e, "last_usec", json_object_new_int64((int64_t) t));
        json_object_object_add(e, "source", json_object_new_string("kmsg"));
        if (boot)
                json_object_object_add(e, "boot_id", json_object_new_string(boot));
        json_object_array_add(list, e);
        json_object_object_add(f, "xid_seq", json_object_new_int64((int64_t) (seq + count - 1)));
}

/* The fact's entry @seq, changed to hold @count events (a storm growing). */
static void grow(json_object *f, uint64_t seq, uint64_t count, uint64_t last) {
        json_object *list = json_object_object_get(f, "xid_events");

        for (size_t i = 0; i < json_object_array_length(list); i++) {
                json_object *e = json_object_array_get_idx(list, i);
                if ((uint64_t) json_object_get_int64(json_object_object_get(e, "seq")) != seq)
                        continue;
                json_object_object_add(e, "count", json_object_new_int64((int64_t) count));
                json_object_object_add(e, "last_usec", json_object_new_int64((int64_t) last));
        }
}

static HealthGpu *judge_new(const char *policy_yaml) {
        HealthXidPolicy p;
        HealthGpu *g;
        char *e;

        if (policy_yaml)
                ck_assert_msg(parse(policy_yaml, &p, &e) == 0, "%s", e);
        else
                health_xid_policy_defaults(&p);
        ck_assert_int_eq(health_gpu_new(&p, root, &g), 0);
        return g;
}

static HealthResult judge(HealthGpu *g, json_object *f, uint64_t now) {
        HealthResult r;

        ck_assert_int_eq(health_gpu_judge(g, f, now, &r), (int) r.status);
        return r;
}

#define ck_result(r, st, c, d)                                                                              \
        do {                                                                                                \
                HealthResult _r = (r);                                                                      \
                ck_assert_int_eq(_r.status, (st));                                                          \
                ck_assert_str_eq(_r.code, (c));                                                             \
                ck_assert_str_eq(_r.detail, (d));                                                           \
        } while (0)

START_TEST(test_judge_unknown) {
        _cleanup_(health_gpu_freep) HealthGpu *g = judge_new(NULL);
        json_object *f = json_tokener_parse("{\"found\": 8}");

        ck_assert_int_eq(judge(g, NULL, T0).status, HEALTH_UNKNOWN);
        ck_assert_str_eq(judge(g, NULL, T0).code, "gpu-unknown");
        ck_assert_int_eq(judge(g, f, T0).status, HEALTH_UNKNOWN);
        json_object_put(f);
        f = json_tokener_parse("[1]");
        ck_assert_int_eq(judge(g, f, T0).status, HEALTH_UNKNOWN);
        json_object_put(f);
}
END_TEST

/* XID 79 drains until a reboot, named as the reason says it; a reboot ends
 * it; the event is not counted again after it. */
START_TEST(test_judge_79_reboot) {
        _cleanup_(health_gpu_freep) HealthGpu *g = judge_new(NULL);
        json_object *f = fact(8, -1, T0 - 60 * SEC);

        ck_result(judge(g, f, T0), HEALTH_PASS, "gpu-ok", "8 GPU(s), no fault held");
        ev(f, 1, 1, 79, 0, T0 + SEC, BOOT1);
        ck_result(judge(g, f, T0 + 2 * SEC), HEALTH_FAIL, "gpu-xid",
                  "XID 79 on " UUID(0) " (pci 0000:10:00.0)");
        ck_assert_int_eq(judge(g, f, T0 + 2 * SEC).remedy, HEALTH_REMEDY_REBOOT);
        /* the GPU is gone at the next discovery: the XID is still the reason */
        json_object_put(f);
        f = fact(7, -1, T0 + 3 * SEC);
        json_object_object_add(f, "expected", json_object_new_int64(8));
        ev(f, 1, 1, 79, 0, T0 + SEC, BOOT1);
        ck_result(judge(g, f, T0 + 4 * SEC), HEALTH_FAIL, "gpu-xid",
                  "XID 79 on " UUID(0) " (pci 0000:10:00.0); and 1 more");
        /* back (a reset) is not enough for 79 */
        json_object_put(f);
        f = fact(8, -1, T0 + 5 * SEC);
        ev(f, 1, 1, 79, 0, T0 + SEC, BOOT1);
        ck_assert_int_eq(judge(g, f, T0 + 6 * SEC).status, HEALTH_FAIL);
        /* a reboot: a new boot id */
        set_boot("22222222-2222-2222-2222-222222222222");
        ck_result(judge(g, f, T0 + 7 * SEC), HEALTH_PASS, "gpu-ok", "8 GPU(s), no fault held");
        ck_assert_int_eq(judge(g, f, T0 + 7 * SEC).remedy, HEALTH_REMEDY_NONE);
        /* the event of the last boot, shown again, holds nothing */
        ck_assert_int_eq(judge(g, f, T0 + 8 * SEC).status, HEALTH_PASS);
        json_object_put(f);
}
END_TEST

/* An event of an earlier boot, seen first now (health was not running),
 * holds nothing; one without a boot id is taken as this boot's. */
START_TEST(test_judge_other_boot) {
        _cleanup_(health_gpu_freep) HealthGpu *g = judge_new(NULL);
        json_object *f = fact(8, -1, T0);

        ev(f, 1, 1, 79, 0, T0 - 3600 * SEC, "00000000-0000-0000-0000-000000000000");
        ck_assert_int_eq(judge(g, f, T0).status, HEALTH_PASS);
        ev(f, 2, 1, 95, 1, T0 - 10 * SEC, NULL);
        ck_result(judge(g, f, T0), HEALTH_FAIL, "gpu-xid", "XID 95 on " UUID(1) " (pci 0000:11:00.0)");
        ck_assert_int_eq(judge(g, f, T0).remedy, HEALTH_REMEDY_RESET_GPU); /* the catalogue's reset */
        json_object_put(f);
}
END_TEST

/* A reset-class XID: NVML's recovery action decides where reported: reset
 * fails (gpu-recovery) whatever the XIDs; none read after the event ends
 * the hold; none read before it does not. */
START_TEST(test_judge_nvml_decides) {
        _cleanup_(health_gpu_freep) HealthGpu *g = judge_new(NULL);
        json_object *f = fact(8, 0, T0);

        ev(f, 1, 1, 95, 2, T0 + 10 * SEC, BOOT1);
        /* NVML's none, read before the XID: the XID holds */
        ck_result(judge(g, f, T0 + 11 * SEC), HEALTH_FAIL, "gpu-xid",
                  "XID 95 on " UUID(2) " (pci 0000:12:00.0)");
        json_object_put(f);
        /* read after it: NVML says reset */
        f = fact(8, 0, T0 + 12 * SEC);
        json_object_object_add(json_object_array_get_idx(json_object_object_get(f, "gpus"), 2),
                               "recovery_action", json_object_new_int(1));
        ev(f, 1, 1, 95, 2, T0 + 10 * SEC, BOOT1);
        ck_result(judge(g, f, T0 + 13 * SEC), HEALTH_FAIL, "gpu-xid",
                  "XID 95 on " UUID(2) " (pci 0000:12:00.0); and 1 more");
        /* a reset done: NVML says none, read after the event */
        json_object_put(f);
        f = fact(8, 0, T0 + 20 * SEC);
        ev(f, 1, 1, 95, 2, T0 + 10 * SEC, BOOT1);
        ck_result(judge(g, f, T0 + 21 * SEC), HEALTH_PASS, "gpu-ok", "8 GPU(s), no fault held");
        json_object_put(f);

        /* NVML's recovery action alone fails the node: reboot */
        f = fact(8, 0, T0 + 30 * SEC);
        json_object_object_add(json_object_array_get_idx(json_object_object_get(f, "gpus"), 5),
                               "recovery_action", json_object_new_int(2));
        ck_result(judge(g, f, T0 + 31 * SEC), HEALTH_FAIL, "gpu-recovery",
                  UUID(5) " (pci 0000:15:00.0) needs a node reboot (NVML recovery action 2)");
        ck_assert_int_eq(judge(g, f, T0 + 31 * SEC).remedy, HEALTH_REMEDY_REBOOT);
        /* NVML's actions, each as the vocabulary says it */
        for (int a = 1; a <= 5; a++) {
                static const HealthRemedy want[] = {
                        HEALTH_REMEDY_NONE,      HEALTH_REMEDY_RESET_GPU,
                        HEALTH_REMEDY_REBOOT,    HEALTH_REMEDY_CONTACT_SUPPORT,
                        HEALTH_REMEDY_RESET_GPU, HEALTH_REMEDY_CONTACT_SUPPORT
                };

                json_object_object_add(json_object_array_get_idx(json_object_object_get(f, "gpus"), 5),
                                       "recovery_action", json_object_new_int(a));
                ck_assert_str_eq(judge(g, f, T0 + 32 * SEC).code, "gpu-recovery");
                ck_assert_int_eq(judge(g, f, T0 + 32 * SEC).remedy, want[a]);
        }
        json_object_put(f);
}
END_TEST

/* Without a recovery action (an older driver, /proc): a reset is the GPU
 * missing from a discovery after the event and back in a later one. */
START_TEST(test_judge_reset_by_return) {
        _cleanup_(health_gpu_freep) HealthGpu *g = judge_new(NULL);
        json_object *f = fact(8, -1, T0);

        ev(f, 1, 1, 119, 3, T0 + SEC, BOOT1);
        ck_assert_int_eq(judge(g, f, T0 + 2 * SEC).status, HEALTH_FAIL);
        /* the same discovery, shown again with a later event of another GPU */
        ev(f, 2, 1, 13, 4, T0 + 3 * SEC, BOOT1);
        ck_result(judge(g, f, T0 + 4 * SEC), HEALTH_FAIL, "gpu-xid",
                  "XID 119 on " UUID(3) " (pci 0000:13:00.0)");
        json_object_put(f);
        /* the GPU missing (a reset under way), then back */
        f = fact(3, -1, T0 + 10 * SEC);
        json_object_object_add(f, "expected", json_object_new_int64(8));
        ck_assert_str_eq(judge(g, f, T0 + 11 * SEC).code, "gpu-xid");
        json_object_put(f);
        f = fact(8, -1, T0 + 20 * SEC);
        ev(f, 1, 1, 119, 3, T0 + SEC, BOOT1);
        ck_result(judge(g, f, T0 + 21 * SEC), HEALTH_PASS, "gpu-ok", "8 GPU(s), no fault held");
        json_object_put(f);
}
END_TEST

/* Fewer GPUs than expected, or than this boot has seen (gres restarted and
 * forgot): gpu-count, naming the missing one. */
START_TEST(test_judge_count) {
        _cleanup_(health_gpu_freep) HealthGpu *g = judge_new(NULL);
        json_object *f = fact(8, -1, T0), *m;

        ck_assert_int_eq(judge(g, f, T0).status, HEALTH_PASS);
        json_object_put(f);
        f = fact(7, -1, T0 + SEC);
        json_object_object_add(f, "expected", json_object_new_int64(8));
        m = json_object_new_object();
        json_object_object_add(m, "uuid", json_object_new_string(UUID(7)));
        json_object_object_add(m, "bus_id", json_object_new_string("0000:17:00.0"));
        json_object_array_add(json_object_object_get(f, "missing"), m);
        ck_result(judge(g, f, T0 + 2 * SEC), HEALTH_FAIL, "gpu-count",
                  "7 of 8 GPUs found; " UUID(7) " (pci 0000:17:00.0) is missing");
        ck_assert_int_eq(judge(g, f, T0 + 2 * SEC).remedy, HEALTH_REMEDY_REBOOT);
        json_object_put(f);
        f = fact(7, -1, T0 + 3 * SEC); /* gres restarted: it expects what it finds */
        ck_result(judge(g, f, T0 + 4 * SEC), HEALTH_FAIL, "gpu-count", "7 of 8 GPUs found");
        /* a reboot forgets the old count: the node is what it is now */
        set_boot("33333333-3333-3333-3333-333333333333");
        ck_assert_int_eq(judge(g, f, T0 + 5 * SEC).status, HEALTH_PASS);
        json_object_put(f);
}
END_TEST

/* An event counts once: an entry seen again, or whose count grows (a
 * storm folded in), counts only its new events; ignored XIDs never drain,
 * however many. */
START_TEST(test_judge_storm) {
        _cleanup_(health_gpu_freep) HealthGpu *g =
                judge_new("    xid_policy:\n      overrides:\n        - { xid: 31, count: 1000, window: 1h, "
                          "action: drain }\n"
                          "        - { xid: 62, count: 3, window: 10m, action: reset }\n");
        json_object *f = fact(8, -1, T0);
        _cleanup_json_ json_object *state = NULL;
        uint64_t seq = 1;

        /* 100,000 XID 45 in one second: the default ignores them */
        ev(f, seq, 100000, 45, 0, T0, BOOT1);
        seq += 100000;
        ck_assert_int_eq(judge(g, f, T0 + SEC).status, HEALTH_PASS);
        /* XID 31: 999 in the hour pass, the thousandth drains */
        ev(f, seq, 999, 31, 1, T0 + SEC, BOOT1);
        ck_assert_int_eq(judge(g, f, T0 + 2 * SEC).status, HEALTH_PASS);
        ck_assert_int_eq(judge(g, f, T0 + 3 * SEC).status, HEALTH_PASS); /* the same entry again: no more */
        grow(f, seq, 1000, T0 + 4 * SEC);
        ck_result(judge(g, f, T0 + 5 * SEC), HEALTH_FAIL, "gpu-xid",
                  "XID 31 on " UUID(1) " (pci 0000:11:00.0), 1000 times within 3600s");
        ck_assert_int_eq(judge(g, f, T0 + 5 * SEC).remedy, HEALTH_REMEDY_CONTACT_SUPPORT); /* a drain rule */
        /* an hour later they have left the window */
        ck_assert_int_eq(judge(g, f, T0 + 3700 * SEC).status, HEALTH_PASS);
        /* the judge's memory of the storm stays bounded */
        state = health_gpu_state_to_json(g);
        ck_assert_uint_le(json_object_array_length(json_object_object_get(state, "seen")), 2);
        ck_assert_uint_le(json_object_array_length(json_object_object_get(state, "hits")), 1);

        /* XID 62, three times in ten minutes: held until a reset */
        seq += 1000;
        ev(f, seq, 2, 62, 2, T0 + 3800 * SEC, BOOT1);
        ck_assert_int_eq(judge(g, f, T0 + 3801 * SEC).status, HEALTH_PASS);
        ev(f, seq + 2, 1, 62, 2, T0 + 3900 * SEC, BOOT1);
        ck_result(judge(g, f, T0 + 3901 * SEC), HEALTH_FAIL, "gpu-xid",
                  "XID 62 on " UUID(2) " (pci 0000:12:00.0)");
        /* and held past its window */
        ck_assert_int_eq(judge(g, f, T0 + 9000 * SEC).status, HEALTH_FAIL);
        json_object_put(f);
}
END_TEST

/* Thousands of distinct entries (a hostile or broken fact) leave the
 * judge's tables within their room. */
START_TEST(test_judge_bounded) {
        _cleanup_(health_gpu_freep) HealthGpu *g =
                judge_new("    xid_policy:\n      overrides:\n        - { xid: 31, count: 100000, window: "
                          "1d, action: drain }\n");
        json_object *f = fact(8, -1, T0);
        _cleanup_json_ json_object *state = NULL;

        for (unsigned i = 0; i < 5000; i++)
                ev(f, 1 + i, 1, i % 2 ? 31 : 95 + i, i % 8, T0 + i * 120 * SEC, BOOT1);
        ck_assert_int_eq(judge(g, f, T0 + 5000 * 120 * SEC).status, HEALTH_FAIL);
        state = health_gpu_state_to_json(g);
        ck_assert_uint_le(json_object_array_length(json_object_object_get(state, "seen")), 256);
        ck_assert_uint_le(json_object_array_length(json_object_object_get(state, "hits")), 256);
        ck_assert_uint_le(json_object_array_length(json_object_object_get(state, "holds")), 64);
        json_object_put(f);
}
END_TEST

/* A policy reloaded without the rule that made a hold ends it. */
START_TEST(test_judge_policy_change) {
        _cleanup_(health_gpu_freep) HealthGpu *g = judge_new(NULL);
        json_object *f = fact(8, -1, T0);
        HealthXidPolicy p;
        char *e;

        ev(f, 1, 1, 79, 0, T0, BOOT1);
        ck_assert_int_eq(judge(g, f, T0 + SEC).status, HEALTH_FAIL);
        ck_assert_int_eq(
                parse("    xid_policy:\n      overrides:\n        - { xid: 79, action: ignore }\n", &p, &e),
                0);
        health_gpu_set_policy(g, &p);
        ck_assert_int_eq(judge(g, f, T0 + 2 * SEC).status, HEALTH_PASS);
        json_object_put(f);
}
END_TEST

/* What the module keeps across a restart: a fault held stays held, an
 * event judged is not counted again. */
START_TEST(test_state_roundtrip) {
        _cleanup_(health_gpu_freep) HealthGpu *g =
                judge_new("    xid_policy:\n      overrides:\n        - { xid: 31, count: 3, window: 1h, "
                          "action: drain }\n");
        _cleanup_(health_gpu_freep) HealthGpu *h =
                judge_new("    xid_policy:\n      overrides:\n        - { xid: 31, count: 3, window: 1h, "
                          "action: drain }\n");
        json_object *f = fact(8, -1, T0);
        _cleanup_json_ json_object *state = NULL, *kept = NULL;

        ev(f, 1, 1, 79, 0, T0, BOOT1);
        ev(f, 2, 2, 31, 1, T0, BOOT1);
        ck_assert_int_eq(judge(g, f, T0 + SEC).status, HEALTH_FAIL);
        /* through its text, as the module keeps it */
        kept = health_gpu_state_to_json(g);
        state = json_tokener_parse(json_object_to_json_string(kept));
        ck_assert_int_eq(health_gpu_state_from_json(h, state), 0);
        /* the same fact again: 31 is still at two, 79 still held */
        ck_result(judge(h, f, T0 + 2 * SEC), HEALTH_FAIL, "gpu-xid",
                  "XID 79 on " UUID(0) " (pci 0000:10:00.0)");
        grow(f, 2, 3, T0 + 3 * SEC);
        ck_result(judge(h, f, T0 + 4 * SEC), HEALTH_FAIL, "gpu-xid",
                  "XID 79 on " UUID(0) " (pci 0000:10:00.0); and 1 more");
        json_object_put(f);
}
END_TEST

START_TEST(test_state_hostile) {
        static const char *const bad[] = {
                "[]",
                "{}",
                "{\"boot_id\": 1}",
                "{\"boot_id\": \"a b\", \"floor\": 0, \"last_seq\": 0, \"max_found\": 0, \"seen\": [], "
                "\"holds\": [], \"hits\": [], \"gpus\": []}",
                "{\"boot_id\": \"b\", \"floor\": -1, \"last_seq\": 0, \"max_found\": 0, \"seen\": [], "
                "\"holds\": [], \"hits\": [], \"gpus\": []}",
                "{\"boot_id\": \"b\", \"floor\": 0, \"last_seq\": 0, \"max_found\": 99999, \"seen\": [], "
                "\"holds\": [], \"hits\": [], \"gpus\": []}",
                "{\"boot_id\": \"b\", \"floor\": 5, \"last_seq\": 0, \"max_found\": 0, \"seen\": [[1, 1]], "
                "\"holds\": [], \"hits\": [], \"gpus\": []}",
                "{\"boot_id\": \"b\", \"floor\": 0, \"last_seq\": 0, \"max_found\": 0, \"seen\": [[0, 1]], "
                "\"holds\": [], \"hits\": [], \"gpus\": []}",
                "{\"boot_id\": \"b\", \"floor\": 0, \"last_seq\": 0, \"max_found\": 0, \"seen\": [[1]], "
                "\"holds\": [], \"hits\": [], \"gpus\": []}",
                "{\"boot_id\": \"b\", \"floor\": 0, \"last_seq\": 0, \"max_found\": 0, \"seen\": [], "
                "\"holds\": [{\"bus_id\": \"../x y\", \"uuid\": \"\", \"xid\": 79, \"since_usec\": 1}], "
                "\"hits\": [], \"gpus\": []}",
                "{\"boot_id\": \"b\", \"floor\": 0, \"last_seq\": 0, \"max_found\": 0, \"seen\": [], "
                "\"holds\": [{\"bus_id\": \"0000:10:00.0\", \"uuid\": \"\", \"xid\": 4294967296, "
                "\"since_usec\": 1}], \"hits\": [], \"gpus\": []}",
                "{\"boot_id\": \"b\", \"floor\": 0, \"last_seq\": 0, \"max_found\": 0, \"seen\": [], "
                "\"holds\": [], \"hits\": [{\"bus_id\": \"0000:10:00.0\", \"xid\": 31, \"time_usec\": 1, "
                "\"count\": 0}], \"gpus\": []}",
                "{\"boot_id\": \"b\", \"floor\": 0, \"last_seq\": 0, \"max_found\": 0, \"seen\": [], "
                "\"holds\": [], \"hits\": [], \"gpus\": [{\"bus_id\": \"0000:10:00.0\"}]}",
                "{\"boot_id\": \"b\", \"floor\": 0, \"last_seq\": 0, \"max_found\": 0, \"seen\": {}, "
                "\"holds\": [], \"hits\": [], \"gpus\": []}",
        };
        _cleanup_(health_gpu_freep) HealthGpu *g = judge_new(NULL);
        json_object *f = fact(8, -1, T0);

        ev(f, 1, 1, 79, 0, T0, BOOT1);
        ck_assert_int_eq(judge(g, f, T0 + SEC).status, HEALTH_FAIL);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                json_object *o = json_tokener_parse(bad[i]);
                ck_assert_msg(o, "%s", bad[i]);
                ck_assert_msg(health_gpu_state_from_json(g, o) == -EBADMSG, "accepted: %s", bad[i]);
                json_object_put(o);
        }
        /* ... and what it held, it holds */
        ck_assert_int_eq(judge(g, f, T0 + 2 * SEC).status, HEALTH_FAIL);
        {
                /* more than the room: refused, not cut */
                json_object *o = health_gpu_state_to_json(g), *seen = json_object_new_array();
                for (unsigned i = 0; i < 300; i++) {
                        json_object *p = json_object_new_array();
                        json_object_array_add(p, json_object_new_int64(1 + i));
                        json_object_array_add(p, json_object_new_int64(1));
                        json_object_array_add(seen, p);
                }
                json_object_object_add(o, "seen", seen);
                ck_assert_int_eq(health_gpu_state_from_json(g, o), -EBADMSG);
                json_object_put(o);
        }
        json_object_put(f);
}
END_TEST

/* Fact entries that are not what gres writes are passed over. */
START_TEST(test_judge_bad_entries) {
        _cleanup_(health_gpu_freep) HealthGpu *g = judge_new(NULL);
        json_object *f = fact(8, -1, T0), *list = json_object_object_get(f, "xid_events");
        static const char *const bad[] = {
                "{\"seq\": 0, \"count\": 1, \"xid\": 79, \"bus_id\": \"0000:10:00.0\", \"time_usec\": 1}",
                "{\"seq\": 1, \"count\": 0, \"xid\": 79, \"bus_id\": \"0000:10:00.0\", \"time_usec\": 1}",
                "{\"seq\": 1, \"count\": 1, \"xid\": \"79\", \"bus_id\": \"0000:10:00.0\", \"time_usec\": "
                "1}",
                "{\"seq\": 1, \"count\": 1, \"xid\": 79, \"time_usec\": 1}",
                "{\"seq\": 1, \"count\": 1, \"xid\": 79, \"bus_id\": \"0000:10:00.0000000000000000\", "
                "\"time_usec\": 1}",
                "{\"seq\": 1, \"count\": 1, \"xid\": 79, \"bus_id\": \"0000:10:00.0\"}",
                "7",
        };

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                json_object_array_add(list, json_tokener_parse(bad[i]));
        ck_assert_int_eq(judge(g, f, T0 + SEC).status, HEALTH_PASS);
        json_object_put(f);
}
END_TEST

/* ---- The memory policy ------------------------------------------------------ */

/* Parses "memory_policy: ..." in @yaml. */
static int parse_memory(const char *yaml, HealthGpuMemoryPolicy *p, char **e) {
        ConfTree *t;
        int r = health_gpu_memory_policy_parse(&host_api, health_key(yaml, "memory_policy", &t, e), p, e);

        conf_tree_free(t);
        return r;
}

START_TEST(test_memory_policy) {
        static const struct {
                const char *yaml, *error;
        } bad[] = {
                { "    memory_policy: drain\n",
                  "sunkd.yaml:3:5: key 'memory_policy': a mapping of counters" },
                { "    memory_policy: [1]\n", "sunkd.yaml:3:5: key 'memory_policy': a mapping of counters" },
                { "    memory_policy:\n      remap_failures: { action: drain }\n",
                  "sunkd.yaml:4:7: key 'memory_policy': unknown counter 'remap_failures'" },
                { "    memory_policy:\n      remap_failure: drain\n",
                  "sunkd.yaml:4:7: key 'memory_policy': remap_failure: a mapping with 'action' and "
                  "'threshold'" },
                { "    memory_policy:\n      remap_failure: { threshold: 2 }\n",
                  "sunkd.yaml:4:7: key 'action'" },
                { "    memory_policy:\n      remap_failure: { action: reset }\n",
                  "sunkd.yaml:4:24: key 'memory_policy': remap_failure: action 'reset': ignore or drain" },
                { "    memory_policy:\n      remap_failure: { action: drain, threshold: 0 }\n",
                  "sunkd.yaml:4:39: key 'threshold'" },
                { "    memory_policy:\n      remap_failure: { action: drain, colour: red }\n",
                  "sunkd.yaml:4:39: key 'colour'" },
        };
        HealthGpuMemoryPolicy p, keep;
        char *e;

        ck_assert_int_eq(parse_memory("    interval: 1m\n", &p, &e), 0);
        ck_assert_int_eq(p.rules[HEALTH_GPU_MEMORY_REMAP_FAILURE].action, HEALTH_GPU_MEMORY_DRAIN);
        ck_assert_int_eq(p.rules[HEALTH_GPU_MEMORY_REMAP_PENDING].action, HEALTH_GPU_MEMORY_DRAIN);
        ck_assert_int_eq(p.rules[HEALTH_GPU_MEMORY_RETIRED_PENDING].action, HEALTH_GPU_MEMORY_DRAIN);
        ck_assert_int_eq(p.rules[HEALTH_GPU_MEMORY_ECC_VOLATILE].action, HEALTH_GPU_MEMORY_DRAIN);
        ck_assert_int_eq(p.rules[HEALTH_GPU_MEMORY_ECC_VOLATILE].threshold, 1);
        ck_assert_int_eq(p.rules[HEALTH_GPU_MEMORY_ECC_AGGREGATE].action, HEALTH_GPU_MEMORY_IGNORE);
        ck_assert_int_eq(p.rules[HEALTH_GPU_MEMORY_REMAPPED_UNCORRECTABLE].action, HEALTH_GPU_MEMORY_IGNORE);
        ck_assert_int_eq(parse_memory("    memory_policy:\n", &p, &e), 0);
        ck_assert_int_eq(parse_memory("    memory_policy:\n"
                                      "      remapped_rows_uncorrectable: { action: drain, threshold: 8 }\n"
                                      "      ecc_uncorrected_volatile:\n"
                                      "        action: ignore\n",
                                      &p, &e),
                         0);
        ck_assert_int_eq(p.rules[HEALTH_GPU_MEMORY_REMAPPED_UNCORRECTABLE].action, HEALTH_GPU_MEMORY_DRAIN);
        ck_assert_int_eq(p.rules[HEALTH_GPU_MEMORY_REMAPPED_UNCORRECTABLE].threshold, 8);
        ck_assert_int_eq(p.rules[HEALTH_GPU_MEMORY_ECC_VOLATILE].action, HEALTH_GPU_MEMORY_IGNORE);
        ck_assert_int_eq(p.rules[HEALTH_GPU_MEMORY_REMAP_FAILURE].action, HEALTH_GPU_MEMORY_DRAIN);

        keep = p;
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                ck_assert_msg(parse_memory(bad[i].yaml, &p, &e) == -EINVAL, "accepted: %s", bad[i].yaml);
                ck_assert_msg(e && strncmp(e, bad[i].error, strlen(bad[i].error)) == 0,
                              "%s: got '%s', expected '%s...'", bad[i].yaml, e, bad[i].error);
                ck_assert(memcmp(&p, &keep, sizeof(p)) == 0);
                free(e);
        }
}
END_TEST

/* GPU @i of @f with a memory counter @key at @v. */
static void counter(json_object *f, unsigned i, const char *key, int64_t v) {
        json_object *g = json_object_array_get_idx(json_object_object_get(f, "gpus"), i), *h;

        if (!json_object_object_get_ex(g, "health", &h)) {
                h = json_object_new_object();
                json_object_object_add(g, "health", h);
        }
        json_object_object_add(h, key, json_object_new_int64(v));
}

/* gres observes the counters; the judge fails the GPU by the policy, and
 * only while the counters say so. */
START_TEST(test_judge_memory) {
        _cleanup_(health_gpu_freep) HealthGpu *g = judge_new(NULL);
        HealthGpuMemoryPolicy p;
        json_object *f = fact(4, 0, T0);
        char *e;

        counter(f, 1, "ecc_uncorrected_aggregate", 5);
        counter(f, 1, "remapped_rows_uncorrectable", 3);
        counter(f, 1, "remap_failure", 0);
        ck_result(judge(g, f, T0 + SEC), HEALTH_PASS, "gpu-ok", "4 GPU(s), no fault held");
        counter(f, 3, "remap_failure", 1);
        ck_result(judge(g, f, T0 + 2 * SEC), HEALTH_FAIL, "gpu-memory",
                  UUID(3) " (pci 0000:13:00.0): a row remapping failed, the GPU needs service "
                          "(remap_failure 1)");
        ck_assert_int_eq(judge(g, f, T0 + 2 * SEC).remedy, HEALTH_REMEDY_REPLACE);
        counter(f, 1, "ecc_uncorrected_volatile", 2);
        ck_result(judge(g, f, T0 + 3 * SEC), HEALTH_FAIL, "gpu-memory",
                  UUID(1) " (pci 0000:11:00.0): uncorrectable ECC errors since the driver loaded "
                          "(ecc_uncorrected_volatile 2); and 1 more");
        ck_assert_int_eq(judge(g, f, T0 + 3 * SEC).remedy, HEALTH_REMEDY_RESET_GPU);
        /* a MIG instance carries its GPU's counters: weighed once */
        json_object_array_add(json_object_object_get(f, "gpus"),
                              json_tokener_parse("{\"uuid\": \"MIG-x\", \"bus_id\": \"0000:13:00.0\", "
                                                 "\"health\": {\"remap_failure\": 1}}"));
        ck_assert_str_eq(judge(g, f, T0 + 4 * SEC).detail,
                         UUID(1) " (pci 0000:11:00.0): uncorrectable ECC errors since the driver loaded "
                                 "(ecc_uncorrected_volatile 2); and 1 more");
        json_object_put(f);

        /* the site's policy: ECC ignored, remapped rows drain from 8 */
        ck_assert_int_eq(parse_memory("    memory_policy:\n"
                                      "      ecc_uncorrected_volatile: { action: ignore }\n"
                                      "      remapped_rows_uncorrectable: { action: drain, threshold: 8 }\n",
                                      &p, &e),
                         0);
        health_gpu_set_memory_policy(g, &p);
        f = fact(4, 0, T0 + 10 * SEC);
        counter(f, 1, "ecc_uncorrected_volatile", 2);
        counter(f, 2, "remapped_rows_uncorrectable", 7);
        ck_result(judge(g, f, T0 + 11 * SEC), HEALTH_PASS, "gpu-ok", "4 GPU(s), no fault held");
        counter(f, 2, "remapped_rows_uncorrectable", 8);
        ck_result(judge(g, f, T0 + 12 * SEC), HEALTH_FAIL, "gpu-memory",
                  UUID(2) " (pci 0000:12:00.0): rows remapped for uncorrectable errors "
                          "(remapped_rows_uncorrectable 8)");
        json_object_put(f);
        /* the board replaced, the counters clean: it passes again */
        f = fact(4, 0, T0 + 20 * SEC);
        ck_result(judge(g, f, T0 + 21 * SEC), HEALTH_PASS, "gpu-ok", "4 GPU(s), no fault held");
        json_object_put(f);
}
END_TEST

/* ---- The check's limits on a GPU's telemetry ---------------------------------- */

static json_object *telemetry_of(json_object *f, unsigned i) {
        json_object *g = json_object_array_get_idx(json_object_object_get(f, "gpus"), i), *t;

        if (!json_object_object_get_ex(g, "telemetry", &t)) {
                t = json_object_new_object();
                json_object_object_add(g, "telemetry", t);
        }
        return t;
}

/* GPU @i's telemetry field @key at @v (a JSON text: "91", "\"hot\"", "-1"). */
static void tel(json_object *f, unsigned i, const char *key, const char *v) {
        json_object_object_add(telemetry_of(f, i), key, json_tokener_parse(v));
}

/* GPU @i's NVLinks, as gres lists them: each "up replay recovery crc_flit
 * crc_data" ("1 0 0 0 0"; "-" leaves a field out). */
static void links(json_object *f, unsigned i, const char *const *l, size_t n) {
        json_object *a = json_object_new_array();
        static const char *const keys[] = { "up", "replay_errors", "recovery_errors", "crc_flit_errors",
                                            "crc_data_errors" };

        for (size_t k = 0; k < n; k++) {
                json_object *o = json_object_new_object();
                char buf[128], *save = NULL, *tok;
                size_t j = 0;

                snprintf(buf, sizeof(buf), "%s", l[k]);
                json_object_object_add(o, "link", json_object_new_int64((int64_t) k));
                for (tok = strtok_r(buf, " ", &save); tok && j < 5; tok = strtok_r(NULL, " ", &save), j++)
                        if (!streq(tok, "-"))
                                json_object_object_add(o, keys[j],
                                                       j == 0 ? json_object_new_boolean(streq(tok, "1"))
                                                              : json_tokener_parse(tok));
                json_object_array_add(a, o);
        }
        json_object_object_add(telemetry_of(f, i), "links", a);
}

static HealthGpuLimits limits(void) {
        HealthGpuLimits l;

        health_gpu_limits_none(&l);
        return l;
}

/* Without limits nothing of the telemetry is judged: a hot, throttled GPU
 * with an NVLink down passes, as before the limits were. */
START_TEST(test_judge_limits_off) {
        _cleanup_(health_gpu_freep) HealthGpu *g = judge_new(NULL);
        static const char *const l[] = { "1 0 0 0 0", "0 9 9 9 9" };
        json_object *f = fact(2, 0, T0);

        tel(f, 1, "temperature", "99");
        tel(f, 1, "clocks_event_reasons", "200");
        tel(f, 1, "persistence_mode", "0");
        tel(f, 1, "power_limit_mw", "100000");
        links(f, 1, l, 2);
        ck_result(judge(g, f, T0 + SEC), HEALTH_PASS, "gpu-ok", "2 GPU(s), no fault held");
        json_object_put(f);
}
END_TEST

START_TEST(test_judge_temperature) {
        _cleanup_(health_gpu_freep) HealthGpu *g = judge_new(NULL);
        HealthGpuLimits l = limits();
        json_object *f = fact(2, 0, T0);
        HealthResult r;

        l.max_temperature = 85;
        health_gpu_set_limits(g, &l);
        tel(f, 0, "temperature", "40");
        tel(f, 1, "temperature", "85");
        ck_result(judge(g, f, T0 + SEC), HEALTH_PASS, "gpu-ok", "2 GPU(s), no fault held");
        tel(f, 1, "temperature", "91");
        ck_result(judge(g, f, T0 + SEC), HEALTH_FAIL, "gpu-temperature",
                  UUID(1) " (pci 0000:11:00.0): 91 C, max 85");
        tel(f, 1, "temperature_slowdown", "87");
        tel(f, 1, "temperature_shutdown", "92");
        r = judge(g, f, T0 + SEC);
        ck_result(r, HEALTH_FAIL, "gpu-temperature",
                  UUID(1) " (pci 0000:11:00.0): 91 C, max 85 (slowdown at 87 C, shutdown at 92 C)");
        ck_assert_int_eq(r.remedy, HEALTH_REMEDY_CONTACT_SUPPORT);
        ck_assert_str_eq(r.target, "0000:11:00.0");
        /* the driver does not report it: unknown, not a pass */
        json_object_object_del(telemetry_of(f, 1), "temperature");
        ck_result(judge(g, f, T0 + SEC), HEALTH_UNKNOWN, "gpu-input-missing",
                  UUID(1) " (pci 0000:11:00.0): the driver does not report temperature (max_temperature)");
        /* ... nor when there is no telemetry at all (/proc discovery) */
        json_object_object_del(json_object_array_get_idx(json_object_object_get(f, "gpus"), 1), "telemetry");
        ck_assert_str_eq(judge(g, f, T0 + SEC).code, "gpu-input-missing");
        /* what is not a temperature */
        for (size_t i = 0; i < 5; i++) {
                static const char *const bad[] = { "-5", "\"91\"", "91.5", "9999999999999", "null" };

                tel(f, 1, "temperature", bad[i]);
                ck_result(judge(g, f, T0 + SEC), HEALTH_UNKNOWN, "gpu-input-bad",
                          UUID(1) " (pci 0000:11:00.0): temperature is not a count (max_temperature)");
        }
        /* a failure elsewhere outranks what is not known */
        tel(f, 0, "temperature", "86");
        ck_result(judge(g, f, T0 + SEC), HEALTH_FAIL, "gpu-temperature",
                  UUID(0) " (pci 0000:10:00.0): 86 C, max 85");
        json_object_put(f);
}
END_TEST

START_TEST(test_judge_clocks) {
        _cleanup_(health_gpu_freep) HealthGpu *g = judge_new(NULL);
        HealthGpuLimits l = limits();
        json_object *f = fact(2, 0, T0);
        HealthResult r;

        l.fail_clocks_events = health_gpu_clocks_event_bit("hw_slowdown") |
                               health_gpu_clocks_event_bit("hw_thermal_slowdown") |
                               health_gpu_clocks_event_bit("hw_power_brake_slowdown") |
                               health_gpu_clocks_event_bit("sw_power_cap");
        health_gpu_set_limits(g, &l);
        tel(f, 0, "clocks_event_reasons", "1"); /* idle: not failing */
        tel(f, 1, "clocks_event_reasons", "0");
        ck_result(judge(g, f, T0 + SEC), HEALTH_PASS, "gpu-ok", "2 GPU(s), no fault held");
        tel(f, 1, "clocks_event_reasons", "136"); /* 0x8 | 0x80 */
        r = judge(g, f, T0 + SEC);
        ck_result(r, HEALTH_FAIL, "gpu-clocks",
                  UUID(1) " (pci 0000:11:00.0): clocks held down by hw_slowdown, hw_power_brake_slowdown");
        ck_assert_int_eq(r.remedy, HEALTH_REMEDY_CONTACT_SUPPORT);
        /* a power cap someone set is a setting: a person, no repair */
        tel(f, 1, "clocks_event_reasons", "5");
        r = judge(g, f, T0 + SEC);
        ck_result(r, HEALTH_FAIL, "gpu-clocks",
                  UUID(1) " (pci 0000:11:00.0): clocks held down by sw_power_cap");
        ck_assert_int_eq(r.remedy, HEALTH_REMEDY_NONE);
        tel(f, 1, "clocks_event_reasons", "4294967296");
        ck_assert_str_eq(judge(g, f, T0 + SEC).code, "gpu-input-bad");
        json_object_object_del(telemetry_of(f, 1), "clocks_event_reasons");
        ck_result(judge(g, f, T0 + SEC), HEALTH_UNKNOWN, "gpu-input-missing",
                  UUID(1) " (pci 0000:11:00.0): the driver does not report clocks_event_reasons "
                          "(fail_clocks_events)");
        ck_assert_uint_eq(health_gpu_clocks_event_bit("hw_slowdown"), 0x8);
        ck_assert_uint_eq(health_gpu_clocks_event_bit("HW_SLOWDOWN"), 0);
        ck_assert_uint_eq(health_gpu_clocks_event_bit(NULL), 0);
        json_object_put(f);
}
END_TEST

START_TEST(test_judge_power_persistence) {
        _cleanup_(health_gpu_freep) HealthGpu *g = judge_new(NULL);
        HealthGpuLimits l = limits();
        json_object *f = fact(1, 0, T0);
        HealthResult r;

        l.min_power_limit = 700;
        l.persistence_mode = true;
        health_gpu_set_limits(g, &l);
        tel(f, 0, "power_limit_mw", "700000");
        tel(f, 0, "power_mw", "690000");
        tel(f, 0, "persistence_mode", "1");
        ck_result(judge(g, f, T0 + SEC), HEALTH_PASS, "gpu-ok", "1 GPU(s), no fault held");
        tel(f, 0, "persistence_mode", "0");
        r = judge(g, f, T0 + SEC);
        ck_result(r, HEALTH_FAIL, "gpu-persistence", UUID(0) " (pci 0000:10:00.0): persistence mode is off");
        ck_assert_int_eq(r.remedy, HEALTH_REMEDY_NONE);
        tel(f, 0, "persistence_mode", "2");
        ck_result(judge(g, f, T0 + SEC), HEALTH_UNKNOWN, "gpu-input-bad",
                  UUID(0) " (pci 0000:10:00.0): persistence_mode is not a count (persistence_mode)");
        tel(f, 0, "persistence_mode", "1");
        tel(f, 0, "power_limit_mw", "300000");
        r = judge(g, f, T0 + SEC);
        ck_result(r, HEALTH_FAIL, "gpu-power-limit",
                  UUID(0) " (pci 0000:10:00.0): power limit 300 W, min 700 W");
        ck_assert_int_eq(r.remedy, HEALTH_REMEDY_NONE);
        json_object_object_del(telemetry_of(f, 0), "power_limit_mw");
        ck_result(
                judge(g, f, T0 + SEC), HEALTH_UNKNOWN, "gpu-input-missing",
                UUID(0) " (pci 0000:10:00.0): the driver does not report power_limit_mw (min_power_limit)");
        json_object_put(f);
}
END_TEST

START_TEST(test_judge_nvlink) {
        _cleanup_(health_gpu_freep) HealthGpu *g = judge_new(NULL);
        HealthGpuLimits l = limits();
        static const char *const good[] = { "1 0 0 0 0", "1 3 0 10 0", "1 0 0 0 0" };
        static const char *const down[] = { "1 0 0 0 0", "0 0 0 0 0", "0 0 0 0 0" };
        static const char *const errs[] = { "1 0 0 0 0", "1 0 0 101 0" };
        static const char *const nostate[] = { "- 0 0 0 0" };
        static const char *const nocount[] = { "1 0 0 - 0" };
        static const char *const badcount[] = { "1 0 0 \"x\" 0" };
        json_object *f = fact(2, 0, T0);
        HealthResult r;

        l.nvlink_up = true;
        l.max_nvlink_errors[HEALTH_GPU_NVLINK_CRC_FLIT] = 100;
        health_gpu_set_limits(g, &l);
        /* GPU 0 has no NVLink (no links listed): nothing to judge there */
        links(f, 1, good, 3);
        ck_result(judge(g, f, T0 + SEC), HEALTH_PASS, "gpu-ok", "2 GPU(s), no fault held");
        links(f, 1, down, 3);
        r = judge(g, f, T0 + SEC);
        ck_result(r, HEALTH_FAIL, "gpu-nvlink-down",
                  UUID(1) " (pci 0000:11:00.0): NVLink 1 down (2 of 3 links down)");
        ck_assert_int_eq(r.remedy, HEALTH_REMEDY_REBOOT);
        ck_assert_str_eq(r.target, "0000:11:00.0");
        links(f, 1, errs, 2);
        r = judge(g, f, T0 + SEC);
        ck_result(r, HEALTH_FAIL, "gpu-nvlink-errors",
                  UUID(1) " (pci 0000:11:00.0): NVLink 1 crc_flit_errors 101, max 100");
        ck_assert_int_eq(r.remedy, HEALTH_REMEDY_CONTACT_SUPPORT);
        links(f, 1, nostate, 1);
        ck_result(judge(g, f, T0 + SEC), HEALTH_UNKNOWN, "gpu-input-missing",
                  UUID(1) " (pci 0000:11:00.0): the driver does not report NVLink 0's state (nvlink_up)");
        links(f, 1, nocount, 1);
        ck_result(judge(g, f, T0 + SEC), HEALTH_UNKNOWN, "gpu-input-missing",
                  UUID(1) " (pci 0000:11:00.0): the driver does not report NVLink 0's crc_flit_errors");
        links(f, 1, badcount, 1);
        ck_result(judge(g, f, T0 + SEC), HEALTH_UNKNOWN, "gpu-input-bad",
                  UUID(1) " (pci 0000:11:00.0): NVLink 0's crc_flit_errors is not a count");
        json_object_object_add(telemetry_of(f, 1), "links", json_object_new_string("all up"));
        ck_result(judge(g, f, T0 + SEC), HEALTH_UNKNOWN, "gpu-input-bad",
                  UUID(1) " (pci 0000:11:00.0): its NVLinks are not a list");
        /* only errors counted, not the state */
        l.nvlink_up = false;
        health_gpu_set_limits(g, &l);
        links(f, 1, down, 3);
        ck_result(judge(g, f, T0 + SEC), HEALTH_PASS, "gpu-ok", "2 GPU(s), no fault held");
        json_object_put(f);
}
END_TEST

/* A MIG instance carries its GPU's telemetry: weighed once, by bus id; a
 * telemetry that is not an object is unknown. */
START_TEST(test_judge_limits_mig) {
        _cleanup_(health_gpu_freep) HealthGpu *g = judge_new(NULL);
        HealthGpuLimits l = limits();
        json_object *f = fact(1, 0, T0);

        l.max_temperature = 80;
        health_gpu_set_limits(g, &l);
        tel(f, 0, "temperature", "70");
        json_object_array_add(json_object_object_get(f, "gpus"),
                              json_tokener_parse("{\"uuid\": \"MIG-x\", \"bus_id\": \"0000:10:00.0\", "
                                                 "\"telemetry\": {\"temperature\": 99}}"));
        ck_result(judge(g, f, T0 + SEC), HEALTH_PASS, "gpu-ok", "1 GPU(s), no fault held");
        json_object_object_add(json_object_array_get_idx(json_object_object_get(f, "gpus"), 0), "telemetry",
                               json_object_new_int(3));
        ck_result(judge(g, f, T0 + SEC), HEALTH_UNKNOWN, "gpu-input-bad",
                  UUID(0) " (pci 0000:10:00.0): its telemetry is not an object");
        json_object_put(f);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("health-gpu");
        TCase *tc = tcase_create("policy");

        tcase_add_test(tc, test_policy_defaults);
        tcase_add_test(tc, test_policy_overrides);
        tcase_add_test(tc, test_policy_bad);
        tcase_add_test(tc, test_policy_too_many);
        tcase_add_test(tc, test_memory_policy);
        suite_add_tcase(s, tc);
        tc = tcase_create("judge");
        tcase_add_checked_fixture(tc, root_setup, root_teardown);
        tcase_add_test(tc, test_judge_unknown);
        tcase_add_test(tc, test_judge_79_reboot);
        tcase_add_test(tc, test_judge_other_boot);
        tcase_add_test(tc, test_judge_nvml_decides);
        tcase_add_test(tc, test_judge_reset_by_return);
        tcase_add_test(tc, test_judge_count);
        tcase_add_test(tc, test_judge_storm);
        tcase_add_test(tc, test_judge_bounded);
        tcase_add_test(tc, test_judge_policy_change);
        tcase_add_test(tc, test_judge_bad_entries);
        tcase_add_test(tc, test_judge_memory);
        tcase_add_test(tc, test_judge_limits_off);
        tcase_add_test(tc, test_judge_temperature);
        tcase_add_test(tc, test_judge_clocks);
        tcase_add_test(tc, test_judge_power_persistence);
        tcase_add_test(tc, test_judge_nvlink);
        tcase_add_test(tc, test_judge_limits_mig);
        tcase_add_test(tc, test_state_roundtrip);
        tcase_add_test(tc, test_state_hostile);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(suite());
}
