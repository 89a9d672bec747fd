/* A module's socket methods on a host of the fuzzer's own: every answer
 * must be valid Varlink JSON whatever the parameters and whatever the text
 * from outside (a script's output, scontrol's answer, a file's name).
 *
 * The module (health, prolog, gres or authkeys, linked in) is started with
 * a fixed section through the real config parser; the host's other entries
 * are the fuzzer's: replies are formatted as the host formats them and
 * abort when varlink_format() refuses them, which the real host's last
 * defence (varlink_repair_utf8()) would hide.  The input is a list of
 * operations, each a byte then its operands:
 *   0 call    method (1 byte), params (2-byte length, JSON text; what does
 *             not parse as an object becomes the parameters of the seeds)
 *   1 spawn   the oldest child ends: exit status (1 byte), its output
 *             (2-byte length, any bytes)
 *   2 run     a job (1 byte) runs: prepare, and for a job that is not
 *             async, work and done in place
 *   3 gone    the peer of the oldest call not answered hangs up
 *   4 text    for a module that reads files (gres, authkeys): one of them
 *             (1 byte) gets new content (2-byte length, any bytes)
 * A job run in a child (SUNKD_JOB_CHILD) runs in place, its result handed
 * to `done` through JSON text as the host's pipe hands it over.  At the end
 * every child ends with no output and the module stops. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"
#include "module-loader.h"
#include "util/cleanup.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "util/text-escape.h"
#include "proto/varlink.h"
#include "fuzz-reply.h"

extern const sunkd_module sunkd_module_v1;

#define MAX_METHODS 16
#define MAX_JOBS 32
#define MAX_SPAWNS 16
#define MAX_CALLS 64

struct sunkd_call {
        bool replied;
        void (*gone)(sunkd_call *call, void *userdata);
        void *gone_userdata;
};

struct sunkd_job {
        sunkd_job_spec spec;
        bool running;
        void *input;
};

typedef struct Spawn {
        sunkd_spawn_cb cb;
        void *userdata;
} Spawn;

static struct {
        sunkd_ctx ctx;
        void *state;
        sunkd_method methods[MAX_METHODS];
        size_t n_methods;
        sunkd_job *jobs[MAX_JOBS];
        size_t n_jobs;
        Spawn spawns[MAX_SPAWNS];
        size_t n_spawns;
        sunkd_call *calls[MAX_CALLS];
        size_t n_calls;
        char dir[64], state_dir[96], runtime_dir[96];
        Config *config;
        bool stopping;
        const struct World *world;
        bool no_sleep; /* a job's work runs: its sleeps take no time */
        char nvml_library[PATH_MAX];
} H;

/* ---- replies: checked by fuzz-reply.h ---------------------------------- */

static void call_forget(sunkd_call *call) {
        for (size_t i = 0; i < H.n_calls; i++)
                if (H.calls[i] == call) {
                        memmove(H.calls + i, H.calls + i + 1, (H.n_calls - i - 1) * sizeof(*H.calls));
                        H.n_calls--;
                        break;
                }
        free(call);
}

/* A call answered is freed by op_call, or at the end. */
static int f_reply_error(sunkd_call *call, const char *error, json_object *params) {
        return fuzz_reply_once(call ? &call->replied : NULL, error, params);
}

static int f_reply(sunkd_call *call, json_object *params) {
        return f_reply_error(call, NULL, params);
}

/* ---- the rest of the host ----------------------------------------------- */

static int f_log(sunkd_ctx *c, int level, int r, const char *fmt, ...) {
        return r < 0 ? r : -r;
}

static int f_log_fields(sunkd_ctx *c, int level, const char *const *fields, const char *fmt, ...) {
        return 0;
}

static const char *f_module_name(sunkd_ctx *c) {
        return sunkd_module_v1.name;
}

static const char *f_state_dir(sunkd_ctx *c) {
        return H.state_dir;
}

static const char *f_runtime_dir(sunkd_ctx *c) {
        return H.runtime_dir;
}

