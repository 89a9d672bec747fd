/* slurmrestd's JSON as the health module reads and writes it: a node
 * answer as data_parser v0.0.40 writes one, the partitions of older and
 * newer versions, hostile answers (not JSON, text after it, a raw NUL,
 * missing fields, a state word that would smuggle in a flag, control bytes
 * in a reason), the errors[] line, and the update bodies read back. */
#include <check.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/json-util.h"
#include "util/strv.h"

#include "../../modules/health/health-node.h"
#include "../../modules/health/transport/health-restjson.h"
#include "../lib/check-run.h"

/* The nodes of @body (a C string), or the error's text in @err. */
static int parse(const char *body, HealthNode **nodes, size_t *n, char **err) {
        return health_rest_nodes_parse(body, strlen(body), nodes, n, err);
}

/* Parsing @body fails with @r and a message containing @want. */
static void refused(const char *body, int r, const char *want) {
        _cleanup_free_ char *err = NULL;
        HealthNode *nodes = NULL;
        size_t n = 0;

        ck_assert_int_eq(parse(body, &nodes, &n, &err), r);
        ck_assert_ptr_null(nodes);
        ck_assert_msg(err && strstr(err, want), "'%s' lacks '%s'", err ?: "(null)", want);
}

START_TEST(test_node_answer) {
        /* trimmed from a v0.0.40 answer: what is not read is ignored */
        static const char body[] =
                "{\"nodes\":[{\"architecture\":\"x86_64\",\"boards\":1,\"name\":\"gpu-1\",\"hostname\":"
                "\"gpu-1\","
                "\"state\":[\"IDLE\",\"DRAIN\",\"DYNAMIC_NORM\"],\"reason\":\"sunkd: flag: fault\","
                "\"reason_changed_at\":{\"set\":true,\"infinite\":false,\"number\":1732000000},"
                "\"reason_set_by_user\":\"root\",\"partitions\":[\"gpu\",\"all\"],\"gres\":\"gpu:8\"}],"
                "\"last_update\":{\"set\":true,\"number\":1732000001},\"meta\":{\"plugin\":{\"data_parser\":"
                "\"data_parser/v0.0.40\"}},"
                "\"errors\":[],\"warnings\":[]}\n";
        _cleanup_free_ char *err = NULL;
        HealthNode *nodes = NULL;
        size_t n = 0;

        ck_assert_int_eq(parse(body, &nodes, &n, &err), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_str_eq(nodes[0].name, "gpu-1");
        ck_assert_str_eq(nodes[0].state, "IDLE+DRAIN+DYNAMIC_NORM");
        ck_assert(health_node_drained(&nodes[0]));
        ck_assert(!health_node_unreachable(&nodes[0]));
        ck_assert_str_eq(nodes[0].reason, "sunkd: flag: fault");
        ck_assert_uint_eq(strv_length(nodes[0].partitions), 2);
        ck_assert_str_eq(nodes[0].partitions[1], "all");
        health_nodes_free(nodes, n);
}
END_TEST

START_TEST(test_optional_fields) {
        _cleanup_free_ char *err = NULL;
        HealthNode *nodes = NULL;
        size_t n = 0;

        /* no reason, an empty one, null; partitions missing, a comma string, empty */
        ck_assert_int_eq(parse("{\"nodes\":[{\"name\":\"a\",\"state\":[\"IDLE\"]},"
                               "{\"name\":\"b\",\"state\":[\"DOWN\",\"NOT_RESPONDING\"],\"reason\":\"\","
                               "\"partitions\":\"x,,y\"},"
                               "{\"name\":\"c\",\"state\":[\"MIXED\"],\"reason\":null,\"partitions\":[]}]}",
                               &nodes, &n, &err),
                         0);
        ck_assert_uint_eq(n, 3);
        ck_assert_ptr_null(nodes[0].reason);
        ck_assert_ptr_null(nodes[0].partitions);
        ck_assert_ptr_null(nodes[1].reason);
        ck_assert(health_node_unreachable(&nodes[1]));
        ck_assert_uint_eq(strv_length(nodes[1].partitions), 2);
        ck_assert_str_eq(nodes[1].partitions[1], "y");
        ck_assert_ptr_null(nodes[2].reason);
        ck_assert(health_node_busy(&nodes[2]));
        health_nodes_free(nodes, n);
        /* an empty list is no error: the caller finds no node */
        ck_assert_int_eq(parse("{\"nodes\":[]}", &nodes, &n, &err), 0);
        ck_assert_uint_eq(n, 0);
        health_nodes_free(nodes, n);
}
END_TEST

START_TEST(test_hostile) {
        refused("", -EBADMSG, "not a JSON object");
        refused("<html>502 Bad Gateway</html>", -EBADMSG, "not a JSON object");
        refused("[{\"name\":\"a\"}]", -EBADMSG, "not a JSON object");
        refused("{\"nodes\":[{\"name\":\"a\",\"state\":[\"IDLE\"]}]} trailing", -EBADMSG,
                "not a JSON object");
        refused("{\"nodes\":[{\"name\":\"a\",\"sta", -EBADMSG, "not a JSON object");
        refused("{}", -EBADMSG, "no \"nodes\" array");
        refused("{\"nodes\":{\"name\":\"a\"}}", -EBADMSG, "no \"nodes\" array");
        refused("{\"nodes\":[7]}", -EBADMSG, "nodes[0] is not an object");
        refused("{\"nodes\":[{\"state\":[\"IDLE\"]}]}", -EBADMSG, "nodes[0] has no name");
        refused("{\"nodes\":[{\"name\":\"\",\"state\":[\"IDLE\"]}]}", -EBADMSG, "nodes[0] has no name");
        refused("{\"nodes\":[{\"name\":\"a\"}]}", -EBADMSG, "node a has no state");
        /* 22.05's v0.0.38 shape: a string state, flags apart */
        refused("{\"nodes\":[{\"name\":\"a\",\"state\":\"idle\",\"state_flags\":[\"DRAIN\"]}]}", -EBADMSG,
                "not an array of words");
        refused("{\"nodes\":[{\"name\":\"a\",\"state\":[]}]}", -EBADMSG, "not an array of words");
        /* a word that would read as two flags once joined */
        refused("{\"nodes\":[{\"name\":\"a\",\"state\":[\"IDLE+DRAIN\"]}]}", -EBADMSG,
                "not an array of words");
        refused("{\"nodes\":[{\"name\":\"a\",\"state\":[\"idle\"]}]}", -EBADMSG, "not an array of words");
        refused("{\"nodes\":[{\"name\":\"a\",\"state\":[1]}]}", -EBADMSG, "not an array of words");
        refused("{\"nodes\":[{\"name\":\"a\",\"state\":[\"IDLE\"],\"reason\":5}]}", -EBADMSG,
                "reason is not a string");
        refused("{\"nodes\":[{\"name\":\"a\",\"state\":[\"IDLE\"],\"partitions\":[1]}]}", -EBADMSG,
                "partitions are not a list");
        refused("{\"nodes\":[{\"name\":\"a\",\"state\":[\"IDLE\"],\"partitions\":{}}]}", -EBADMSG,
                "partitions are not a list");
}
END_TEST

START_TEST(test_raw_nul) {
        static const char body[] = "{\"nodes\":[]}\0{\"x\":1}";
        _cleanup_free_ char *err = NULL;
        HealthNode *nodes = NULL;
        size_t n = 0;

        ck_assert_int_eq(health_rest_nodes_parse(body, sizeof(body) - 1, &nodes, &n, &err), -EBADMSG);
        ck_assert_ptr_null(nodes);
}
END_TEST

START_TEST(test_deep) {
        _cleanup_free_ char *body = malloc(20002);
        _cleanup_free_ char *err = NULL;
        HealthNode *nodes = NULL;
        size_t n = 0;

        ck_assert_ptr_nonnull(body);
        memset(body, '[', 10000);
        memset(body + 10000, ']', 10000);
        body[20000] = '\0';
        ck_assert_int_eq(parse(body, &nodes, &n, &err), -EBADMSG);
}
END_TEST

START_TEST(test_control_bytes) {
        _cleanup_free_ char *err = NULL;
        HealthNode *nodes = NULL;
        size_t n = 0;

        ck_assert_int_eq(
                parse("{\"nodes\":[{\"name\":\"a\\u001b\",\"state\":[\"IDLE\",\"DRAIN\"],"
                      "\"reason\":\"sunkd: x\\u0000admin\\n\\u007f\\u00e9\",\"partitions\":[\"g\\tpu\"]}]}",
                      &nodes, &n, &err),
                0);
        ck_assert_str_eq(nodes[0].name, "a?");
        /* the NUL does not cut the reason short: what follows it is seen */
        ck_assert_str_eq(nodes[0].reason, "sunkd: x?admin??\xc3\xa9");
        ck_assert_str_eq(nodes[0].partitions[0], "g?pu");
        health_nodes_free(nodes, n);
}
END_TEST

START_TEST(test_too_many) {
        size_t count = HEALTH_REST_NODES_MAX + 1, len = 0;
        const char node[] = "{\"name\":\"n\",\"state\":[\"IDLE\"]},";
        _cleanup_free_ char *body = malloc(16 + count * (sizeof(node) - 1));
        _cleanup_free_ char *err = NULL;
        HealthNode *nodes = NULL;
        size_t n = 0;

        ck_assert_ptr_nonnull(body);
        len += (size_t) sprintf(body, "{\"nodes\":[");
        for (size_t i = 0; i < count; i++) {
                memcpy(body + len, node, sizeof(node) - 1);
                len += sizeof(node) - 1;
        }
        body[len - 1] = ']';
        body[len++] = '}';
        ck_assert_int_eq(health_rest_nodes_parse(body, len, &nodes, &n, &err), -E2BIG);
        ck_assert_ptr_null(nodes);
}
END_TEST

START_TEST(test_errors) {
        char buf[256];
        const char *b;

        b = "{\"errors\":[{\"description\":\"Failure to update node gpu-1\",\"error_number\":2028,"
            "\"error\":\"Invalid node state specified\",\"source\":\"_update_node\"}],\"warnings\":[]}";
        ck_assert(health_rest_errors(b, strlen(b), buf, sizeof(buf)));
        ck_assert_str_eq(buf, "Invalid node state specified: Failure to update node gpu-1");
        b = "{\"errors\":[{\"error\":\"Authentication failure\"},{},{\"description\":\"a\\u001bb\"}]}";
        ck_assert(health_rest_errors(b, strlen(b), buf, sizeof(buf)));
        ck_assert_str_eq(buf, "Authentication failure; a?b");
        b = "{\"errors\":[],\"nodes\":[]}";
        ck_assert(!health_rest_errors(b, strlen(b), buf, sizeof(buf)));
        ck_assert_str_eq(buf, "");
        b = "<html>Internal Server Error</html>";
        ck_assert(!health_rest_errors(b, strlen(b), buf, sizeof(buf)));
        ck_assert(!health_rest_errors(NULL, 0, buf, sizeof(buf)));
        /* a long list is cut to the buffer */
        {
                char small[16];
                b = "{\"errors\":[{\"error\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}]}";
                ck_assert(health_rest_errors(b, strlen(b), small, sizeof(small)));
                ck_assert_uint_eq(strlen(small), sizeof(small) - 1);
        }
}
END_TEST

START_TEST(test_update_body) {
        _cleanup_free_ char *drain = NULL, *resume = NULL;
        _cleanup_json_ json_object *o = NULL;
        const char *reason = "sunkd: disk: \"/scratch\" \\ 100% full, caf\xc3\xa9";

        ck_assert_int_eq(health_rest_update_body(false, "ignored", &resume), 0);
        ck_assert_str_eq(resume, "{\"state\":[\"RESUME\"]}");
        ck_assert_int_eq(health_rest_update_body(true, reason, &drain), 0);
        /* read back: exactly state and reason, the reason unchanged */
        o = json_tokener_parse(drain);
        ck_assert_ptr_nonnull(o);
        ck_assert_int_eq(json_object_object_length(o), 2);
        ck_assert_str_eq(json_member_string(o, "reason"), reason);
        ck_assert_str_eq(
                json_object_to_json_string_ext(json_object_object_get(o, "state"), JSON_C_TO_STRING_PLAIN),
                "[\"DRAIN\"]");
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("health-rest");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_node_answer);
        tcase_add_test(tc, test_optional_fields);
        tcase_add_test(tc, test_hostile);
        tcase_add_test(tc, test_raw_nul);
        tcase_add_test(tc, test_deep);
        tcase_add_test(tc, test_control_bytes);
        tcase_add_test(tc, test_too_many);
        tcase_add_test(tc, test_errors);
        tcase_add_test(tc, test_update_body);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(suite());
}
