/* Fuzz target: a map file from an untrusted web server (or, built with
 * FUZZ_S3_OBJECT, an object of nsscache's s3 format from a bucket).  The
 * bytes are read as each of the maps (after a passwd file of the same
 * bytes, so shadow and sshkey lines have users to belong to) through the
 * mapper: never a crash or a leak; the only failure is a file that is not
 * one (cut short, not a JSON array); every entry kept renders again. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "modules/nsscache/cache/cache-format.h"
#include "modules/nsscache/files/http-automount.h"
#include "modules/nsscache/files/map-file.h"
#include "modules/nsscache/nsscache-conf.h"
#include "modules/nsscache/files/s3-object.h"
#include "modules/nsscache/mapper.h"
#include "tests/lib/scim-collect.h"
#include "util/cleanup.h"

#ifdef FUZZ_S3_OBJECT
#define FUZZ_PARSE s3_object_parse
#define FUZZ_MAPS (NSS_MAP_SSHKEY + 1) /* nsscache's s3 source has no netgroup map */
#else
#define FUZZ_PARSE map_file_parse
#define FUZZ_MAPS (NSS_MAP_NETGROUP + 1) /* automount: automount_map() */
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char conf_text[] =
        "[DEFAULT]\nsource = http\ncache = files\nmaps = passwd, shadow, group, sshkey, netgroup, "
        "automount\n"
        "files_dir = /tmp\ntimestamp_dir = /tmp\nhttp_passwd_url = http://127.0.0.1/p\n"
        "http_shadow_url = http://127.0.0.1/s\nhttp_group_url = http://127.0.0.1/g\n"
        "http_sshkey_url = http://127.0.0.1/k\nhttp_netgroup_url = http://127.0.0.1/n\n"
        "http_automount_base_url = http://127.0.0.1/am/\n";

#ifndef FUZZ_S3_OBJECT
/* Every map auto.master names is the same bytes (borrowed); auto.master itself is already there. */
static int automount_body(void *userdata, const char *name, const char *url, HttpBody *ret) {
        if (strcmp(name, NSS_MAP_AUTOMOUNT_COPY) != 0)
                *ret = *(const HttpBody *) userdata;
        return 0;
}
#endif

static int on_entry(void *userdata, NssMapType t, const void *entry) {
        return mapper_add_entry(userdata, t, entry);
}

static int on_bad(void *userdata, NssMapType t, size_t line, const char *name) {
        return mapper_reject_line(userdata, t, name);
}

static void one_map(const NsscacheConf *c, NssMapType t, const char *text, size_t size) {
        ScimCollect col = {};
        MapSink sink = scim_collect_sink(&col);
        Mapper *m = NULL;
        NssMaps maps = {};
        int r;

        if (mapper_new(c, &sink, &m) < 0)
                __builtin_trap();
        r = FUZZ_PARSE(NSS_MAP_PASSWD, text, size, on_entry, on_bad, m, NULL);
        if (r >= 0 && t != NSS_MAP_PASSWD)
                r = FUZZ_PARSE(t, text, size, on_entry, on_bad, m, NULL);
        if (r < 0 && r != -EBADMSG && r != -ENOMEM)
                __builtin_trap();
        if (r >= 0 && mapper_finish(m) < 0)
                __builtin_trap();
        scim_collect_take(&col, &maps);
        if (r >= 0) {
                _cleanup_free_ char *buf = NULL, *err = NULL;
                size_t len = 0, n = 0;

                if (cache_format_render(&maps, t, &buf, &len, &n, &err) < 0 || n != nss_maps_count(&maps, t))
                        __builtin_trap();
        }
        nss_maps_done(&maps);
        mapper_free(m);
        scim_collect_done(&col);
}

#ifndef FUZZ_S3_OBJECT
/* The bytes as an http source's auto.master and as the map each of its lines names. */
static void automount_map(const NsscacheConf *c, const char *text, size_t size) {
        ScimCollect col = {};
        MapSink sink = scim_collect_sink(&col);
        Mapper *m = NULL;
        NssMaps maps = {};
        HttpSourceRun run = {};
        _cleanup_free_ char *buf = NULL, *err = NULL;
        size_t len = 0, n = 0;

        if (mapper_new(c, &sink, &m) < 0)
                __builtin_trap();
        run.fetched[NSS_MAP_AUTOMOUNT] = (HttpBody){ .data = (char *) text, .len = size };
        if (http_automount_fetch(c, &run, automount_body,
                                 (void *) &(HttpBody){ .data = (char *) text, .len = size }, &err) < 0 ||
            http_automount_map(c, &run, m) < 0 || mapper_finish(m) < 0)
                __builtin_trap();
        scim_collect_take(&col, &maps);
        if (cache_format_render(&maps, NSS_MAP_AUTOMOUNT, &buf, &len, &n, NULL) < 0 ||
            n != nss_maps_count(&maps, NSS_MAP_AUTOMOUNT))
                __builtin_trap();
        run.fetched[NSS_MAP_AUTOMOUNT] = (HttpBody){};
        for (size_t i = 0; i < run.n_am; i++)
                run.am_fetched[i] = (HttpBody){};
        http_source_run_done(&run);
        nss_maps_done(&maps);
        mapper_free(m);
        scim_collect_done(&col);
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = NULL;
        _cleanup_free_ char *err = NULL;

        if (nsscache_conf_new(&c) < 0 ||
            nsscache_conf_parse_ini(c, conf_text, strlen(conf_text), "f", &err) < 0 ||
            nsscache_conf_finalize(c, &err) < 0)
                __builtin_trap();
        for (NssMapType t = 0; t < FUZZ_MAPS; t++)
                one_map(c, t, (const char *) data, size);
#ifndef FUZZ_S3_OBJECT
        automount_map(c, (const char *) data, size);
#endif
        return 0;
}
