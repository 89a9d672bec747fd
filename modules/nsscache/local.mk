# modules/nsscache/: SCIM 2.0 users and groups to libnss-cache maps.

# The cache writer: render, index, publish.  A convenience library so the
# module and its tests link the same objects; the consumer links
# agent/libsunkd-util.la (fileio, strv) itself.
noinst_LTLIBRARIES += %reldir%/libnsscache-cache.la
%canon_reldir%_libnsscache_cache_la_SOURCES = \
	%reldir%/nss-maps.c \
	%reldir%/nss-maps.h \
	%reldir%/cache-format.c \
	%reldir%/cache-format.h \
	%reldir%/cache-format-unicode.h \
	%reldir%/cache-index.c \
	%reldir%/cache-index.h \
	%reldir%/cache-publish.c \
	%reldir%/cache-publish.h \
	# End of libnsscache_cache_la_SOURCES
EXTRA_DIST += %reldir%/gen-pyprintable.py

# End of modules/nsscache/local.mk
