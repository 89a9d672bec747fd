#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/macro.h"

#include "gres-proc.h"

#define INFO_MAX (64 * 1024)

int gres_bus_id_normalise(const char *in, char out[static 16]) {
        unsigned dom, bus, dev, fn;
        int n = 0;

        if (strlen(in) > 16 || sscanf(in, "%8x:%2x:%2x.%1x%n", &dom, &bus, &dev, &fn, &n) != 4 ||
            in[n] != 0 || dom > 0xffff || dev > 0x1f || fn > 7)
                return -EINVAL;
        snprintf(out, 16, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
        return 0;
}

/* The value of "Key:   value" in the information file, or NULL. */
static char *info_value(char *text, const char *key) {
        size_t klen = strlen(key);

        for (char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
                char *end = strchrnul(line, '\n'), *v;

                if ((size_t) (end - line) <= klen || strncmp(line, key, klen) != 0 || line[klen] != ':')
                        continue;
                v = line + klen + 1;
                v += strspn(v, " \t");
                while (end > v && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
                        end--;
                return strndup(v, end - v);
        }
        return NULL;
}

static int parse_minor(const char *s, unsigned *ret) {
        char *end;
        unsigned long v;

        if (isempty(s) || s[0] < '0' || s[0] > '9')
                return -EBADMSG;
        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno || *end || v > 255) /* the driver's character device has 256 minors at most */
                return -EBADMSG;
        *ret = v;
        return 0;
}

/* local_cpulist as the kernel writes it ("0-47,96-143\n"); anything else is ignored. */
static char *read_cpulist(const char *root, const char *bus) {
        _cleanup_free_ char *p = NULL, *buf = NULL;
        size_t len;

        if (asprintf(&p, "%s/sys/bus/pci/devices/%s/local_cpulist", root, bus) < 0 ||
            fileio_read(p, 4096, &buf, &len) < 0)
                return NULL;
        while (len > 0 && buf[len - 1] == '\n')
                buf[--len] = 0;
        if (len == 0 || strspn(buf, "0123456789,-") != len)
                return NULL;
        return TAKE_PTR(buf);
}

/* A value the driver wrote, made safe to show (gres_text_safe()); NULL if absent. */
static int info_text(char *text, const char *key, char **ret) {
        _cleanup_free_ char *raw = info_value(text, key);

        *ret = raw ? gres_text_safe(raw) : NULL;
        return raw && !*ret ? -ENOMEM : 0;
}

static int gpu_from_info(const char *root, const char *dir, GresGpu *g) {
        _cleanup_free_ char *p = NULL, *text = NULL, *minor = NULL, *bus = NULL, *dev = NULL;
        char norm[16];
        size_t len;
        int r;

        if (asprintf(&p, "%s/proc/driver/nvidia/gpus/%s/information", root, dir) < 0)
                return -ENOMEM;
        r = fileio_read(p, INFO_MAX, &text, &len);
        if (r < 0)
                return r;
        if (strlen(text) != len)
                return -EBADMSG;
        if (info_text(text, "Model", &g->name) < 0 || info_text(text, "GPU UUID", &g->uuid) < 0)
                return -ENOMEM;
        bus = info_value(text, "Bus Location");
        minor = info_value(text, "Device Minor");
        if (!g->name || !bus || !minor || parse_minor(minor, &g->minor) < 0 ||
            gres_bus_id_normalise(bus, norm) < 0)
                return -EBADMSG;
        g->bus_id = strdup(norm);
        if (!g->bus_id || asprintf(&dev, "%s/dev/nvidia%u", root, g->minor) < 0)
                return -ENOMEM;
        if (access(dev, F_OK) < 0)
                return -ENODEV;
        g->cpus = read_cpulist(root, norm);
        return 0;
}

static int by_bus_id(const void *a, const void *b) {
        return strcmp(((const GresGpu *) a)->bus_id, ((const GresGpu *) b)->bus_id);
}

int gres_proc_discover(const char *root, GresGpu **ret, size_t *ret_n) {
        _cleanup_free_ char *p = NULL;
        GresGpu *gpus = NULL;
        size_t n = 0;
        DIR *d;
        int r = 0;

        if (asprintf(&p, "%s/proc/driver/nvidia/gpus", root) < 0)
                return -ENOMEM;
        d = opendir(p);
        if (!d) {
                if (errno != ENOENT)
                        return -errno;
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        for (struct dirent *de; r == 0 && (de = readdir(d));) {
                GresGpu g = {}, *grown;

                if (de->d_name[0] == '.')
                        continue;
                r = gpu_from_info(root, de->d_name, &g);
                if (r == -ENODEV) {
                        gres_gpu_done(&g);
                        r = 0;
                        continue;
                }
                grown = r == 0 ? reallocarray(gpus, n + 1, sizeof(*gpus)) : NULL;
                if (!grown) {
                        gres_gpu_done(&g);
                        r = r ?: -ENOMEM;
                        break;
                }
                gpus = grown;
                gpus[n++] = g;
        }
        closedir(d);
        if (r < 0) {
                gres_gpus_free(gpus, n);
                return r;
        }
        if (n > 0)
                qsort(gpus, n, sizeof(*gpus), by_bus_id);
        for (size_t i = 0; i < n; i++)
                gpus[i].index = i;
        *ret = gpus;
        *ret_n = n;
        return 0;
}

#define MIG_MINORS_MAX (256 * 1024)
#define CAP_MINOR_MAX (1U << 20)

/* One "<name> <minor>" line of mig-minors: *ret_minor when @name is @want. */
static int mig_line(const char *line, size_t len, const char *want, unsigned *ret_minor) {
        size_t wl = strlen(want);
        unsigned long v = 0;

        if (len <= wl + 1 || memcmp(line, want, wl) != 0 || line[wl] != ' ')
                return 0;
        for (size_t i = wl + 1; i < len; i++) {
                if (line[i] < '0' || line[i] > '9')
                        return -EBADMSG;
                v = v * 10 + (unsigned long) (line[i] - '0');
                if (v >= CAP_MINOR_MAX)
                        return -EBADMSG;
        }
        *ret_minor = (unsigned) v;
        return 1;
}

int gres_proc_mig_minors(const char *root, unsigned gpu, unsigned gi, unsigned ci, unsigned *ret_gi_minor,
                         unsigned *ret_ci_minor) {
        _cleanup_free_ char *p = NULL, *text = NULL;
        char want_gi[64], want_ci[80];
        bool have_gi = false, have_ci = false;
        size_t len;
        int r;

        if (asprintf(&p, "%s/proc/driver/nvidia-caps/mig-minors", root) < 0)
                return -ENOMEM;
        r = fileio_read(p, MIG_MINORS_MAX, &text, &len);
        if (r < 0)
                return r;
        if (strlen(text) != len)
                return -EBADMSG;
        snprintf(want_gi, sizeof(want_gi), "gpu%u/gi%u/access", gpu, gi);
        snprintf(want_ci, sizeof(want_ci), "gpu%u/gi%u/ci%u/access", gpu, gi, ci);
        for (const char *l = text; *l;) {
                const char *nl = strchr(l, '\n');
                size_t n = nl ? (size_t) (nl - l) : strlen(l);

                r = mig_line(l, n, want_gi, ret_gi_minor);
                if (r < 0)
                        return r;
                have_gi = have_gi || r > 0;
                r = mig_line(l, n, want_ci, ret_ci_minor);
                if (r < 0)
                        return r;
                have_ci = have_ci || r > 0;
                l += n + (nl ? 1 : 0);
        }
        return have_gi && have_ci ? 0 : -ENOENT;
}