static int f_job_add(sunkd_ctx *c, const sunkd_job_spec *spec, sunkd_job **ret) {
        sunkd_job *j;

        if (H.stopping)
                return -ESHUTDOWN;
        if (H.n_jobs >= MAX_JOBS || !(j = calloc(1, sizeof(*j))))
                return -ENOMEM;
        j->spec = *spec;
        H.jobs[H.n_jobs++] = j;
        if (ret)
                *ret = j;
        return 0;
}

static int f_job_trigger(sunkd_job *j, const char *reason) {
        return 0;
}

static int f_job_set_interval(sunkd_job *j, uint64_t interval, uint64_t splay) {
        return 0;
}

static int f_job_set_message(sunkd_job *j, const char *message) {
        return 0; /* the host's (sched.c), fuzzed apart */
}

static int f_job_update(sunkd_job *j, const sunkd_job_spec *spec) {
        return 0;
}

static void *job_state(sunkd_job *j) {
        return j->spec.userdata ?: H.state;
}

static int f_job_complete(sunkd_job *j, int r) {
        if (!j->running)
                return -ESTALE;
        j->running = false;
        if (j->spec.done)
                (void) j->spec.done(job_state(j), r, TAKE_PTR(j->input), NULL);
        return 0;
}

static int f_methods_add(sunkd_ctx *c, const sunkd_method *methods, size_t n) {
        for (size_t i = 0; i < n && H.n_methods < MAX_METHODS; i++)
                H.methods[H.n_methods++] = methods[i];
        return 0;
}

static uid_t f_call_uid(sunkd_call *call) {
        return 0;
}

static gid_t f_call_gid(sunkd_call *call) {
        return 0;
}

static pid_t f_call_pid(sunkd_call *call) {
        return 1;
}

static int f_call_on_gone(sunkd_call *call, void (*cb)(sunkd_call *, void *), void *userdata) {
        if (!call || call->replied)
                return -EINVAL;
        call->gone = cb;
        call->gone_userdata = userdata;
        return 0;
}

static int f_metric_add(sunkd_ctx *c, const sunkd_metric_spec *spec, sunkd_metric **ret) {
        static char dummy;

        *ret = (sunkd_metric *) &dummy;
        return 0;
}

static int f_metric_set(sunkd_metric *m, double value, const char *const *labels) {
        return 0;
}

static int f_metric_remove(sunkd_metric *m, const char *const *labels) {
        return 0;
}

static int f_spawn_start(sunkd_ctx *c, const sunkd_spawn_spec *spec, sunkd_spawn_cb cb, void *userdata,
                         sunkd_child **ret) {
        if (H.stopping)
                return -ESHUTDOWN;
        if (H.n_spawns >= MAX_SPAWNS)
                return -EAGAIN;
        H.spawns[H.n_spawns++] = (Spawn){ .cb = cb, .userdata = userdata };
        if (ret)
                *ret = (sunkd_child *) &H.spawns[H.n_spawns - 1];
        return 0;
}

static int f_spawn(sunkd_ctx *c, const sunkd_spawn_spec *spec, sunkd_spawn_cb cb, void *userdata) {
        return f_spawn_start(c, spec, cb, userdata, NULL);
}

static int f_child_kill(sunkd_child *child) {
        return 0;
}

static int f_watch_add(sunkd_ctx *c, const char *path, void (*cb)(void *, const char *), void *userdata,
                       sunkd_watch **ret) {
        if (ret)
                *ret = NULL;
        return 0;
}

static void f_watch_remove(sunkd_watch *w) {
}

static int f_fact_publish(sunkd_ctx *c, const char *name, json_object *value) {
        json_object_put(value);
        return 0;
}

static json_object *f_fact_get(sunkd_ctx *c, const char *name) {
        return NULL;
}

static int f_fact_subscribe(sunkd_ctx *c, const char *name, void (*cb)(void *, const char *, json_object *),
                            void *userdata) {
        return 0;
}

static void f_linger_end(sunkd_ctx *c) {
}

static sunkd_host_api api;

