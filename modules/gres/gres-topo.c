#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/strbuf.h"

#include "gres-topo.h"

#define WORD_BITS (8 * sizeof(unsigned long))

typedef struct Cpu {
        uint32_t id;
        int64_t pkg, die, core;
        uint32_t core_first; /* the lowest CPU id of its core */
        uint32_t pkg_first;  /* ... and of its socket */
} Cpu;

static bool bit_get(const unsigned long *mask, size_t i) {
        return mask[i / WORD_BITS] & (1UL << (i % WORD_BITS));
}

static void bit_set(unsigned long *mask, size_t i) {
        mask[i / WORD_BITS] |= 1UL << (i % WORD_BITS);
}

static int parse_index(const char *s, const char **end, size_t bits, size_t *ret) {
        size_t v = 0;

        if (*s < '0' || *s > '9')
                return -EINVAL;
        for (; *s >= '0' && *s <= '9'; s++) {
                v = v * 10 + (size_t) (*s - '0');
                if (v >= bits)
                        return -ERANGE;
        }
        *end = s;
        *ret = v;
        return 0;
}

int gres_cpulist_parse(const char *s, unsigned long *mask, size_t bits) {
        if (!s || !*s)
                return -EINVAL;
        for (;;) {
                size_t a, b;
                int r = parse_index(s, &s, bits, &a);

                if (r < 0)
                        return r;
                b = a;
                if (*s == '-') {
                        r = parse_index(s + 1, &s, bits, &b);
                        if (r < 0)
                                return r;
                        if (b < a)
                                return -EINVAL;
                }
                for (size_t i = a; i <= b; i++)
                        bit_set(mask, i);
                if (*s == 0)
                        return 0;
                if (*s++ != ',')
                        return -EINVAL;
        }
}

char *gres_cpulist_format(const unsigned long *mask, size_t bits) {
        StrBuf b = {};

        strbuf_reserve(&b, 1);
        for (size_t i = 0; i < bits;) {
                size_t j = i;

                if (!bit_get(mask, i)) {
                        i++;
                        continue;
                }
                while (j + 1 < bits && bit_get(mask, j + 1))
                        j++;
                if (b.len > 0)
                        strbuf_putc(&b, ',');
                strbuf_put_u64(&b, i);
                if (j > i) {
                        strbuf_putc(&b, '-');
                        strbuf_put_u64(&b, j);
                }
                i = j + 1;
        }
        if (b.oom || b.len == 0) {
                strbuf_done(&b);
                return NULL;
        }
        return strbuf_steal(&b, NULL);
}

/* One topology file: a decimal integer (physical_package_id is -1 on some machines). */
static int read_id(const char *dir, const char *name, bool optional, int64_t *ret) {
        _cleanup_free_ char *p = NULL, *buf = NULL;
        char *end;
        size_t len;
        long long v;
        int r;

        if (asprintf(&p, "%s/topology/%s", dir, name) < 0)
                return -ENOMEM;
        r = fileio_read(p, 32, &buf, &len);
        if (r == -ENOENT && optional) {
                *ret = 0;
                return 0;
        }
        if (r < 0)
                return r;
        if (buf[0] != '-' && (buf[0] < '0' || buf[0] > '9'))
                return -EBADMSG;
        errno = 0;
        v = strtoll(buf, &end, 10);
        if (errno != 0 || end == buf || (*end != 0 && strcmp(end, "\n") != 0))
                return -EBADMSG;
        *ret = v;
        return 0;
}

/* "cpu<N>" with N a CPU id in canonical form; anything else (cpufreq, cpuidle, online) is not a CPU. */
static bool cpu_entry(const char *name, uint32_t *ret) {
        size_t v = 0;

        if (strncmp(name, "cpu", 3) != 0 || name[3] < '0' || name[3] > '9' || (name[3] == '0' && name[4]))
                return false;
        for (const char *s = name + 3; *s; s++) {
                if (*s < '0' || *s > '9')
                        return false;
                v = v * 10 + (size_t) (*s - '0');
                if (v > UINT32_MAX)
                        return false;
        }
        *ret = (uint32_t) v;
        return true;
}

static int cpu_read(const char *base, uint32_t id, Cpu *c) {
        _cleanup_free_ char *dir = NULL;
        int r;

        if (asprintf(&dir, "%s/cpu%u", base, id) < 0)
                return -ENOMEM;
        *c = (Cpu){ .id = id };
        r = read_id(dir, "physical_package_id", false, &c->pkg);
        if (r >= 0)
                r = read_id(dir, "die_id", true, &c->die);
        if (r >= 0)
                r = read_id(dir, "core_id", false, &c->core);
        return r;
}

static int cmp_i64(int64_t a, int64_t b) {
        return (a > b) - (a < b);
}

static int by_core(const void *x, const void *y) {
        const Cpu *a = x, *b = y;

        return cmp_i64(a->pkg, b->pkg) ?: cmp_i64(a->die, b->die) ?: cmp_i64(a->core, b->core)
                                      ?: cmp_i64(a->id, b->id);
}

