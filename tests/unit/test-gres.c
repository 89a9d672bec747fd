/* Unit tests for the gres renderer: gres.conf lines and the Gres= value.
 *
 * Rendered output is compared byte for byte with the golden files under
 * tests/data/gres/, written by hand from Slurm's gres.conf(5) syntax.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/macro.h"
#include "util/strv.h"

#include "../../modules/gres/gres-check.h"
#include "../../modules/gres/gres-conf.h"
#include "../../modules/gres/gres-proc.h"
#include "../../modules/gres/gres-nvml.h"
#include "../../modules/gres/gres-topo.h"
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

/* @cores: Slurm's core indexes, which Cores= shows (gres-topo maps CPU ids to them). */
/* The CPUs of the node the golden files describe: 2 sockets x 48 cores x 2
 * threads, numbered as Linux does (socket 0: CPUs 0-47 and 96-143). */
static char topo_dir[] = "/tmp/test-gres-topo-XXXXXX";

static const char *topo_root(void) {
        _cleanup_free_ char *cmd = NULL;

        if (strchr(topo_dir, 'X')) {
                ck_assert_ptr_nonnull(mkdtemp(topo_dir));
                ck_assert_int_ge(asprintf(&cmd, "'%s/tests/lib/fake-cpu-topology.sh' '%s' 2 48 2",
                                          getenv("SUNKD_SRCDIR"), topo_dir),
                                 0);
                ck_assert_int_eq(system(cmd), 0);
        }
        return topo_dir;
}

static void topo_teardown(void) {
        _cleanup_free_ char *cmd = NULL;

        if (strchr(topo_dir, 'X'))
                return;
        ck_assert_int_ge(asprintf(&cmd, "rm -rf '%s'", topo_dir), 0);
        ck_assert_int_eq(system(cmd), 0);
        memcpy(topo_dir + strlen(topo_dir) - 6, "XXXXXX", 6);
}

static void gpu_set(GresGpu *g, unsigned index, unsigned minor, const char *name, const char *bus,
                    const char *cores) {
        *g = (GresGpu){ .index = index, .minor = minor };
        g->name = strdup(name);
        g->bus_id = strdup(bus);
        g->cores = cores ? strdup(cores) : NULL;
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
                        k < 4 ? "0-47" : "48-95");
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
                { "H100\\xff", "h100_xff" }, /* an escaped byte (gres_text_safe()) */
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *t = gres_type_normalise(cases[i].in);

                ck_assert_str_eq(t, cases[i].out);
        }
}
END_TEST

/* Driver text leaves the module as printable ASCII, escapes unforgeable and never cut in half. */
START_TEST(test_text_escape) {
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3" },
                { "GPU-\xc3(\x07", "GPU-\\xc3(\\x07" },
                { "a\\xffb", "a\\x5cxffb" }, /* a literal "\xff" stays apart from the byte */
                { "\x1b[2J\r\n\t\x7f", "\\x1b[2J\\x0d\\x0a\\x09\\x7f" },
                { "\xc3\xa9", "\\xc3\\xa9" }, /* valid UTF-8 too: gres.conf and the XID log take ASCII */
                { "", "" },
        };
        char out[GRES_TEXT_MAX], small[8];
        _cleanup_free_ char *big = malloc(1000), *safe = NULL;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                gres_text_escape(cases[i].in, out, sizeof(out));
                ck_assert_str_eq(out, cases[i].out);
        }
        gres_text_escape(NULL, out, sizeof(out));
        ck_assert_str_eq(out, "");
        gres_text_escape("abcd\xff", small,
                         sizeof(small)); /* "abcd\xff" needs 9 bytes: the escape goes whole */
        ck_assert_str_eq(small, "abcd");
        gres_text_escape("ab\xff", small, sizeof(small));
        ck_assert_str_eq(small, "ab\\xff");
        ck_assert_ptr_nonnull(big);
        memset(big, '\xff', 999);
        big[999] = 0;
        safe = gres_text_safe(big);
        ck_assert_uint_eq(strlen(safe), (GRES_TEXT_MAX - 1) / 4 * 4);
        ck_assert_ptr_null(gres_text_safe(NULL));
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
        ck_assert_uint_eq(strv_length((char *[]){ gres, NULL }), 1);
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

/* ---- /proc fallback ---- */

static char *data_path(const char *name) {
        char *p;

        ck_assert_int_ge(asprintf(&p, "%s/tests/data/gres/%s", getenv("SUNKD_SRCDIR"), name), 0);
        return p;
}

/* Out of PCI order in readdir, an upper-case 8-digit domain, one GPU
 * without its /dev node (left out). */