static void api_init(void) {
        api = host_api; /* the config readers and file writers are the host's own */
        api.log = f_log;
        api.log_fields = f_log_fields;
        api.module_name = f_module_name;
        api.state_dir = f_state_dir;
        api.runtime_dir = f_runtime_dir;
        api.job_add = f_job_add;
        api.job_trigger = f_job_trigger;
        api.job_set_interval = f_job_set_interval;
        api.job_set_message = f_job_set_message;
        api.job_update = f_job_update;
        api.job_complete = f_job_complete;
        api.methods_add = f_methods_add;
        api.reply = f_reply;
        api.reply_error = f_reply_error;
        api.call_uid = f_call_uid;
        api.call_gid = f_call_gid;
        api.call_pid = f_call_pid;
        api.call_on_gone = f_call_on_gone;
        api.metric_add = f_metric_add;
        api.metric_set = f_metric_set;
        api.metric_add_value = f_metric_set;
        api.metric_remove = f_metric_remove;
        api.spawn = f_spawn;
        api.spawn_start = f_spawn_start;
        api.child_kill = f_child_kill;
        api.watch_add = f_watch_add;
        api.watch_remove = f_watch_remove;
        api.fact_publish = f_fact_publish;
        api.fact_get = f_fact_get;
        api.fact_subscribe = f_fact_subscribe;
        api.fact_unsubscribe = f_fact_subscribe;
        api.linger_end = f_linger_end;
        H.ctx.api = &api;
}

/* ---- the module's world ------------------------------------------------- */

static void write_bytes(const char *path, const void *data, size_t len, mode_t mode) {
        FILE *f = fopen(path, "we");

        if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0 || chmod(path, mode) < 0)
                abort();
}

static void write_file(const char *path, const char *text, mode_t mode) {
        write_bytes(path, text, strlen(text), mode);
}

static char *world_path(const char *rel) {
        static char path[512];

        if (snprintf(path, sizeof(path), "%s/%s", H.dir, rel) >= (int) sizeof(path))
                abort();
        return path;
}

/* ---- gres: a fake NVML and a fake /proc, /dev and kernel log ------------- */

/* The fake NVML's description, less what would make nvmlInit wait. */
static void gres_nvml(const char *text, size_t len) {
        FILE *f = fopen(world_path("nvml.conf"), "we");

        if (!f)
                abort();
        for (size_t i = 0; i < len;) {
                const char *nl = memchr(text + i, '\n', len - i);
                size_t n = nl ? (size_t) (nl - text - i) + 1 : len - i;

                if (!(n >= 5 && memcmp(text + i, "init ", 5) == 0 &&
                      (n < 9 || memcmp(text + i + 5, "fail", 4) != 0)))
                        fwrite(text + i, 1, n, f);
                i += n;
        }
        /* so that the XID watch's wait never waits (gres_before_run()) */
        fprintf(f, "\nevents|%s\n", world_path("events"));
        if (fclose(f) != 0)
                abort();
}

static void gres_info(const char *text, size_t len) {
        write_bytes(world_path("root/proc/driver/nvidia/gpus/0000:18:00.0/information"), text, len, 0644);
}

/* The GPU directories but the first go. */
static void gres_info_unnamed(void) {
        const char *dir = world_path("root/proc/driver/nvidia/gpus");
        DIR *d = opendir(dir);

        for (struct dirent *de; d && (de = readdir(d));)
                if (de->d_name[0] != '.' && !streq(de->d_name, "0000:18:00.0")) {
                        char info[300];

                        snprintf(info, sizeof(info), "%s/information", de->d_name);
                        (void) unlinkat(dirfd(d), info, 0);
                        (void) unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
                }
        if (d)
                closedir(d);
}

/* A second GPU directory: its name is the text's first line (a file name's
 * bytes), its information the rest. */
