/* Unit tests for the gres renderer: gres.conf lines and the Gres= value.
 *
 * Rendered output is compared byte for byte with the golden files under
 * tests/data/gres/, written by hand from Slurm's gres.conf(5) syntax.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/macro.h"
#include "util/strv.h"

#include "../../modules/gres/gres-conf.h"
#include "../lib/check-run.h"

static char *golden(const char *name) {
        const char *src = getenv("SUNKD_SRCDIR");
        _cleanup_free_ char *p = NULL;
        char *buf;
        size_t len;

        ck_assert_ptr_nonnull(src);
        ck_assert_int_ge(asprintf(&p, "%s/tests/data/gres/%s", src, name), 0);
        ck_assert_msg(fileio_read(p, 1 << 20, &buf, &len) == 0, "cannot read %s", p);
        return buf;
}

static void gpu_set(GresGpu *g, unsigned index, unsigned minor, const char *name, const char *bus,
                    const char *cpus) {
        *g = (GresGpu) { .index = index, .minor = minor };
        g->name = strdup(name);
        g->bus_id = strdup(bus);
        g->cpus = cpus ? strdup(cpus) : NULL;
        ck_assert(g->name && g->bus_id);
}

static void add_links(GresGpu *from, const GresGpu *to, unsigned count) {
        for (unsigned i = 0; i < count; i++)
                ck_assert_int_eq(strv_extend(&from->peers, to->bus_id), 0);
}

/* HGX H100: 8 GPUs over 2 NUMA nodes, listed here out of PCI order, with
 * minors that differ from the indexes; GPU pairs joined by 2 or 3 links. */
static const char *const h100_bus[8] = {
        "0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
        "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0",
};

static GresGpu *h100_node(void) {
        GresGpu *g = calloc(8, sizeof(GresGpu));
        static const unsigned order[8] = { 4, 0, 7, 1, 5, 2, 6, 3 };

        ck_assert_ptr_nonnull(g);
        for (unsigned i = 0; i < 8; i++) {
                unsigned k = order[i];

                gpu_set(&g[i], k, (k + 2) % 8, "NVIDIA H100 80GB HBM3", h100_bus[k],
                        k < 4 ? "0-47,96-143" : "48-95,144-191");
        }
        for (unsigned i = 0; i < 8; i++)
                for (unsigned j = 0; j < 8; j++)
                        if (i != j)
                                add_links(&g[i], &g[j], 2 + ((g[i].index + g[j].index) % 2));
        return g;
}

START_TEST(test_h100_golden) {
        GresGpu *g = h100_node();
        _cleanup_free_ char *conf = NULL, *gres = NULL, *want = golden("h100-8.gres.conf");

        ck_assert_int_eq(gres_conf_render(g, 8, NULL, 0, &conf), 0);
        ck_assert_str_eq(conf, want);
        ck_assert_int_eq(gres_conf_gres_value(g, 8, NULL, 0, &gres), 0);
        ck_assert_str_eq(gres, "gpu:nvidia_h100_80gb_hbm3:8");
        gres_gpus_free(g, 8);
}
END_TEST

START_TEST(test_h100_alias) {
        GresGpu *g = h100_node();
        static const GresTypeAlias alias[] = {
                { "nvidia_a100-sxm4-40gb", "a100" },
                { "nvidia_h100_80gb_hbm3", "h100" },
        };
        _cleanup_free_ char *conf = NULL, *gres = NULL, *want = golden("h100-8-alias.gres.conf");

        ck_assert_int_eq(gres_conf_render(g, 8, alias, ELEMENTSOF(alias), &conf), 0);
        ck_assert_str_eq(conf, want);
        ck_assert_int_eq(gres_conf_gres_value(g, 8, alias, ELEMENTSOF(alias), &gres), 0);
        ck_assert_str_eq(gres, "gpu:h100:8");
        gres_gpus_free(g, 8);
}
END_TEST

/* Two types interleaved in PCI order, no NVLink, one GPU without affinity. */
START_TEST(test_mixed_golden) {
        GresGpu *g = calloc(4, sizeof(GresGpu));
        _cleanup_free_ char *conf = NULL, *gres = NULL, *want = golden("mixed.gres.conf");

        ck_assert_ptr_nonnull(g);
        gpu_set(&g[0], 0, 0, "NVIDIA A100-SXM4-40GB", "0000:07:00.0", "0-15");
        gpu_set(&g[1], 1, 1, "Tesla T4", "0000:0b:00.0", "0-15");
        gpu_set(&g[2], 2, 3, "NVIDIA A100-SXM4-40GB", "0000:48:00.0", NULL);
        gpu_set(&g[3], 3, 2, "Quadro RTX 4000", "0000:88:00.0", "16-31");
        ck_assert_int_eq(gres_conf_render(g, 4, NULL, 0, &conf), 0);
        ck_assert_str_eq(conf, want);
        ck_assert_int_eq(gres_conf_gres_value(g, 4, NULL, 0, &gres), 0);
        ck_assert_str_eq(gres, "gpu:nvidia_a100-sxm4-40gb:2,gpu:tesla_t4:1,gpu:quadro_rtx_4000:1");
        gres_gpus_free(g, 4);
}
END_TEST