static int by_slurm_order(const void *x, const void *y) {
        const Cpu *a = x, *b = y;

        return cmp_i64(a->pkg_first, b->pkg_first) ?: cmp_i64(a->core_first, b->core_first)
                                                    ?: cmp_i64(a->id, b->id);
}

/* The CPUs under @base whose topology is readable; offline ones have none and are left out. */
static int cpus_read(const char *base, Cpu **ret, size_t *ret_n) {
        _cleanup_closedir_ DIR *d = opendir(base);
        _cleanup_free_ Cpu *cpus = NULL;
        size_t n = 0, cap = 0;
        struct dirent *de;

        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                uint32_t id;
                int r;

                if (!cpu_entry(de->d_name, &id))
                        continue;
                if (id >= GRES_CPUS_MAX || n >= GRES_CPUS_MAX)
                        return -E2BIG;
                if (n == cap) {
                        Cpu *c = reallocarray(cpus, cap ? cap * 2 : 64, sizeof(Cpu));
                        if (!c)
                                return -ENOMEM;
                        cpus = c;
                        cap = cap ? cap * 2 : 64;
                }
                r = cpu_read(base, id, &cpus[n]);
                if (r == -ENOENT)
                        continue;
                if (r < 0)
                        return r;
                n++;
        }
        if (n == 0)
                return -ENOENT;
        *ret = TAKE_PTR(cpus);
        *ret_n = n;
        return 0;
}

static bool same_core(const Cpu *a, const Cpu *b) {
        return a->pkg == b->pkg && a->die == b->die && a->core == b->core;
}

/* Each CPU learns the first CPU of its core and of its socket: Slurm's sort keys. */
static void cpus_key(Cpu *cpus, size_t n) {
        qsort(cpus, n, sizeof(Cpu), by_core);
        for (size_t i = 0; i < n; i++)
                cpus[i].core_first =
                        i > 0 && same_core(&cpus[i - 1], &cpus[i]) ? cpus[i - 1].core_first : cpus[i].id;
        for (size_t i = 0, j; i < n; i = j) {
                uint32_t first = cpus[i].core_first;

                for (j = i; j < n && cpus[j].pkg == cpus[i].pkg; j++)
                        if (cpus[j].core_first < first)
                                first = cpus[j].core_first;
                for (size_t k = i; k < j; k++)
                        cpus[k].pkg_first = first;
        }
}

int gres_topo_load(const char *root, GresTopo *ret) {
        _cleanup_free_ char *base = NULL;
        _cleanup_free_ Cpu *cpus = NULL;
        GresTopo t = {};
        size_t n = 0;
        int r;

        if (asprintf(&base, "%s/sys/devices/system/cpu", root) < 0)
                return -ENOMEM;
        r = cpus_read(base, &cpus, &n);
        if (r < 0)
                return r;
        cpus_key(cpus, n);
        qsort(cpus, n, sizeof(Cpu), by_slurm_order);
        for (size_t i = 0; i < n; i++)
                if (cpus[i].id + 1 > t.n_cpus)
                        t.n_cpus = cpus[i].id + 1;
        t.core_of = malloc(t.n_cpus * sizeof(int32_t));
        if (!t.core_of)
                return -ENOMEM;
        for (size_t i = 0; i < t.n_cpus; i++)
                t.core_of[i] = -1;
        for (size_t i = 0; i < n; i++) {
                if (i > 0 && cpus[i].core_first != cpus[i - 1].core_first)
                        t.n_cores++;
                t.core_of[cpus[i].id] = (int32_t) t.n_cores;
        }
        t.n_cores++;
        *ret = t;
        return 0;
}

void gres_topo_done(GresTopo *t) {
        free(t->core_of);
        *t = (GresTopo){};
}

int gres_topo_cores(const GresTopo *t, const char *cpus, char **ret) {
        const size_t words = GRES_CPUS_MAX / WORD_BITS;
        _cleanup_free_ unsigned long *in = calloc(words, sizeof(unsigned long));
        _cleanup_free_ unsigned long *out = calloc(words, sizeof(unsigned long));
        int r;

        if (!in || !out)
                return -ENOMEM;
        r = gres_cpulist_parse(cpus, in, GRES_CPUS_MAX);
        if (r < 0)
                return r;
        for (size_t i = 0; i < t->n_cpus; i++)
                if (bit_get(in, i) && t->core_of[i] >= 0)
                        bit_set(out, (size_t) t->core_of[i]);
        *ret = gres_cpulist_format(out, t->n_cores);
        return 0;
}

int gres_topo_map_gpus(const char *root, GresGpu *gpus, size_t n) {
        GresTopo t = {};
        bool any = false;
        int r;

        for (size_t i = 0; i < n; i++)
                any = any || gpus[i].cpus;
        if (!any)
                return 0;
        r = gres_topo_load(root, &t);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n && r >= 0; i++)
                if (gpus[i].cpus && gres_topo_cores(&t, gpus[i].cpus, &gpus[i].cores) == -ENOMEM)
                        r = -ENOMEM;
        gres_topo_done(&t);
        return r < 0 ? r : 0;
}
