/* Facts: small immutable JSON values one module publishes and others read.
 *
 * A fact is named "<module>.<fact>" and only the module <module> may publish
 * it; a new publish replaces the value.  Readers get a new reference to the
 * stored object and must not modify it.  Subscribers are called on the loop,
 * from a defer source, never from inside fact_store_publish(): one call per
 * subscription per change with the value current at delivery (a burst of
 * publishes between two loop iterations is seen once, with the last value),
 * and NULL when the fact went away with its publisher.
 */
#pragma once

#include <stdbool.h>

#include <json-c/json.h>
#include <systemd/sd-event.h>

typedef struct FactStore FactStore;

typedef void (*FactFn)(void *userdata, const char *name, json_object *value);

#define FACT_NAME_MAX 128
#define FACT_VALUE_MAX (64 * 1024) /* serialised, in bytes */
#define FACTS_MAX 256
#define FACT_SUBSCRIPTIONS_MAX 1024

int fact_store_new(sd_event *event, FactStore **ret);
/** fact_store_free() - drop every fact and subscription, without callbacks. */
FactStore *fact_store_free(FactStore *s);

/** fact_name_valid() - "<prefix>.<rest>" of [A-Za-z0-9_-] segments joined by '.'. */
bool fact_name_valid(const char *name);

/**
 * fact_publish() - store @value (taken, also on failure) as @name.
 * @owner publishes under its own @owner_name: @name must start with
 * "<owner_name>.".  A NULL @value withdraws the fact.
 * Return: 0, -EINVAL (bad name), -EPERM (another module's name), -EFBIG
 * (larger than FACT_VALUE_MAX serialised), -E2BIG (FACTS_MAX reached).
 */
int fact_publish(FactStore *s, const void *owner, const char *owner_name, const char *name,
                 json_object *value);
/** fact_get() - a new reference to @name's value, or NULL. */
json_object *fact_get(FactStore *s, const char *name);
/**
 * fact_get_copy() - a deep copy of @name's value that shares nothing with
 * the store, or NULL.  What modules get: json-c's reference counts are not
 * atomic and serialising caches text in the object, so the shared value is
 * loop-only, and a module may hand what it gets to a worker thread.
 */
json_object *fact_get_copy(FactStore *s, const char *name);
/**
 * fact_subscribe() - call @cb(@userdata, @name, value) after each change of
 * @name (published, replaced or withdrawn), and once soon after subscribing
 * if the fact exists already.  The value is borrowed for the call.
 * Return: 0, -EINVAL, -EEXIST (same @owner, @name, @cb and @userdata), -E2BIG.
 */
int fact_subscribe(FactStore *s, const void *owner, const char *name, FactFn cb, void *userdata);
/** fact_unsubscribe() - undo fact_subscribe(); -ENOENT if there was none. */
int fact_unsubscribe(FactStore *s, const void *owner, const char *name, FactFn cb, void *userdata);
/** fact_remove_owner() - drop @owner's subscriptions and facts; subscribers
 * of those facts are told (value NULL). */
void fact_remove_owner(FactStore *s, const void *owner);
unsigned fact_count(FactStore *s);
