/* Outside text for one line of a reason or a log: text_escape()'s rule. */
#include <string.h>

#include "text-clean.h"
#include "text-escape.h"

void text_append_clean_n(char *out, size_t size, size_t *len, const char *s, size_t n) {
        (void) text_escape_append(out, size, len, s, s ? n : 0, TEXT_ESCAPE_LINE);
}

void text_append_clean(char *out, size_t size, size_t *len, const char *s) {
        text_append_clean_n(out, size, len, s, s ? strlen(s) : 0);
}