START_TEST(test_proc_golden) {
        _cleanup_free_ char *root = data_path("proc-node"), *conf = NULL, *gres = NULL;
        _cleanup_free_ char *want = golden("proc-node.gres.conf");
        GresGpu *g = NULL;
        size_t n = 0;

        ck_assert_int_eq(gres_proc_discover(root, &g, &n), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_str_eq(g[0].bus_id, "0000:18:00.0");
        ck_assert_uint_eq(g[0].index, 0);
        ck_assert_uint_eq(g[0].minor, 2);
        ck_assert_str_eq(g[0].uuid, "GPU-18000000-0000-0000-0000-000000000000");
        ck_assert_str_eq(g[1].bus_id, "0000:9a:00.0");
        ck_assert_uint_eq(g[1].index, 1);
        ck_assert_str_eq(g[0].cpus, "0-47,96-143");
        ck_assert_int_eq(gres_topo_map_gpus(topo_root(), g, n), 0);
        ck_assert_int_eq(gres_conf_render(g, n, NULL, 0, &conf), 0);
        ck_assert_str_eq(conf, want);
        ck_assert_int_eq(gres_conf_gres_value(g, n, NULL, 0, &gres), 0);
        ck_assert_str_eq(gres, "gpu:nvidia_h100_80gb_hbm3:2");
        gres_gpus_free(g, n);
}
END_TEST

START_TEST(test_proc_no_driver) {
        GresGpu *g = (GresGpu *) 1;
        size_t n = 7;

        ck_assert_int_eq(gres_proc_discover("/nonexistent-gres-root", &g, &n), 0);
        ck_assert_ptr_null(g);
        ck_assert_uint_eq(n, 0);
}
END_TEST

static void write_file(const char *dir, const char *name, const char *data, size_t len) {
        _cleanup_free_ char *p = NULL;
        FILE *f;

        ck_assert_int_ge(asprintf(&p, "%s/%s", dir, name), 0);
        f = fopen(p, "w");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(data, 1, len, f), len);
        ck_assert_int_eq(fclose(f), 0);
}

/* One GPU at @bus under a fresh root whose information file is @info. */
static int proc_at(const char *bus, const char *info, size_t len, GresGpu **g, size_t *n) {
        char root[] = "/tmp/test-gres-XXXXXX";
        _cleanup_free_ char *cmd = NULL, *gdir = NULL;
        int r;

        ck_assert_ptr_nonnull(mkdtemp(root));
        ck_assert_int_ge(asprintf(&gdir, "%s/proc/driver/nvidia/gpus/%s", root, bus), 0);
        ck_assert_int_ge(asprintf(&cmd, "mkdir -p '%s' '%s/dev' && : > '%s/dev/nvidia0'", gdir, root, root),
                         0);
        ck_assert_int_eq(system(cmd), 0);
        write_file(gdir, "information", info, len);
        r = gres_proc_discover(root, g, n);
        free(cmd);
        ck_assert_int_ge(asprintf(&cmd, "rm -rf '%s'", root), 0);
        ck_assert_int_eq(system(cmd), 0);
        return r;
}

static int proc_one(const char *info, size_t len, GresGpu **g, size_t *n) {
        return proc_at("0000:01:00.0", info, len, g, n);
}

/* The file as the open kernel module 580.159.04 writes it for an H200:
 * tabs and spaces between key and value, keys the module does not use. */
