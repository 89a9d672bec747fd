/* The fact store.
 *
 * Few facts and few subscribers (a handful per module), so plain arrays and
 * linear scans; the caps keep them small.  Delivery does not queue values:
 * a change only marks the subscriptions of that name, and the defer source
 * hands each marked subscription the fact's current value.  That bounds the
 * memory whatever a publisher does, and gives subscribers the latest state,
 * which is all a reader of facts wants.  Only subscriptions marked before a
 * dispatch starts are called in it; those marked by a callback (publishing,
 * subscribing) wait for the next loop iteration, so two modules publishing
 * in each other's callbacks cannot starve the loop.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "facts.h"
#include "util/macro.h"

typedef struct Fact {
        char *name;
        json_object *value;
        const void *owner;
} Fact;

typedef struct Subscription {
        char *name;
        FactFn cb;
        void *userdata;
        const void *owner;
        bool pending, deliver;
} Subscription;

struct FactStore {
        sd_event_source *defer;
        Fact *facts;
        size_t n_facts;
        Subscription *subs;
        size_t n_subs;
};

static bool segment_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
               c == '-';
}

bool fact_name_valid(const char *name) {
        size_t len = 0, seg = 0, n_dots = 0;

        if (!name)
                return false;
        for (const char *p = name; *p; p++, len++) {
                if (len >= FACT_NAME_MAX)
                        return false;
                if (*p == '.') {
                        if (seg == 0)
                                return false;
                        n_dots++;
                        seg = 0;
                } else if (segment_char(*p))
                        seg++;
                else
                        return false;
        }
        return n_dots > 0 && seg > 0;
}

static Fact *fact_find(FactStore *s, const char *name) {
        for (size_t i = 0; i < s->n_facts; i++)
                if (streq(s->facts[i].name, name))
                        return &s->facts[i];
        return NULL;
}

static void fact_mark(FactStore *s, const char *name) {
        bool any = false;

        for (size_t i = 0; i < s->n_subs; i++)
                if (streq(s->subs[i].name, name)) {
                        s->subs[i].pending = true;
                        any = true;
                }
        if (any)
                (void) sd_event_source_set_enabled(s->defer, SD_EVENT_ONESHOT);
}

static ssize_t sub_next_to_deliver(FactStore *s) {
        for (size_t i = 0; i < s->n_subs; i++)
                if (s->subs[i].deliver)
                        return (ssize_t) i;
        return -1;
}

static int on_defer(sd_event_source *src, void *userdata) {
        FactStore *s = userdata;
        ssize_t i;

        for (size_t j = 0; j < s->n_subs; j++) {
                s->subs[j].deliver = s->subs[j].pending;
                s->subs[j].pending = false;
        }
        /* Rescanned after each call: a callback may (un)subscribe and so move entries. */
        while ((i = sub_next_to_deliver(s)) >= 0) {
                Subscription *sub = &s->subs[i];
                Fact *f = fact_find(s, sub->name);

                sub->deliver = false;
                /* Copy what the call needs: the array may move under it. */
                FactFn cb = sub->cb;
                void *userdata_cb = sub->userdata;
                char *name = strdup(sub->name);
                json_object *v = f ? json_object_get(f->value) : NULL;

                if (name)
                        cb(userdata_cb, name, v);
                else
                        sub->pending = true; /* retry on the next iteration */
                json_object_put(v);
                free(name);
        }
        return 0;
}

int fact_store_new(sd_event *event, FactStore **ret) {
        FactStore *s;
        int r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        r = sd_event_add_defer(event, &s->defer, on_defer, s);
        if (r >= 0)
                r = sd_event_source_set_enabled(s->defer, SD_EVENT_OFF);
        if (r < 0) {
                fact_store_free(s);
                return r;
        }
        *ret = s;
        return 0;
}

FactStore *fact_store_free(FactStore *s) {
        if (!s)
                return NULL;
        sd_event_source_disable_unref(s->defer);
        for (size_t i = 0; i < s->n_facts; i++) {
                free(s->facts[i].name);
                json_object_put(s->facts[i].value);
        }
        free(s->facts);
        for (size_t i = 0; i < s->n_subs; i++)
                free(s->subs[i].name);
        free(s->subs);
        free(s);
        return NULL;
}

static void fact_drop(FactStore *s, Fact *f) {
        char *name = f->name;

        json_object_put(f->value);
        *f = s->facts[--s->n_facts];
        fact_mark(s, name);
        free(name);
}