static void gres_info_named(const char *text, size_t len) {
        char name[256], path[512];
        const char *nl = memchr(text, '\n', len);
        size_t n = 0, skip = nl ? (size_t) (nl - text) + 1 : len;

        for (size_t i = 0; i < skip && n < sizeof(name) - 1; i++)
                if (text[i] != '/' && text[i] != 0 && text[i] != '\n')
                        name[n++] = text[i];
        name[n] = 0;
        if (n == 0 || streq(name, ".") || streq(name, ".."))
                return;
        gres_info_unnamed();
        snprintf(path, sizeof(path), "root/proc/driver/nvidia/gpus/%s", name);
        if (mkdir(world_path(path), 0755) < 0)
                return;
        snprintf(path, sizeof(path), "root/proc/driver/nvidia/gpus/%s/information", name);
        write_bytes(world_path(path), text + skip, len - skip, 0644);
}

static void gres_kmsg(const char *text, size_t len) {
        write_bytes(world_path("root/dev/kmsg"), text, len, 0644);
}

static void gres_event(const char *text, size_t len) {
        write_bytes(world_path("events/a-event"), text, len, 0644);
}

static void gres_slurm_conf(const char *text, size_t len) {
        write_bytes(world_path("slurm.conf"), text, len, 0644);
}

/* The fake NVML's wait ends at once: with the event written, else GPU_IS_LOST. */
static void gres_before_run(sunkd_job *j) {
        if (streq(j->spec.name, "gres.events"))
                write_file(world_path("events/zz-lost"), "lost", 0644);
}

static void gres_world(void) {
        static const char *const dirs[] = { "root/proc",
                                            "root/proc/driver",
                                            "root/proc/driver/nvidia",
                                            "root/proc/driver/nvidia/gpus",
                                            "root/proc/driver/nvidia/gpus/0000:18:00.0",
                                            "root/dev",
                                            "root/sys",
                                            "events" };
        char exe[PATH_MAX], lib[PATH_MAX + 64];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

        for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
                (void) mkdir(world_path(dirs[i]), 0755);
        /* the fake NVML, built beside the fuzz targets */
        if (n <= 0)
                abort();
        exe[n] = 0;
        snprintf(lib, sizeof(lib), "%s/../fake-nvml/.libs/libnvidia-ml.so", dirname(exe));
        if (!realpath(lib, exe)) {
                fprintf(stderr, "%s: %m (build tests/fake-nvml/libnvidia-ml.la)\n", lib);
                abort();
        }
        snprintf(H.nvml_library, sizeof(H.nvml_library), "%s", exe);
        setenv("FAKE_NVML_CONFIG", world_path("nvml.conf"), 1);
}

/* Each input starts from two GPUs, one through NVML, one through /proc. */
static void gres_reset(void) {
        static const char info[] =
                "Model: \t NVIDIA H100\nGPU UUID: \t GPU-11111111-2222-3333-4444-555555555555\n"
                "Bus Location: \t 0000:18:00.0\nDevice Minor: \t 0\n";
        static const char nvml[] = "gpu|0000:18:00.0|0|NVIDIA H100|GPU-1|85899345920|0-3|-|-\n";

        gres_info_unnamed();
        write_file(world_path("root/dev/nvidia0"), "", 0644);
        write_file(world_path("root/dev/nvidia1"), "", 0644);
        write_file(world_path("root/dev/kmsg"), "", 0644);
        write_file(world_path("slurm.conf"), "NodeName=n1 Gres=gpu:nvidia_h100:2\n", 0644);
        gres_info(info, sizeof(info) - 1);
        gres_nvml(nvml, sizeof(nvml) - 1);
}

/* ---- authkeys: the sshkey map and the node's accounts ------------------- */

static void authkeys_cache(const char *text, size_t len) {
        write_bytes(world_path("sshkey.cache"), text, len, 0644);
}

static void authkeys_passwd(const char *text, size_t len) {
        write_bytes(world_path("passwd"), text, len, 0644);
}

static void authkeys_world(void) {
}

static void authkeys_reset(void) {
        write_file(world_path("passwd"), "root:x:0:0::/root:/bin/sh\n", 0644);
        write_file(world_path("sshkey.cache"),
                   "alice:[\"ssh-ed25519 "
                   "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl a@b\"]\n",
                   0644);
}