START_TEST(test_proc_real_driver) {
        _cleanup_free_ char *path = data_path("proc-h200-580.information"), *info = NULL;
        GresGpu *g = NULL;
        size_t n = 0, len = 0;
        FILE *f = fopen(path, "r");

        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(getdelim(&info, &len, '\0', f) > 0, 1);
        len = strlen(info);
        fclose(f);
        ck_assert_int_eq(proc_at("0000:00:06.0", info, len, &g, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_str_eq(g[0].name, "NVIDIA H200");
        ck_assert_str_eq(g[0].uuid, "GPU-3f12ef50-cea6-4486-c130-caa8795799ce");
        ck_assert_str_eq(g[0].bus_id, "0000:00:06.0");
        ck_assert_uint_eq(g[0].minor, 0);
        ck_assert_uint_eq(g[0].memory, 0);
        gres_gpus_free(g, n);
}
END_TEST

START_TEST(test_proc_malformed) {
        static const char *const bad[] = {
                "",
                "Model: X\nBus Location: 0000:01:00.0\n",        /* no minor */
                "Model: X\nDevice Minor: 0\n",                   /* no bus */
                "Bus Location: 0000:01:00.0\nDevice Minor: 0\n", /* no model */
                "Model: X\nBus Location: 0000:01:00.0\nDevice Minor: -1\n",
                "Model: X\nBus Location: 0000:01:00.0\nDevice Minor: 256\n",
                "Model: X\nBus Location: 0000:01:00.0\nDevice Minor: 99999999999999999999\n",
                "Model: X\nBus Location: 0000:01:00.0\nDevice Minor: 0x1\n",
                "Model: X\nBus Location: ../../etc\nDevice Minor: 0\n",
                "Model: X\nBus Location: 10000:01:00.0\nDevice Minor: 0\n",
                "Model: X\nBus Location: 0000:01:00.0/../x\nDevice Minor: 0\n",
        };
        GresGpu *g = NULL;
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_msg(proc_one(bad[i], strlen(bad[i]), &g, &n) == -EBADMSG, "case %zu", i);
        /* an embedded NUL */
        ck_assert_int_eq(proc_one("Model: X\0\nBus Location: 0000:01:00.0\nDevice Minor: 0\n", 50, &g, &n),
                         -EBADMSG);
}
END_TEST

START_TEST(test_proc_oversized_and_hostile) {
        static const char ok[] = "Model:\t NVIDIA A100 \r\nBus Location: 0000:01:00.0\nDevice Minor: 0\n";
        _cleanup_free_ char *big = malloc(128 * 1024);
        GresGpu *g = NULL;
        size_t n = 0;

        ck_assert_ptr_nonnull(big);
        memset(big, 'x', 128 * 1024);
        memcpy(big, ok, strlen(ok));
        ck_assert_int_lt(proc_one(big, 128 * 1024, &g, &n), 0);
        ck_assert_int_eq(proc_one(ok, strlen(ok), &g, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_str_eq(g[0].name, "NVIDIA A100");
        ck_assert_ptr_null(g[0].cpus);
        ck_assert_ptr_null(g[0].uuid);
        gres_gpus_free(g, n);
}
END_TEST

START_TEST(test_bus_id_normalise) {
        char out[16];

        ck_assert_int_eq(gres_bus_id_normalise("00000000:1B:00.0", out), 0);
        ck_assert_str_eq(out, "0000:1b:00.0");
        ck_assert_int_eq(gres_bus_id_normalise("0001:db:1f.7", out), 0);
        ck_assert_str_eq(out, "0001:db:1f.7");
        ck_assert_int_eq(gres_bus_id_normalise("0000:1b:00.8", out), -EINVAL);
        ck_assert_int_eq(gres_bus_id_normalise("0000:1b:20.0", out), -EINVAL);
        ck_assert_int_eq(gres_bus_id_normalise("0000:1b:00.0 ", out), -EINVAL);
        ck_assert_int_eq(gres_bus_id_normalise("1b:00.0", out), -EINVAL);
        ck_assert_int_eq(gres_bus_id_normalise("000000000:1b:00.0", out), -EINVAL);
        ck_assert_int_eq(gres_bus_id_normalise("", out), -EINVAL);
}
END_TEST

/* ---- NVML through the fake libnvidia-ml ---- */

static char *fake_nvml(const char *desc) {
        _cleanup_free_ char *d = data_path(desc);
        char *lib;

        ck_assert_int_eq(setenv("FAKE_NVML_CONFIG", d, 1), 0);
        ck_assert_int_ge(
                asprintf(&lib, "%s/tests/fake-nvml/.libs/libnvidia-ml.so", getenv("SUNKD_BUILDDIR")), 0);
        return lib;
}

static void nvml_golden(const char *desc, const char *conf_name, size_t want_n, const char *want_gres) {
        _cleanup_free_ char *lib = fake_nvml(desc), *conf = NULL, *gres = NULL, *err = NULL;
        _cleanup_free_ char *want = golden(conf_name);
        GresGpu *g = NULL;
        size_t n = 0;

        ck_assert_int_eq(gres_nvml_discover(lib, NULL, &g, &n, &err), 0);
        ck_assert_ptr_null(err);
        ck_assert_uint_eq(n, want_n);
        ck_assert_int_eq(gres_topo_map_gpus(topo_root(), g, n), 0);
        ck_assert_int_eq(gres_conf_render(g, n, NULL, 0, &conf), 0);
        ck_assert_str_eq(conf, want);
        ck_assert_int_eq(gres_conf_gres_value(g, n, NULL, 0, &gres), 0);
        ck_assert_str_eq(gres, want_gres);
        gres_gpus_free(g, n);
}

START_TEST(test_nvml_h100) {
        nvml_golden("nvml-h100-8.desc", "nvml-h100-8.gres.conf", 8, "gpu:nvidia_h100_80gb_hbm3:8");
}
END_TEST

START_TEST(test_nvml_fields) {
        _cleanup_free_ char *lib = fake_nvml("nvml-h100-8.desc");
        GresGpu *g = NULL;
        size_t n = 0;

        ck_assert_int_eq(gres_nvml_discover(lib, NULL, &g, &n, NULL), 0);
        ck_assert_uint_eq(n, 8);
        ck_assert_uint_eq(g[5].index, 5);
        ck_assert_uint_eq(g[5].minor, 0);
        ck_assert_str_eq(g[5].bus_id, "0000:ab:00.0");
        ck_assert_str_eq(g[5].cpus, "48-95,144-191");
        ck_assert_str_eq(g[5].uuid, "GPU-00000005-1111-2222-3333-444444444444");
        ck_assert_uint_eq(g[5].memory, 85520809984ULL);
        ck_assert_uint_eq(strv_length(g[5].peers), 14);
        gres_gpus_free(g, n);
}
END_TEST

START_TEST(test_nvml_mixed_no_nvlink) {
        nvml_golden("nvml-mixed.desc", "nvml-mixed.gres.conf", 3,
                    "gpu:nvidia_a100-sxm4-40gb:1,gpu:tesla_t4:1,gpu:quadro_rtx_4000:1");
}
END_TEST

/* What NVML reports of each GPU's memory: counters, no verdict (the health
 * module judges them). */
START_TEST(test_nvml_health) {
        _cleanup_free_ char *lib = fake_nvml("nvml-health.desc"), *err = NULL;
        GresGpu *g = NULL;
        size_t n = 0;
        json_object *o;

        ck_assert_int_eq(gres_nvml_discover(lib, NULL, &g, &n, &err), 0);
        ck_assert_uint_eq(n, 4);
        for (size_t i = 0; i < n; i++)
                ck_assert(g[i].health.read);

        ck_assert_int_eq(g[0].health.ecc_uncorrected_volatile, 0);
        ck_assert_int_eq(g[0].health.recovery_action, 0);

        ck_assert_int_eq(g[1].health.ecc_uncorrected_volatile, 2);
        ck_assert_int_eq(g[1].health.ecc_uncorrected_aggregate, 5);
        ck_assert_int_eq(g[1].health.retired_pages_pending, 1);
        ck_assert_int_eq(g[1].health.remapped_rows_uncorrectable, 3);
        ck_assert_int_eq(g[1].health.remap_pending, 1);
        ck_assert_int_eq(g[1].health.remap_failure, 0);
        ck_assert_int_eq(g[1].health.recovery_action, 1);

        /* NOT_SUPPORTED everywhere: nothing known, no key in the JSON */
        ck_assert_int_eq(g[2].health.ecc_uncorrected_volatile, -1);
        ck_assert_int_eq(g[2].health.remap_failure, -1);
        ck_assert_int_eq(g[2].health.recovery_action, -1);
        o = gres_health_json(&g[2].health);
        ck_assert_str_eq(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), "{}");
        json_object_put(o);

        o = gres_health_json(&g[3].health);
        ck_assert_str_eq(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
                         "{\"ecc_uncorrected_volatile\":0,"
                         "\"ecc_uncorrected_aggregate\":1,\"retired_pages_pending\":0,"
                         "\"remapped_rows_uncorrectable\":7,\"remap_pending\":0,\"remap_failure\":1,"
                         "\"recovery_action\":2,\"recovery\":\"reboot the node\"}");
        json_object_put(o);
        gres_gpus_free(g, n);
}
END_TEST

/* What NVML reports of each GPU beside its memory: temperature, power,
 * clocks events, persistence mode and each NVLink it has, as observed. */
START_TEST(test_nvml_telemetry) {
        _cleanup_free_ char *lib = fake_nvml("nvml-depth-hot.desc"), *err = NULL;
        GresGpu *g = NULL;
        size_t n = 0;
        json_object *o;

        ck_assert_int_eq(gres_nvml_discover(lib, NULL, &g, &n, &err), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert(g[1].telemetry.read);
        ck_assert_int_eq(g[1].telemetry.temperature, 91);
        ck_assert_int_eq(g[1].telemetry.temperature_slowdown, 87);
        ck_assert_int_eq(g[1].telemetry.temperature_shutdown, 92);
        ck_assert_int_eq(g[1].telemetry.power_mw, 690000);
        ck_assert_int_eq(g[1].telemetry.power_limit_mw, 700000);
        ck_assert_int_eq(g[1].telemetry.clocks_event_reasons, 0x60);
        ck_assert_int_eq(g[1].telemetry.persistence_mode, 1);
        ck_assert_uint_eq(g[1].telemetry.n_links, 2);
        o = gres_health_telemetry_json(&g[1].telemetry);
        ck_assert_str_eq(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
                         "{\"temperature\":91,\"temperature_slowdown\":87,\"temperature_shutdown\":92,"
                         "\"power_mw\":690000,\"power_limit_mw\":700000,\"clocks_event_reasons\":96,"
                         "\"clocks_events\":[\"sw_thermal_slowdown\",\"hw_thermal_slowdown\"],"
                         "\"persistence_mode\":1,\"links\":["
                         "{\"link\":0,\"up\":true,\"replay_errors\":0,\"recovery_errors\":0,"
                         "\"crc_flit_errors\":0,\"crc_data_errors\":0},"
                         "{\"link\":1,\"up\":true,\"replay_errors\":0,\"recovery_errors\":0,"
                         "\"crc_flit_errors\":0,\"crc_data_errors\":0}]}");
        json_object_put(o);
        gres_gpus_free(g, n);

        /* an NVLink down, with its error counts; its peer is one link fewer */
        free(lib);
        lib = fake_nvml("nvml-depth-nvlink-down.desc");
        ck_assert_int_eq(gres_nvml_discover(lib, NULL, &g, &n, &err), 0);
        ck_assert_uint_eq(g[0].telemetry.n_links, 2);
        ck_assert_int_eq(g[0].telemetry.links[0].up, 1);
        ck_assert_int_eq(g[0].telemetry.links[1].up, 0);
        ck_assert_int_eq(g[0].telemetry.links[1].replay, 12);
        ck_assert_int_eq(g[0].telemetry.links[1].recovery, 1);
        ck_assert_int_eq(g[0].telemetry.links[1].crc_flit, 340);
        ck_assert_int_eq(g[0].telemetry.links[1].crc_data, 2);
        ck_assert_uint_eq(strv_length(g[0].peers), 1);
        gres_gpus_free(g, n);

        /* a driver that supports none of it: nothing known, no key */
        free(lib);
        lib = fake_nvml("nvml-health.desc");
        ck_assert_int_eq(gres_nvml_discover(lib, NULL, &g, &n, &err), 0);
        ck_assert(g[0].telemetry.read);
        ck_assert_int_eq(g[0].telemetry.temperature, -1);
        ck_assert_int_eq(g[0].telemetry.persistence_mode, -1);
        ck_assert_uint_eq(g[0].telemetry.n_links, 0);
        o = gres_health_telemetry_json(&g[0].telemetry);
        ck_assert_str_eq(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), "{}");
        json_object_put(o);
        gres_gpus_free(g, n);
}
END_TEST

/* Through /proc, nothing is known of health. */
START_TEST(test_proc_health_unknown) {
        GresHealth h = { 0 };

        ck_assert_ptr_null(gres_health_json(&h));
}
END_TEST

/* 4x A100, three in MIG mode: each MIG instance is an entry with its
 * profile's type and its three device files (the caps minors from
 * mig-minors, by the GPU's device minor); a GPU not in MIG mode stays whole. */
START_TEST(test_nvml_mig) {
        _cleanup_free_ char *lib = fake_nvml("nvml-a100-mig.desc"), *root = data_path("mig-node");
        _cleanup_free_ char *conf = NULL, *gres = NULL, *want = golden("nvml-a100-mig.gres.conf"),
                            *err = NULL;
        GresGpu *g = NULL;
        size_t n = 0;

        ck_assert_int_eq(gres_nvml_discover(lib, root, &g, &n, &err), 0);
        ck_assert_uint_eq(n, 8);
        ck_assert_str_eq(g[0].uuid, "MIG-a1000000-0001-0000-0000-000000000000");
        ck_assert_str_eq(g[0].name, "NVIDIA A100_3g.20gb");
        ck_assert_uint_eq(g[0].mig, 1);
        ck_assert_uint_eq(g[0].memory, 19968ULL * 1024 * 1024);
        ck_assert_str_eq(g[2].uuid, "GPU-a1000001-0000-0000-0000-000000000000");
        ck_assert_uint_eq(g[2].mig, 0);
        ck_assert_ptr_null(g[2].files);
        ck_assert_int_eq(gres_topo_map_gpus(topo_root(), g, n), 0);
        ck_assert_int_eq(gres_conf_render(g, n, NULL, 0, &conf), 0);
        ck_assert_str_eq(conf, want);
        ck_assert_int_eq(gres_conf_gres_value(g, n, NULL, 0, &gres), 0);
        ck_assert_str_eq(gres,
                         "gpu:nvidia_a100_3g.20gb:2,gpu:nvidia_a100-sxm4-40gb:1,gpu:nvidia_a100_4g.20gb:1,"
                         "gpu:nvidia_a100_2g.10gb:1,gpu:nvidia_a100_1g.5gb:3");
        gres_gpus_free(g, n);
}
END_TEST

/* A MIG instance mig-minors does not list fails the discovery, saying which:
 * a gres.conf without its device files would let jobs see no GPU. */
START_TEST(test_nvml_mig_minors_missing) {
        _cleanup_free_ char *lib = fake_nvml("nvml-a100-mig.desc"), *err = NULL;
        GresGpu *g = NULL;
        size_t n = 0;

        ck_assert_int_eq(gres_nvml_discover(lib, "/nonexistent-gres-root", &g, &n, &err), -EIO);
        ck_assert_str_eq(
                err, "/nonexistent-gres-root/proc/driver/nvidia-caps/mig-minors: no minors for gpu0/gi1/ci0 "
                     "(No such file or directory)");
}
END_TEST

START_TEST(test_mig_minors_hostile) {
        static const char *const bad[] = {
                "gpu0/gi1/access 12\ngpu0/gi1/ci0/access x\n",        /* not a number */
                "gpu0/gi1/access 12\ngpu0/gi1/ci0/access 99999999\n", /* past any minor */
                "gpu0/gi1/access 12\ngpu0/gi1/ci0/access -1\n",
        };
        char root[] = "/tmp/test-gres-mig-XXXXXX";
        _cleanup_free_ char *dir = NULL, *cmd = NULL;
        unsigned a = 0, b = 0;

        ck_assert_ptr_nonnull(mkdtemp(root));
        ck_assert_int_ge(asprintf(&dir, "%s/proc/driver/nvidia-caps", root), 0);
        ck_assert_int_ge(asprintf(&cmd, "mkdir -p '%s'", dir), 0);
        ck_assert_int_eq(system(cmd), 0);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                write_file(dir, "mig-minors", bad[i], strlen(bad[i]));
                ck_assert_msg(gres_proc_mig_minors(root, 0, 1, 0, &a, &b) == -EBADMSG, "case %zu", i);
        }
        /* a NUL byte, a line for another GPU only, then the right lines among others */
        write_file(dir, "mig-minors", "gpu0/gi1/access 12\0\n", 20);
        ck_assert_int_eq(gres_proc_mig_minors(root, 0, 1, 0, &a, &b), -EBADMSG);
        write_file(dir, "mig-minors", "gpu10/gi1/access 12\ngpu10/gi1/ci0/access 13\n", 44);
        ck_assert_int_eq(gres_proc_mig_minors(root, 1, 1, 0, &a, &b), -ENOENT);
        write_file(dir, "mig-minors", "config 1\ngpu1/gi1/access 12\ngpu1/gi1/ci0/access 13", 50);
        ck_assert_int_eq(gres_proc_mig_minors(root, 1, 1, 0, &a, &b), 0);
        ck_assert_uint_eq(a, 12);
        ck_assert_uint_eq(b, 13);
        free(cmd);
        ck_assert_int_ge(asprintf(&cmd, "rm -rf '%s'", root), 0);
        ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* GB200: the multi-node NVLink domain is read, and gives the node's topology/block line. */
START_TEST(test_nvml_fabric) {
        _cleanup_free_ char *lib = fake_nvml("nvml-gb200-4.desc"), *block = NULL, *err = NULL;
        GresGpu *g = NULL;
        size_t n = 0;

        ck_assert_int_eq(gres_nvml_discover(lib, NULL, &g, &n, NULL), 0);
        ck_assert_uint_eq(n, 4);
        for (size_t i = 0; i < n; i++) {
                ck_assert_str_eq(g[i].fabric, "5a5a5a5a-5a5a-5a5a-5a5a-5a5a00000001");
                ck_assert_uint_eq(g[i].clique, 7);
        }
        ck_assert_int_eq(gres_conf_block(g, n, "gb-0-07", &block, &err), 0);
        ck_assert_str_eq(block, "BlockName=nvl-5a5a5a5a-5a5a-5a5a-5a5a-5a5a00000001-7 Nodes=gb-0-07");
        gres_gpus_free(g, n);
        /* Hopper HGX: NOT_SUPPORTED, no fabric, no line */
        free(lib);
        lib = fake_nvml("nvml-h100-8.desc");
        free(TAKE_PTR(block));
        ck_assert_int_eq(gres_nvml_discover(lib, NULL, &g, &n, NULL), 0);
        ck_assert_ptr_null(g[0].fabric);
        ck_assert_int_eq(gres_conf_block(g, n, "gpu-node-07", &block, &err), 0);
        ck_assert_ptr_null(block);
        gres_gpus_free(g, n);
}
END_TEST

/* GPUs that disagree about their domain give no line but a reason that names them. */
START_TEST(test_block_disagree) {
        GresGpu g[2] = {
                { .uuid = (char *) "GPU-a",
                  .bus_id = (char *) "0008:01:00.0",
                  .fabric = (char *) "f1",
                  .clique = 7 },
                { .uuid = (char *) "GPU-b", .bus_id = (char *) "0009:01:00.0", .fabric = NULL },
        };
        char *block = (char *) 1, *err = NULL;

        ck_assert_int_eq(gres_conf_block(g, 2, "n1", &block, &err), -EINVAL);
        ck_assert_ptr_null(block);
        ck_assert_str_eq(
                err,
                "GPU GPU-b at 0009:01:00.0 is in no NVLink fabric, GPU GPU-a at 0008:01:00.0 in nvl-f1-7");
        free(TAKE_PTR(err));
        g[1].fabric = (char *) "f1";
        g[1].clique = 8;
        ck_assert_int_eq(gres_conf_block(g, 2, "n1", &block, &err), -EINVAL);
        ck_assert_str_eq(err,
                         "GPU GPU-b at 0009:01:00.0 is in nvl-f1-8, GPU GPU-a at 0008:01:00.0 in nvl-f1-7");
        free(TAKE_PTR(err));
        g[1].clique = 7;
        ck_assert_int_eq(gres_conf_block(g, 2, "n1", &block, &err), 0);
        ck_assert_str_eq(block, "BlockName=nvl-f1-7 Nodes=n1");
        free(block);
        ck_assert_int_eq(gres_conf_block(NULL, 0, "n1", &block, &err), 0);
        ck_assert_ptr_null(block);
}
END_TEST

START_TEST(test_nvml_empty) {
        _cleanup_free_ char *lib = fake_nvml("nvml-empty.desc");
        GresGpu *g = NULL;
        size_t n = 9;

        ck_assert_int_eq(gres_nvml_discover(lib, NULL, &g, &n, NULL), 0);
        ck_assert_uint_eq(n, 0);
        gres_gpus_free(g, n);
}
END_TEST

START_TEST(test_nvml_failures) {
        _cleanup_free_ char *lost = fake_nvml("nvml-lost.desc"), *err = NULL;
        GresGpu *g = NULL;
        size_t n = 0;

        ck_assert_int_eq(gres_nvml_discover(lost, NULL, &g, &n, &err), -EIO);
        ck_assert_str_eq(err, "nvmlDeviceGetHandleByIndex_v2: Fake error (15)");
        free(TAKE_PTR(err));
        free(fake_nvml("nvml-init-fail.desc"));
        ck_assert_int_eq(gres_nvml_discover(lost, NULL, &g, &n, &err), -EIO);
        ck_assert_str_eq(err, "nvmlInit_v2: Fake error (9)");
        free(TAKE_PTR(err));
        ck_assert_int_eq(gres_nvml_discover("/nonexistent/libnvidia-ml.so.1", NULL, &g, &n, &err), -ENOENT);
        /* the library and dlopen's reason, for the log */
        ck_assert_str_eq(err, "cannot load /nonexistent/libnvidia-ml.so.1 (/nonexistent/libnvidia-ml.so.1: "
                              "cannot open shared object file: No such file or directory)");
        free(TAKE_PTR(err));
        /* a library that is not NVML */
        ck_assert_int_eq(gres_nvml_discover("libc.so.6", NULL, &g, &n, &err), -ENOSYS);
        ck_assert_str_eq(err, "nvmlInit_v2: missing");
}
END_TEST

/* NVML can block forever inside the driver: discovery does not return, which
 * is why the module runs it off the event loop.  The fake signals from inside
 * nvmlInit_v2, so the check does not depend on timing. */
/* ---- slurm.conf and the comparison ---- */

static char *conf_file(const char *text, size_t len) {
        char *p = strdup("/tmp/test-gres-slurm-XXXXXX");
        int fd = mkstemp(p);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, len), (ssize_t) len);
        close(fd);
        return p;
}

static int node_gres(const char *text, const char *node, char **ret, char **err) {
        _cleanup_free_ char *p = conf_file(text, strlen(text));
        int r = gres_slurm_conf_node_gres(p, node, ret, err);

        unlink(p);
        return r;
}

START_TEST(test_slurm_conf) {
        _cleanup_free_ char *g = NULL, *err = NULL;

        /* Host lists, case-insensitive keys, continuation, comments, DEFAULT. */
        ck_assert_int_eq(
                node_gres("ClusterName=x\nnodename=gpu[01-04,07] gres=gpu:h100:8 # c\n", "gpu07", &g, &err),
                0);
        ck_assert_str_eq(g, "gpu:h100:8");
        g = mfree(g);
        ck_assert_int_eq(
                node_gres("NodeName=DEFAULT Gres=gpu:4\nNodeName=a,b \\\n  CPUs=8\n", "b", &g, &err), 0);
        ck_assert_str_eq(g, "gpu:4");
        g = mfree(g);
        ck_assert_int_eq(node_gres("NodeName=a CPUs=8\n", "a", &g, &err), 0);
        ck_assert_ptr_null(g);
        ck_assert_int_eq(node_gres("NodeName=gpu[01-04]\n", "gpu05", &g, &err), -ENOENT);
        ck_assert_ptr_nonnull(strstr(err, "no NodeName= line names gpu05"));
        err = mfree(err);
        /* The first line naming the node wins, as in Slurm. */
        ck_assert_int_eq(node_gres("NodeName=n1 Gres=gpu:1\nNodeName=n[1-2] Gres=gpu:2\n", "n1", &g, &err),
                         0);
        ck_assert_str_eq(g, "gpu:1");
        g = mfree(g);
        /* Hostile: NUL bytes, an empty NodeName=, a broken host list, huge. */
        {
                _cleanup_free_ char *p = conf_file("NodeName=a\0Gres=gpu:1\n", 21);
                ck_assert_int_eq(gres_slurm_conf_node_gres(p, "a", &g, &err), -EBADMSG);
                ck_assert_ptr_nonnull(strstr(err, "a NUL byte"));
                unlink(p);
                err = mfree(err);
        }
        ck_assert_int_eq(node_gres("NodeName= Gres=gpu:1\n", "a", &g, &err), -EBADMSG);
        ck_assert_ptr_nonnull(strstr(err, ":1: NodeName= without a name"));
        err = mfree(err);
        ck_assert_int_eq(node_gres("NodeName=a[1-\n", "a1", &g, &err), -ENOENT);
        err = mfree(err);
        {
                size_t n = GRES_SLURM_CONF_MAX + 1;
                char *big = malloc(n);
                ck_assert_ptr_nonnull(big);
                memset(big, '#', n);
                _cleanup_free_ char *p = conf_file(big, n);
                free(big);
                ck_assert_int_eq(gres_slurm_conf_node_gres(p, "a", &g, &err), -EFBIG);
                unlink(p);
                err = mfree(err);
        }
        ck_assert_int_eq(gres_slurm_conf_node_gres("/nonexistent/slurm.conf", "a", &g, &err), -ENOENT);
        ck_assert_ptr_nonnull(strstr(err, "/nonexistent/slurm.conf"));
}
END_TEST

START_TEST(test_check_compare) {
        const GresCheckGpu eight[] = {
                { "h100", "GPU-0", "0000:18:00.0" }, { "h100", "GPU-1", "0000:2a:00.0" },
                { "h100", "GPU-2", "0000:3a:00.0" }, { "h100", "GPU-3", "0000:5d:00.0" },
                { "h100", "GPU-4", "0000:9a:00.0" }, { "h100", "GPU-5", "0000:ab:00.0" },
                { "h100", "GPU-6", "0000:ba:00.0" }, { "h100", "GPU-7", "0000:db:00.0" },
        };
        const GresCheckGpu mixed[] = { { "a100", "GPU-a", "0000:07:00.0" },
                                       { "t4", "GPU-t", "0000:0b:00.0" } };
        _cleanup_free_ char *m = NULL;

        ck_assert_int_eq(gres_check_compare("gpu:h100:8", eight, 8, eight, 8, &m), 1);
        m = mfree(m);
        ck_assert_int_eq(gres_check_compare("gpu:8,nvme:2", eight, 8, NULL, 0, &m), 1);
        m = mfree(m);
        ck_assert_int_eq(gres_check_compare("gpu:h100:8", eight + 1, 7, eight, 8, &m), 0);
        ck_assert_str_eq(m, "7 of 8 h100 found, GPU-0 at 0000:18:00.0 missing");
        m = mfree(m);
        ck_assert_int_eq(gres_check_compare("gpu:a100:1,gpu:t4:2", mixed, 2, mixed, 2, &m), 0);
        ck_assert_str_eq(m, "1 of 2 t4 found");
        m = mfree(m);
        ck_assert_int_eq(gres_check_compare("gpu:a100:1", mixed, 2, NULL, 0, &m), 0);
        ck_assert_str_eq(m, "1 t4 found, not in Gres=");
        m = mfree(m);
        ck_assert_int_eq(gres_check_compare("", NULL, 0, NULL, 0, &m), 1);
        m = mfree(m);
        /* Values that are not gpu[:TYPE]:COUNT. */
        static const char *const bad[] = {
                "gpu",         "gpu:",   "gpu:h100:",   "gpu:h100:x",
                "gpu:h100:8x", "gpu::8", "gpu:h100:-1", "gpu:h100:99999999999999999999999"
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                ck_assert_msg(gres_check_compare(bad[i], eight, 8, NULL, 0, &m) == -EINVAL, "%s accepted",
                              bad[i]);
                ck_assert_ptr_nonnull(m);
                m = mfree(m);
        }
}
END_TEST

START_TEST(test_nvml_hang_blocks) {
        _cleanup_free_ char *lib = fake_nvml("nvml-hang.desc");
        char fdstr[16], c;
        int p[2], status;
        pid_t pid;

        ck_assert_int_eq(pipe(p), 0);
        snprintf(fdstr, sizeof(fdstr), "%d", p[1]);
        ck_assert_int_eq(setenv("FAKE_NVML_HANG_FD", fdstr, 1), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                GresGpu *g = NULL;
                size_t n = 0;

                close(p[0]);
                _exit(gres_nvml_discover(lib, NULL, &g, &n, NULL) == 0 ? 0 : 1);
        }
        close(p[1]);
        ck_assert_int_eq(read(p[0], &c, 1), 1);
        ck_assert_int_eq(waitpid(pid, &status, WNOHANG), 0);
        ck_assert_int_eq(kill(pid, SIGKILL), 0);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        close(p[0]);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("gres");
        TCase *tc = tcase_create("conf");

        tcase_add_test(tc, test_h100_golden);
        tcase_add_test(tc, test_slurm_conf);
        tcase_add_test(tc, test_check_compare);
        tcase_add_test(tc, test_h100_alias);
        tcase_add_test(tc, test_mixed_golden);
        tcase_add_test(tc, test_no_gpus);
        tcase_add_test(tc, test_normalise);
        tcase_add_test(tc, test_text_escape);
        tcase_add_test(tc, test_hostile_and_long_names);
        tcase_add_test(tc, test_links_to_switch);
        suite_add_tcase(s, tc);

        tc = tcase_create("proc");
        tcase_add_checked_fixture(tc, NULL, topo_teardown);
        tcase_add_test(tc, test_proc_golden);
        tcase_add_test(tc, test_proc_no_driver);
        tcase_add_test(tc, test_proc_real_driver);
        tcase_add_test(tc, test_proc_malformed);
        tcase_add_test(tc, test_proc_oversized_and_hostile);
        tcase_add_test(tc, test_bus_id_normalise);
        suite_add_tcase(s, tc);

        tc = tcase_create("nvml");
        tcase_add_checked_fixture(tc, NULL, topo_teardown);
        tcase_add_test(tc, test_nvml_h100);
        tcase_add_test(tc, test_nvml_fields);
        tcase_add_test(tc, test_nvml_mixed_no_nvlink);
        tcase_add_test(tc, test_nvml_empty);
        tcase_add_test(tc, test_nvml_fabric);
        tcase_add_test(tc, test_nvml_mig);
        tcase_add_test(tc, test_nvml_mig_minors_missing);
        tcase_add_test(tc, test_nvml_health);
        tcase_add_test(tc, test_nvml_telemetry);
        tcase_add_test(tc, test_proc_health_unknown);
        tcase_add_test(tc, test_mig_minors_hostile);
        tcase_add_test(tc, test_block_disagree);
        tcase_add_test(tc, test_nvml_failures);
        tcase_add_test(tc, test_nvml_hang_blocks);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(suite());
}
