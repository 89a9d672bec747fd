/* KEY=VALUE words into a call's parameters.  The words come from a command
 * line, maybe a script's, so each is checked before anything is sent: a
 * mistake is a usage error naming the word, never a call with a guessed
 * meaning. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sunkctl-params.h"
#include "util/cleanup.h"
#include "util/json-util.h"
#include "util/macro.h"

/* How much of a word an error message quotes. */
#define WORD_SHOWN 64

static bool key_is_valid(const char *k, size_t len) {
        if (len == 0 || !(k[0] == '_' || (k[0] >= 'A' && k[0] <= 'Z') || (k[0] >= 'a' && k[0] <= 'z')))
                return false;
        for (size_t i = 1; i < len; i++)
                if (!(k[i] == '_' || (k[i] >= 'A' && k[i] <= 'Z') || (k[i] >= 'a' && k[i] <= 'z') ||
                      (k[i] >= '0' && k[i] <= '9')))
                        return false;
        return true;
}

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

/* RFC 8259's number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
 * *ret_integer: neither fraction nor exponent. */
static bool is_json_number(const char *s, bool *ret_integer) {
        const char *p = s;
        bool integer = true;

        if (*p == '-')
                p++;
        if (*p == '0')
                p++;
        else if (*p >= '1' && *p <= '9')
                while (is_digit(*p))
                        p++;
        else
                return false;
        if (*p == '.') {
                integer = false;
                if (!is_digit(*++p))
                        return false;
                while (is_digit(*p))
                        p++;
        }
        if (*p == 'e' || *p == 'E') {
                integer = false;
                p++;
                if (*p == '+' || *p == '-')
                        p++;
                if (!is_digit(*p))
                        return false;
                while (is_digit(*p))
                        p++;
        }
        *ret_integer = integer;
        return *p == '\0';
}

static int parse_number(const char *s, bool integer, json_object **ret) {
        char *end;

        errno = 0;
        if (integer) {
                long long v = strtoll(s, &end, 10);

                if (errno == ERANGE || *end)
                        return -ERANGE;
                *ret = json_object_new_int64(v);
        } else {
                double v = strtod(s, &end);

                if (errno == ERANGE || *end || !isfinite(v))
                        return -ERANGE;
                *ret = json_object_new_double(v);
        }
        return *ret ? 0 : -ENOMEM;
}

/* A JSON string literal, and nothing after it. */
static int parse_string_literal(const char *s, json_object **ret) {
        json_tokener *tok = json_tokener_new();
        json_object *o;
        size_t len = strlen(s);
        bool whole;

        if (!tok)
                return -ENOMEM;
        o = json_tokener_parse_ex(tok, s, (int) MIN(len, (size_t) INT32_MAX));
        /* json-c takes blanks after the literal too: the last byte must close it */
        whole = json_tokener_get_error(tok) == json_tokener_success &&
                (size_t) json_tokener_get_parse_end(tok) == len && s[len - 1] == '"';
        json_tokener_free(tok);
        if (!whole || !json_object_is_type(o, json_type_string)) {
                json_object_put(o);
                return -EINVAL;
        }
        *ret = o;
        return 0;
}

static int parse_value(const char *s, json_object **ret, const char **ret_why) {
        bool integer;
        int r;

        if (streq(s, "true") || streq(s, "false"))
                *ret = json_object_new_boolean(streq(s, "true"));
        else if (is_json_number(s, &integer)) {
                r = parse_number(s, integer, ret);
                if (r == -ERANGE)
                        *ret_why =
                                integer ? "an integer beyond 64 bits (quote it, '\"...\"', to send a string)"
                                        : "a number out of range";
                return r;
        } else if (s[0] == '"') {
                r = parse_string_literal(s, ret);
                if (r == -EINVAL)
                        *ret_why = "a value that begins with \" must be one JSON string";
                return r;
        } else
                *ret = json_object_new_string(s);
        return *ret ? 0 : -ENOMEM;
}

/* "word" in an error: at most WORD_SHOWN bytes of it, and "..." if cut. */
static void error_for(char *err, size_t err_len, const char *word, const char *why) {
        size_t n = strlen(word);

        snprintf(err, err_len, "'%.*s%s': %s", (int) MIN(n, (size_t) WORD_SHOWN), word,
                 n > WORD_SHOWN ? "..." : "", why);
}

int params_parse(char *const *words, size_t n, json_object **ret, char *err, size_t err_len) {
        _cleanup_json_ json_object *params = json_object_new_object();

        if (!params)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const char *w = words[i], *eq = strchr(w, '='), *why = NULL;
                _cleanup_free_ char *key = NULL;
                json_object *v = NULL;
                int r;

                if (!eq) {
                        error_for(err, err_len, w, "a parameter is KEY=VALUE");
                        return -EINVAL;
                }
                if (!key_is_valid(w, (size_t) (eq - w))) {
                        error_for(err, err_len, w, "a KEY is a letter or _, then letters, digits or _");
                        return -EINVAL;
                }
                key = strndup(w, (size_t) (eq - w));
                if (!key)
                        return -ENOMEM;
                if (json_object_object_get_ex(params, key, NULL)) {
                        error_for(err, err_len, w, "that KEY is given twice");
                        return -EINVAL;
                }
                r = parse_value(eq + 1, &v, &why);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        error_for(err, err_len, w, why);
                        return -EINVAL;
                }
                if (json_object_object_add(params, key, v) < 0) {
                        json_object_put(v);
                        return -ENOMEM;
                }
        }
        *ret = TAKE_PTR(params);
        return 0;
}