START_TEST(test_no_gpus) {
        _cleanup_free_ char *conf = NULL, *gres = NULL;

        ck_assert_int_eq(gres_conf_render(NULL, 0, NULL, 0, &conf), 0);
        ck_assert_str_eq(conf, "");
        ck_assert_int_eq(gres_conf_gres_value(NULL, 0, NULL, 0, &gres), 0);
        ck_assert_str_eq(gres, "");
}
END_TEST

START_TEST(test_normalise) {
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "NVIDIA H100 80GB HBM3", "nvidia_h100_80gb_hbm3" },
                { "NVIDIA A100-SXM4-40GB MIG 1g.5gb", "nvidia_a100-sxm4-40gb_mig_1g.5gb" },
                { "Quadro RTX 4000", "quadro_rtx_4000" },
                { "", "" },
                /* hostile: a driver string must not add keys, lines or GRES entries */
                { "X\nNodeName=evil File=/etc/shadow", "x_nodename_evil_file_/etc/shadow" },
                { "a:b,c#d\te\x7f", "a_b_c_d_e_" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *t = gres_type_normalise(cases[i].in);

                ck_assert_str_eq(t, cases[i].out);
        }
}
END_TEST

/* A hostile name reaches neither output as syntax; a 64 KiB name is kept whole. */
START_TEST(test_hostile_and_long_names) {
        GresGpu *g = calloc(2, sizeof(GresGpu));
        _cleanup_free_ char *conf = NULL, *gres = NULL, *big = malloc(65537);

        ck_assert_ptr_nonnull(g);
        ck_assert_ptr_nonnull(big);
        memset(big, 'A', 65536);
        big[65536] = 0;
        gpu_set(&g[0], 0, 0, "evil\nName=gpu File=/dev/sda", "0000:01:00.0", NULL);
        gpu_set(&g[1], 1, 1, big, "0000:02:00.0", NULL);
        ck_assert_int_eq(gres_conf_render(g, 2, NULL, 0, &conf), 0);
        ck_assert_int_eq(gres_conf_gres_value(g, 2, NULL, 0, &gres), 0);
        ck_assert_ptr_eq(strstr(conf, "\nName=gpu File=/dev/sda"), NULL);
        ck_assert(strncmp(conf, "Name=gpu Type=evil_name_gpu_file_/dev/sda File=/dev/nvidia0\n", 60) == 0);
        ck_assert_uint_eq(strlen(conf), 60 + strlen("Name=gpu Type= File=/dev/nvidia1\n") + 65536);
        ck_assert_ptr_eq(strchr(gres, '\n'), NULL);
        ck_assert_uint_eq(strv_length((char *[]) { gres, NULL }), 1);
        ck_assert(strncmp(gres, "gpu:evil_name_gpu_file_/dev/sda:1,gpu:aaaa", 42) == 0);
        gres_gpus_free(g, 2);
}
END_TEST

/* A link to a device that is not one of the GPUs (an NVSwitch) counts for none. */
START_TEST(test_links_to_switch) {
        GresGpu *g = calloc(2, sizeof(GresGpu));
        _cleanup_free_ char *conf = NULL;

        ck_assert_ptr_nonnull(g);
        gpu_set(&g[0], 0, 0, "GPU", "0000:01:00.0", NULL);
        gpu_set(&g[1], 1, 1, "GPU", "0000:02:00.0", NULL);
        ck_assert_int_eq(strv_extend(&g[0].peers, "0000:c0:00.0"), 0);
        add_links(&g[1], &g[0], 4);
        ck_assert_int_eq(gres_conf_render(g, 2, NULL, 0, &conf), 0);
        ck_assert_str_eq(conf, "Name=gpu Type=gpu File=/dev/nvidia0 Links=-1,0\n"
                               "Name=gpu Type=gpu File=/dev/nvidia1 Links=4,-1\n");
        gres_gpus_free(g, 2);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("gres");
        TCase *tc = tcase_create("conf");

        tcase_add_test(tc, test_h100_golden);
        tcase_add_test(tc, test_h100_alias);
        tcase_add_test(tc, test_mixed_golden);
        tcase_add_test(tc, test_no_gpus);
        tcase_add_test(tc, test_normalise);
        tcase_add_test(tc, test_hostile_and_long_names);
        tcase_add_test(tc, test_links_to_switch);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(suite());
}
