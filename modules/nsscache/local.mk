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
	%reldir%/cache-journal.c \
	%reldir%/cache-journal.h \
	%reldir%/cache-publish.c \
	%reldir%/cache-publish.h \
	# End of libnsscache_cache_la_SOURCES
EXTRA_DIST += %reldir%/gen-pyprintable.py

# The SCIM side: config, fetch, mapping; a library the unit tests link.
noinst_LTLIBRARIES += %reldir%/libnsscache-core.la
%canon_reldir%_libnsscache_core_la_SOURCES = \
	%reldir%/ini.c \
	%reldir%/ini.h \
	%reldir%/nsscache-conf.h \
	%reldir%/nsscache-conf-internal.h \
	%reldir%/nsscache-conf-keys.c \
	%reldir%/nsscache-conf-check.c \
	%reldir%/nsscache-source.c \
	%reldir%/nsscache-source.h \
	%reldir%/nsscache-refresh.c \
	%reldir%/nsscache-refresh.h \
	%reldir%/refresh-memo.c \
	%reldir%/refresh-memo.h \
	%reldir%/digest.c \
	%reldir%/digest.h \
	%reldir%/dupset.c \
	%reldir%/dupset.h \
	%reldir%/scim-page.c \
	%reldir%/scim-page.h \
	%reldir%/scim-spc.c \
	%reldir%/scim-spc.h \
	%reldir%/map-sink.c \
	%reldir%/map-sink.h \
	%reldir%/attr-path.c \
	%reldir%/attr-path.h \
	%reldir%/map-reject.c \
	%reldir%/map-reject.h \
	%reldir%/scim-map.c \
	%reldir%/scim-map.h \
	%reldir%/fetch-record.c \
	%reldir%/fetch-record.h \
	%reldir%/scim-fetch.c \
	%reldir%/scim-fetch.h \
	%reldir%/curl-common.c \
	%reldir%/curl-common.h \
	%reldir%/http-fetch.c \
	%reldir%/http-fetch.h \
	%reldir%/http-source.c \
	%reldir%/http-source.h \
	%reldir%/map-file.c \
	%reldir%/map-file.h \
	%reldir%/manifest.c \
	%reldir%/manifest.h \
	%reldir%/map-export.c \
	%reldir%/map-export.h \
	%reldir%/map-delta.c \
	%reldir%/map-delta.h \
	%reldir%/s3-auth.c \
	%reldir%/s3-auth.h \
	%reldir%/s3-object.c \
	%reldir%/s3-object.h \
	%reldir%/s3-export.c \
	%reldir%/s3-export.h \
	# End of libnsscache_core_la_SOURCES
%canon_reldir%_libnsscache_core_la_CFLAGS = $(AM_CFLAGS) $(CURL_CFLAGS) $(JSONC_CFLAGS) $(CRYPTO_CFLAGS) $(ZLIB_CFLAGS)
%canon_reldir%_libnsscache_core_la_LIBADD = %reldir%/libnsscache-cache.la agent/libsunkd-modutil.la agent/libsunkd-util.la $(CURL_LIBS) \
	$(JSONC_LIBS) $(CRYPTO_LIBS) $(BZ2_LIBS) $(ZLIB_LIBS)

pkglib_LTLIBRARIES += %reldir%/nsscache.la
%canon_reldir%_nsscache_la_SOURCES = %reldir%/nsscache.c
%canon_reldir%_nsscache_la_CFLAGS = $(AM_CFLAGS) $(CURL_CFLAGS) $(JSONC_CFLAGS) $(CRYPTO_CFLAGS)
%canon_reldir%_nsscache_la_LDFLAGS = $(MODULE_LINK_FLAGS)
%canon_reldir%_nsscache_la_LIBADD = %reldir%/libnsscache-core.la $(CURL_LIBS) $(JSONC_LIBS) $(CRYPTO_LIBS) $(BZ2_LIBS) $(ZLIB_LIBS)

# End of modules/nsscache/local.mk
