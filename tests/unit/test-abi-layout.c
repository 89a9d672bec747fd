/* The module ABI's layouts held to the frozen headers, at compile time.
 *
 * tests/modules/abi-1.0 and abi-1.2 are module.h as released at those
 * minors.  The build copies each with its names prefixed (abi10_sunkd_...,
 * abi10_SUNKD_...) so that both sit beside today's header in this file, and
 * every member they have must keep its offset and size in today's structs,
 * every function of their host table its slot, and every constant its value.
 * Structs a module hands over in arrays, without a size of their own
 * (sunkd_method, sunkd_cfg_key, sunkd_metric_def), keep their whole size.
 * A header change that moves any of them fails to compile this file.
 */
#include <check.h>

#include "sunkd/module.h"
#include "abi-frozen-1.0.h"
#include "abi-frozen-1.2.h"
#include "../lib/check-run.h"

#define MEMBER_SIZE(type, m) sizeof(((type *) 0)->m)

/* @m of @type is where the frozen header @v had it, and as large. */
#define SAME_MEMBER(v, type, m)                                                                             \
        _Static_assert(offsetof(type, m) == offsetof(v##_##type, m) &&                                      \
                               MEMBER_SIZE(type, m) == MEMBER_SIZE(v##_##type, m),                          \
                       #type "." #m " moved from its place in the frozen " #v " header");
/* Today's struct holds the frozen one as its prefix. */
#define PREFIX_OF(v, type)                                                                                  \
        _Static_assert(sizeof(v##_##type) <= sizeof(type), #type " shrank below the frozen " #v " one");
/* Arrays of these are walked by the module's stride: no room to grow. */
#define SAME_SIZE(v, type)                                                                                  \
        _Static_assert(sizeof(v##_##type) == sizeof(type),                                                  \
                       #type " changed size since the frozen " #v " one");
#define SAME_VALUE(v, name)                                                                                 \
        _Static_assert((long long) name == (long long) v##_##name,                                          \
                       #name " changed value since the frozen " #v " header");

/* clang-format off: one member a line, as the frozen headers list them */
#define CANCEL_1_0(X, v) X(v, sunkd_cancel, requested)
#define JOB_SPEC_1_0(X, v)                                                                                  \
        X(v, sunkd_job_spec, size)                                                                          \
        X(v, sunkd_job_spec, name)                                                                          \
        X(v, sunkd_job_spec, interval_usec)                                                                 \
        X(v, sunkd_job_spec, splay_usec)                                                                    \
        X(v, sunkd_job_spec, jitter_pct)                                                                    \
        X(v, sunkd_job_spec, backoff_min_usec)                                                              \
        X(v, sunkd_job_spec, backoff_max_usec)                                                              \
        X(v, sunkd_job_spec, timeout_usec)                                                                  \
        X(v, sunkd_job_spec, flags)                                                                         \
        X(v, sunkd_job_spec, prepare)                                                                       \
        X(v, sunkd_job_spec, work)                                                                          \
        X(v, sunkd_job_spec, done)
#define JOB_SPEC_1_2(X, v)                                                                                  \
        JOB_SPEC_1_0(X, v)                                                                                  \
        X(v, sunkd_job_spec, cancel)                                                                        \
        X(v, sunkd_job_spec, child_uid)                                                                     \
        X(v, sunkd_job_spec, child_gid)
#define METHOD_1_0(X, v)                                                                                    \
        X(v, sunkd_method, name)                                                                            \
        X(v, sunkd_method, flags)                                                                           \
        X(v, sunkd_method, fn)
#define CFG_KEY_1_0(X, v)                                                                                   \
        X(v, sunkd_cfg_key, key)                                                                            \
        X(v, sunkd_cfg_key, type)                                                                           \
        X(v, sunkd_cfg_key, offset)                                                                         \
        X(v, sunkd_cfg_key, flags)                                                                          \
        X(v, sunkd_cfg_key, min)                                                                            \
        X(v, sunkd_cfg_key, max)
#define METRIC_SPEC_1_0(X, v)                                                                               \
        X(v, sunkd_metric_spec, size)                                                                       \
        X(v, sunkd_metric_spec, name)                                                                       \
        X(v, sunkd_metric_spec, help)                                                                       \
        X(v, sunkd_metric_spec, type)                                                                       \
        X(v, sunkd_metric_spec, labels)
#define METRIC_DEF_1_2(X, v)                                                                                \
        X(v, sunkd_metric_def, spec)                                                                        \
        X(v, sunkd_metric_def, ret)
#define SPAWN_SPEC_1_0(X, v)                                                                                \
        X(v, sunkd_spawn_spec, size)                                                                        \
        X(v, sunkd_spawn_spec, argv)                                                                        \
        X(v, sunkd_spawn_spec, envp)                                                                        \
        X(v, sunkd_spawn_spec, timeout_usec)                                                                \
        X(v, sunkd_spawn_spec, output_max)                                                                  \
        X(v, sunkd_spawn_spec, uid)                                                                         \
        X(v, sunkd_spawn_spec, gid)                                                                         \
        X(v, sunkd_spawn_spec, cwd)                                                                         \
        X(v, sunkd_spawn_spec, input)                                                                       \
        X(v, sunkd_spawn_spec, input_len)
#define SPAWN_SPEC_1_2(X, v)                                                                                \
        SPAWN_SPEC_1_0(X, v)                                                                                \
        X(v, sunkd_spawn_spec, kill_grace_usec)                                                             \
        X(v, sunkd_spawn_spec, groups)                                                                      \
        X(v, sunkd_spawn_spec, n_groups)
#define SPAWN_RESULT_1_0(X, v)                                                                              \
        X(v, sunkd_spawn_result, pid)                                                                       \
        X(v, sunkd_spawn_result, exit_code)                                                                 \
        X(v, sunkd_spawn_result, signal)                                                                    \
        X(v, sunkd_spawn_result, timed_out)                                                                 \
        X(v, sunkd_spawn_result, output)                                                                    \
        X(v, sunkd_spawn_result, output_len)                                                                \
        X(v, sunkd_spawn_result, output_truncated)                                                          \
        X(v, sunkd_spawn_result, duration_usec)
#define HOST_API_1_0(X, v)                                                                                  \
        X(v, sunkd_host_api, size)                                                                          \
        X(v, sunkd_host_api, log)                                                                           \
        X(v, sunkd_host_api, module_name)                                                                   \
        X(v, sunkd_host_api, state_dir)                                                                     \
        X(v, sunkd_host_api, cfg_parse)                                                                     \
        X(v, sunkd_host_api, cfg_clear)                                                                     \
        X(v, sunkd_host_api, cfg_where)                                                                     \
        X(v, sunkd_host_api, cfg_get)                                                                       \
        X(v, sunkd_host_api, cfg_scalar)                                                                    \
        X(v, sunkd_host_api, job_add)                                                                       \
        X(v, sunkd_host_api, job_trigger)                                                                   \
        X(v, sunkd_host_api, job_set_interval)                                                              \
        X(v, sunkd_host_api, methods_add)                                                                   \
        X(v, sunkd_host_api, reply)                                                                         \
        X(v, sunkd_host_api, reply_error)                                                                   \
        X(v, sunkd_host_api, call_uid)                                                                      \
        X(v, sunkd_host_api, call_gid)                                                                      \
        X(v, sunkd_host_api, metric_add)                                                                    \
        X(v, sunkd_host_api, metric_set)                                                                    \
        X(v, sunkd_host_api, metric_add_value)                                                              \
        X(v, sunkd_host_api, spawn)                                                                         \
        X(v, sunkd_host_api, file_stage)                                                                    \
        X(v, sunkd_host_api, file_commit)                                                                   \
        X(v, sunkd_host_api, file_write_atomic)
#define HOST_API_1_2(X, v)                                                                                  \
        HOST_API_1_0(X, v)                                                                                  \
        X(v, sunkd_host_api, job_set_message)                                                               \
        X(v, sunkd_host_api, job_update)                                                                    \
        X(v, sunkd_host_api, job_complete)                                                                  \
        X(v, sunkd_host_api, spawn_start)                                                                   \
        X(v, sunkd_host_api, child_kill)                                                                    \
        X(v, sunkd_host_api, watch_add)                                                                     \
        X(v, sunkd_host_api, watch_remove)                                                                  \
        X(v, sunkd_host_api, fact_publish)                                                                  \
        X(v, sunkd_host_api, fact_get)                                                                      \
        X(v, sunkd_host_api, fact_subscribe)                                                                \
        X(v, sunkd_host_api, fact_unsubscribe)                                                              \
        X(v, sunkd_host_api, call_on_gone)                                                                  \
        X(v, sunkd_host_api, call_pid)                                                                      \
        X(v, sunkd_host_api, log_fields)                                                                    \
        X(v, sunkd_host_api, cfg_child)
#define CTX_1_0(X, v) X(v, sunkd_ctx, api)
#define MODULE_1_0(X, v)                                                                                    \
        X(v, sunkd_module, abi_major)                                                                       \
        X(v, sunkd_module, abi_minor)                                                                       \
        X(v, sunkd_module, size)                                                                            \
        X(v, sunkd_module, name)                                                                            \
        X(v, sunkd_module, version)                                                                         \
        X(v, sunkd_module, init)                                                                            \
        X(v, sunkd_module, check)                                                                           \
        X(v, sunkd_module, reload)                                                                          \
        X(v, sunkd_module, fini)                                                                            \
        X(v, sunkd_module, status)

#define VALUES_1_0(X, v)                                                                                    \
        X(v, SUNKD_MODULE_ABI_MAJOR)                                                                        \
        X(v, SUNKD_USEC_PER_SEC)                                                                            \
        X(v, SUNKD_USEC_PER_MSEC)                                                                           \
        X(v, SUNKD_LOG_ERR)                                                                                 \
        X(v, SUNKD_LOG_WARNING)                                                                             \
        X(v, SUNKD_LOG_NOTICE)                                                                              \
        X(v, SUNKD_LOG_INFO)                                                                                \
        X(v, SUNKD_LOG_DEBUG)                                                                               \
        X(v, SUNKD_JOB_READY_GATE)                                                                          \
        X(v, SUNKD_JOB_TRIGGER_ONLY)                                                                        \
        X(v, SUNKD_METHOD_ROOT)                                                                             \
        X(v, SUNKD_METHOD_ANY_UID)                                                                          \
        X(v, SUNKD_METHOD_ALLOW)                                                                            \
        X(v, SUNKD_CALL_PENDING)                                                                            \
        X(v, SUNKD_CFG_STRING)                                                                              \
        X(v, SUNKD_CFG_INT)                                                                                 \
        X(v, SUNKD_CFG_BOOL)                                                                                \
        X(v, SUNKD_CFG_DURATION)                                                                            \
        X(v, SUNKD_CFG_SIZE)                                                                                \
        X(v, SUNKD_CFG_PATH)                                                                                \
        X(v, SUNKD_CFG_LIST)                                                                                \
        X(v, SUNKD_CFG_MAP)                                                                                 \
        X(v, SUNKD_CFG_REQUIRED)                                                                            \
        X(v, SUNKD_METRIC_COUNTER)                                                                          \
        X(v, SUNKD_METRIC_GAUGE)                                                                            \
        X(v, SUNKD_METRIC_LABELS_MAX)
#define VALUES_1_2(X, v)                                                                                    \
        VALUES_1_0(X, v)                                                                                    \
        X(v, SUNKD_JOB_ASYNC)                                                                               \
        X(v, SUNKD_JOB_CHILD)                                                                               \
        X(v, SUNKD_CFG_SECRET)
/* clang-format on */

/* ABI 1.0 */
CANCEL_1_0(SAME_MEMBER, abi10)
JOB_SPEC_1_0(SAME_MEMBER, abi10)
METHOD_1_0(SAME_MEMBER, abi10)
CFG_KEY_1_0(SAME_MEMBER, abi10)
METRIC_SPEC_1_0(SAME_MEMBER, abi10)
SPAWN_SPEC_1_0(SAME_MEMBER, abi10)
SPAWN_RESULT_1_0(SAME_MEMBER, abi10)
HOST_API_1_0(SAME_MEMBER, abi10)
CTX_1_0(SAME_MEMBER, abi10)
MODULE_1_0(SAME_MEMBER, abi10)
VALUES_1_0(SAME_VALUE, abi10)
SAME_SIZE(abi10, sunkd_cancel)
SAME_SIZE(abi10, sunkd_ctx)
SAME_SIZE(abi10, sunkd_method)
SAME_SIZE(abi10, sunkd_cfg_key)
SAME_SIZE(abi10, sunkd_metric_spec)
PREFIX_OF(abi10, sunkd_job_spec)
PREFIX_OF(abi10, sunkd_spawn_spec)
PREFIX_OF(abi10, sunkd_spawn_result)
PREFIX_OF(abi10, sunkd_host_api)
PREFIX_OF(abi10, sunkd_module)

/* ABI 1.2 */
CANCEL_1_0(SAME_MEMBER, abi12)
JOB_SPEC_1_2(SAME_MEMBER, abi12)
METHOD_1_0(SAME_MEMBER, abi12)
CFG_KEY_1_0(SAME_MEMBER, abi12)
METRIC_SPEC_1_0(SAME_MEMBER, abi12)
METRIC_DEF_1_2(SAME_MEMBER, abi12)
SPAWN_SPEC_1_2(SAME_MEMBER, abi12)
SPAWN_RESULT_1_0(SAME_MEMBER, abi12)
HOST_API_1_2(SAME_MEMBER, abi12)
CTX_1_0(SAME_MEMBER, abi12)
MODULE_1_0(SAME_MEMBER, abi12)
VALUES_1_2(SAME_VALUE, abi12)
SAME_SIZE(abi12, sunkd_cancel)
SAME_SIZE(abi12, sunkd_ctx)
SAME_SIZE(abi12, sunkd_method)
SAME_SIZE(abi12, sunkd_cfg_key)
SAME_SIZE(abi12, sunkd_metric_spec)
SAME_SIZE(abi12, sunkd_metric_def)
PREFIX_OF(abi12, sunkd_job_spec)
PREFIX_OF(abi12, sunkd_spawn_spec)
PREFIX_OF(abi12, sunkd_spawn_result)
PREFIX_OF(abi12, sunkd_host_api)
PREFIX_OF(abi12, sunkd_module)

/* The frozen copies are what the test modules are built against. */
START_TEST(test_frozen_minors) {
        ck_assert_int_eq(abi10_SUNKD_MODULE_ABI_MINOR, 0);
        ck_assert_int_eq(abi12_SUNKD_MODULE_ABI_MINOR, 2);
        ck_assert_int_ge(SUNKD_MODULE_ABI_MINOR, abi12_SUNKD_MODULE_ABI_MINOR);
}
END_TEST

int main(void) {
        Suite *s = suite_create("abi-layout");
        TCase *tc = tcase_create("frozen");

        tcase_add_test(tc, test_frozen_minors);
        suite_add_tcase(s, tc);
        return check_run(s);
}