typedef struct World {
        const char *name;
        void (*init)(void);
        void (*reset)(void); /* before each input */
        void (*before_run)(sunkd_job *j);
        void (*texts[8])(const char *text, size_t len);
        size_t n_texts;
} World;

static const World worlds[] = {
        { "gres",
          gres_world,
          gres_reset,
          gres_before_run,
          { gres_nvml, gres_info, gres_info_named, gres_kmsg, gres_event, gres_slurm_conf },
          6 },
        { "authkeys", authkeys_world, authkeys_reset, NULL, { authkeys_cache, authkeys_passwd }, 2 },
};

static const char *section(void) {
        static char text[2048];

        if (streq(sunkd_module_v1.name, "gres")) {
                if (snprintf(
                            text, sizeof(text),
                            "modules:\n  gres:\n    node_name: n1\n    root: %s/root\n    nvml_library: %s\n"
                            "    slurm_conf: %s/slurm.conf\n    gres_conf: %s/gres.conf\n"
                            "    type_alias: {NVIDIA H100: h100}\n",
                            H.dir, H.nvml_library, H.dir, H.dir) >= (int) sizeof(text))
                        abort();
        } else if (streq(sunkd_module_v1.name, "authkeys"))
                snprintf(text, sizeof(text),
                         "modules:\n  authkeys:\n    sshkey_cache: %s/sshkey.cache\n    local_passwd: "
                         "%s/passwd\n",
                         H.dir, H.dir);
        else if (streq(sunkd_module_v1.name, "health"))
                snprintf(text, sizeof(text),
                         "modules:\n  health:\n    node_name: n1\n    interval: 1h\n    fail_after: 1\n"
                         "    transport: scontrol\n    root: %s/root\n"
                         "    scontrol: {path: /bin/true}\n    checks:\n"
                         "      - {name: s, type: script, path: /bin/true}\n"
                         "      - {name: r, type: script, path: /bin/true, action: report}\n"
                         "      - {name: m, type: memory, min_total: 1M}\n",
                         H.dir);
        else
                snprintf(text, sizeof(text),
                         "modules:\n  prolog:\n    prolog_dir: %s/p.d\n    epilog_dir: %s/e.d\n"
                         "    keep_runs: 3\n",
                         H.dir, H.dir);
        return text;
}

static void world_init(void) {
        char path[256];
        _cleanup_free_ char *error = NULL;

        api_init();
        strcpy(H.dir, "/tmp/fuzz-methods.XXXXXX");
        if (!mkdtemp(H.dir) || chmod(H.dir, 0755) < 0)
                abort();
        snprintf(H.state_dir, sizeof(H.state_dir), "%s/state", H.dir);
        mkdir(H.state_dir, 0700);
        snprintf(H.runtime_dir, sizeof(H.runtime_dir), "%s/run", H.dir);
        mkdir(H.runtime_dir, 0700);
        snprintf(path, sizeof(path), "%s/root", H.dir);
        mkdir(path, 0755);
        snprintf(path, sizeof(path), "%s/p.d", H.dir);
        mkdir(path, 0755);
        snprintf(path, sizeof(path), "%s/e.d", H.dir);
        mkdir(path, 0755);
        snprintf(path, sizeof(path), "%s/p.d/10-first", H.dir);
        write_file(path, "#!/bin/sh\nexit 0\n", 0755);
        snprintf(path, sizeof(path), "%s/p.d/20-caf\xe9\xff", H.dir);
        write_file(path, "#!/bin/sh\nexit 1\n", 0755);
        snprintf(path, sizeof(path), "%s/e.d/90-clean", H.dir);
        write_file(path, "#!/bin/sh\nexit 0\n", 0755);
        for (size_t i = 0; i < ELEMENTSOF(worlds); i++)
                if (streq(worlds[i].name, sunkd_module_v1.name))
                        H.world = &worlds[i];
        if (H.world)
                H.world->init();
        if (H.world)
                H.world->reset();
        if (config_parse("fuzz.yaml", section(), strlen(section()), &H.config, &error) < 0) {
                fprintf(stderr, "fuzz.yaml: %s\n", error ?: "?");
                abort();
        }
}