static int fact_check(const char *owner_name, const char *name, json_object *value) {
        size_t n = strlen(owner_name ?: "");
        size_t len = 0;

        if (!fact_name_valid(name))
                return -EINVAL;
        if (n == 0 || strncmp(name, owner_name, n) != 0 || name[n] != '.')
                return -EPERM;
        if (value && (!json_object_to_json_string_length(value, JSON_C_TO_STRING_PLAIN, &len) ||
                      len > FACT_VALUE_MAX))
                return -EFBIG;
        return 0;
}

static int fact_insert(FactStore *s, const void *owner, const char *name, json_object *value) {
        Fact *v;
        char *copy;

        if (s->n_facts >= FACTS_MAX)
                return -E2BIG;
        copy = strdup(name);
        if (!copy)
                return -ENOMEM;
        v = reallocarray(s->facts, s->n_facts + 1, sizeof(*v));
        if (!v) {
                free(copy);
                return -ENOMEM;
        }
        s->facts = v;
        s->facts[s->n_facts++] = (Fact){ .name = copy, .value = value, .owner = owner };
        return 0;
}

int fact_publish(FactStore *s, const void *owner, const char *owner_name, const char *name,
                 json_object *value) {
        Fact *f;
        int r;

        r = fact_check(owner_name, name, value);
        if (r < 0) {
                json_object_put(value);
                return r;
        }
        f = fact_find(s, name);
        if (!value) {
                if (f)
                        fact_drop(s, f);
                return 0;
        }
        if (f) {
                json_object_put(f->value);
                f->value = value;
                f->owner = owner;
        } else {
                r = fact_insert(s, owner, name, value);
                if (r < 0) {
                        json_object_put(value);
                        return r;
                }
        }
        fact_mark(s, name);
        return 0;
}

json_object *fact_get(FactStore *s, const char *name) {
        Fact *f = name ? fact_find(s, name) : NULL;
        return f ? json_object_get(f->value) : NULL;
}

json_object *fact_get_copy(FactStore *s, const char *name) {
        Fact *f = name ? fact_find(s, name) : NULL;
        json_object *copy = NULL;

        if (!f || json_object_deep_copy(f->value, &copy, NULL) < 0)
                return NULL;
        return copy;
}

static Subscription *sub_find(FactStore *s, const void *owner, const char *name, FactFn cb, void *userdata) {
        for (size_t i = 0; i < s->n_subs; i++) {
                Subscription *sub = &s->subs[i];
                if (sub->owner == owner && sub->cb == cb && sub->userdata == userdata &&
                    streq(sub->name, name))
                        return sub;
        }
        return NULL;
}

int fact_subscribe(FactStore *s, const void *owner, const char *name, FactFn cb, void *userdata) {
        Subscription *v;
        char *copy;

        if (!cb || !fact_name_valid(name))
                return -EINVAL;
        if (sub_find(s, owner, name, cb, userdata))
                return -EEXIST;
        if (s->n_subs >= FACT_SUBSCRIPTIONS_MAX)
                return -E2BIG;
        copy = strdup(name);
        if (!copy)
                return -ENOMEM;
        v = reallocarray(s->subs, s->n_subs + 1, sizeof(*v));
        if (!v) {
                free(copy);
                return -ENOMEM;
        }
        s->subs = v;
        s->subs[s->n_subs++] =
                (Subscription){ .name = copy, .cb = cb, .userdata = userdata, .owner = owner };
        if (fact_find(s, name)) {
                s->subs[s->n_subs - 1].pending = true;
                (void) sd_event_source_set_enabled(s->defer, SD_EVENT_ONESHOT);
        }
        return 0;
}

static void sub_drop(FactStore *s, Subscription *sub) {
        free(sub->name);
        /* Keeps the order, so a dispatch in progress sees each entry once. */
        memmove(sub, sub + 1, (size_t) (s->subs + s->n_subs - (sub + 1)) * sizeof(*sub));
        s->n_subs--;
}

int fact_unsubscribe(FactStore *s, const void *owner, const char *name, FactFn cb, void *userdata) {
        Subscription *sub = name ? sub_find(s, owner, name, cb, userdata) : NULL;

        if (!sub)
                return -ENOENT;
        sub_drop(s, sub);
        return 0;
}

void fact_remove_owner(FactStore *s, const void *owner) {
        if (!s)
                return;
        for (size_t i = s->n_subs; i > 0; i--)
                if (s->subs[i - 1].owner == owner)
                        sub_drop(s, &s->subs[i - 1]);
        for (size_t i = s->n_facts; i > 0; i--)
                if (s->facts[i - 1].owner == owner)
                        fact_drop(s, &s->facts[i - 1]);
}

unsigned fact_count(FactStore *s) {
        return s ? (unsigned) s->n_facts : 0;
}