/* What the last input's module kept (its state file, the prolog client's
 * settings, gres's XID log in a directory of its own) goes: each input
 * starts from nothing. */
static void dir_clear(const char *path) {
        DIR *d = opendir(path);
        struct dirent *de;

        if (!d)
                return;
        while ((de = readdir(d)))
                if (de->d_name[0] != '.' && unlinkat(dirfd(d), de->d_name, 0) < 0 && errno == EISDIR) {
                        char sub[512];

                        snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
                        dir_clear(sub);
                        (void) unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
                }
        closedir(d);
}

static void state_clear(void) {
        dir_clear(H.state_dir);
        dir_clear(H.runtime_dir);
        if (H.world && streq(H.world->name, "gres"))
                dir_clear(world_path("events"));
}

/* libslurm's hostlist parser (gres's slurm.conf check) leaks on some
 * host lists of its own accord; in sunkd it runs in a child that exits. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) {
        return "leak:libslurm.so\n";
}

/* The XID watch waits out its window when it has no GPU to watch: on this
 * host time passes at once while a job's work runs. */
int nanosleep(const struct timespec *req, struct timespec *rem) {
        return H.no_sleep ? 0 : (int) syscall(SYS_nanosleep, req, rem);
}

/* ---- the operations ------------------------------------------------------ */

typedef struct Input {
        const uint8_t *p;
        size_t n;
} Input;

static unsigned take_byte(Input *in) {
        if (in->n == 0)
                return 0;
        in->n--;
        return *in->p++;
}

static const char *take_text(Input *in, size_t *ret_len) {
        size_t len = take_byte(in);
        const char *s;

        len |= (size_t) take_byte(in) << 8;
        len = len < in->n ? len : in->n;
        s = (const char *) in->p;
        in->p += len;
        in->n -= len;
        *ret_len = len;
        return s;
}

static json_object *default_params(const char *text, size_t len) {
        _cleanup_free_ char *clean = text_escape(text, len, 0, 0);
        json_object *p = json_object_new_object(), *env = json_object_new_array();

        json_object_array_add(env, json_object_new_string("SLURM_JOB_ID=42"));
        json_object_array_add(env, json_object_new_string(clean ?: ""));
        json_object_object_add(p, "kind", json_object_new_string("prolog"));
        json_object_object_add(p, "env", env);
        json_object_object_add(p, "reason", json_object_new_string(clean ?: ""));
        return p;
}

static void op_call(Input *in) {
        unsigned m = take_byte(in);
        size_t len;
        const char *text = take_text(in, &len);
        _cleanup_json_ json_object *params = NULL;
        sunkd_call *call;
        int r;

        for (size_t i = H.n_calls; i-- > 0;)
                if (H.calls[i]->replied)
                        call_forget(H.calls[i]);
        if (H.n_methods == 0 || H.n_calls >= MAX_CALLS)
                return;
        if (varlink_parse(text, len, 65536, 16, &params) < 0)
                params = default_params(text, len);
        if (!params || !(call = calloc(1, sizeof(*call))))
                return;
        H.calls[H.n_calls++] = call;
        r = H.methods[m % H.n_methods].fn(call, params, H.state);
        if (!call->replied && r == SUNKD_CALL_PENDING)
                return;
        /* a handler's error: the host answers it */
        if (!call->replied)
                (void) f_reply_error(call, "io.sunkd.InternalError", NULL);
        call_forget(call);
}

static void spawn_end(unsigned status, const char *out, size_t len) {
        Spawn s;
        _cleanup_free_ char *copy = NULL;
        sunkd_spawn_result res;

        if (H.n_spawns == 0)
                return;
        s = H.spawns[0];
        memmove(H.spawns, H.spawns + 1, (--H.n_spawns) * sizeof(*H.spawns));
        copy = malloc(len + 1);
        if (!copy)
                return;
        memcpy(copy, out, len);
        copy[len] = 0;
        res = (sunkd_spawn_result){
                .pid = 0,
                .exit_code = (int) (status & 0x7f),
                .signal = status & 0x80 ? 9 : 0,
                .timed_out = status == 0xff,
                .output = copy,
                .output_len = strlen(copy), /* a child's NUL ends what the host hands over */
                .err_output = "",
        };
        s.cb(s.userdata, 0, &res);
}

static void op_spawn(Input *in) {
        unsigned status = take_byte(in);
        size_t len;
        const char *text = take_text(in, &len);

        spawn_end(status, text, len);
}

/* As job-child.c hands a child's result over: written as JSON text, read
 * back with json-c's parser. */
static json_object *child_result(json_object *result, int *r) {
        _cleanup_json_ json_object *o = json_object_new_object(), *back = NULL;
        json_object *res = NULL;

        if (!o) {
                json_object_put(result);
                return NULL;
        }
        json_object_object_add(o, "r", json_object_new_int(*r));
        if (result)
                json_object_object_add(o, "result", result);
        back = json_tokener_parse(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
        if (!back) {
                *r = -EPROTO;
                return NULL;
        }
        if (json_object_object_get_ex(back, "result", &res))
                res = json_object_get(res);
        return res;
}

static void op_run(Input *in) {
        unsigned k = take_byte(in);
        sunkd_job *j;
        void *input = NULL, *result = NULL;
        int r = 0;

        if (H.n_jobs == 0)
                return;
        j = H.jobs[k % H.n_jobs];
        if (j->running)
                return;
        if (j->spec.prepare && (r = j->spec.prepare(job_state(j), &input)) < 0)
                return;
        if (j->spec.flags & SUNKD_JOB_ASYNC) {
                j->running = true;
                j->input = input;
                return;
        }
        if (H.world && H.world->before_run)
                H.world->before_run(j);
        H.no_sleep = true;
        if (j->spec.work)
                r = j->spec.work(job_state(j), input, NULL, &result);
        H.no_sleep = false;
        if (j->spec.flags & SUNKD_JOB_CHILD)
                result = child_result(result, &r);
        if (j->spec.done)
                (void) j->spec.done(job_state(j), r, input, result);
}

static void op_text(Input *in) {
        unsigned k = take_byte(in);
        size_t len;
        const char *text = take_text(in, &len);

        if (H.world && H.world->n_texts > 0)
                H.world->texts[k % H.world->n_texts](text, len);
}

static void op_gone(Input *in) {
        sunkd_call *call;

        for (size_t i = 0; i < H.n_calls; i++) {
                call = H.calls[i];
                if (call->replied)
                        continue;
                if (call->gone)
                        call->gone(call, call->gone_userdata);
                return;
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static void (*const ops[])(Input *) = { op_call, op_spawn, op_run, op_gone, op_text };
        Input in = { data, size };
        const ConfModule *cm;
        unsigned n_ops;

        if (!H.config)
                world_init();
        state_clear();
        if (H.world)
                H.world->reset();
        cm = config_find_module(H.config, sunkd_module_v1.name);
        H.state = NULL;
        if (!cm || sunkd_module_v1.init(&H.ctx, (const sunkd_cfg *) cm->cfg, &H.state) < 0)
                abort();
        /* (health's and prolog's inputs read no files: their corpora keep their meaning) */
        n_ops = H.world ? 5 : 4;
        for (unsigned steps = 0; in.n > 0 && steps < 64; steps++)
                ops[take_byte(&in) % n_ops](&in);
        /* the children end, the async runs with them, and the module stops */
        for (unsigned i = 0; i < 64 && H.n_spawns > 0; i++)
                spawn_end(0, "", 0);
        for (size_t i = 0; i < H.n_jobs; i++)
                if (H.jobs[i]->running)
                        (void) f_job_complete(H.jobs[i], -ECANCELED);
        H.stopping = true;
        sunkd_module_v1.fini(H.state);
        H.stopping = false;
        while (H.n_calls > 0)
                call_forget(H.calls[0]);
        for (size_t i = 0; i < H.n_jobs; i++)
                free(H.jobs[i]);
        H.n_jobs = H.n_methods = H.n_spawns = 0;
        return 0;
}
