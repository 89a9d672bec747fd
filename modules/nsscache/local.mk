# modules/nsscache/: users and groups from SCIM 2.0, or map files over http or s3, to libnss-cache maps.

# The cache writer (cache/): render, index, publish.  A convenience library so the
# module and its tests link the same objects; the consumer links
# agent/libsunkd-util.la (fileio, strv) itself.
noinst_LTLIBRARIES += %reldir%/libnsscache-cache.la
%canon_reldir%_libnsscache_cache_la_SOURCES = \
	%reldir%/cache/nss-maps.c \
	%reldir%/cache/nss-maps.h \
	%reldir%/cache/cache-format.c \
	%reldir%/cache/cache-format.h \
	%reldir%/cache/cache-format-unicode.h \
	%reldir%/cache/cache-index.c \
	%reldir%/cache/cache-index.h \
	%reldir%/cache/cache-journal.c \
	%reldir%/cache/cache-journal.h \
	%reldir%/cache/cache-publish.c \
	%reldir%/cache/cache-publish.h \
	# End of libnsscache_cache_la_SOURCES
EXTRA_DIST += %reldir%/cache/gen-pyprintable.py

# Everything else but the module's entry points: the configuration, the
# sources' table and the refresh (here), the scim source (scim/), the http
# and s3 sources (files/), what a producer leaves for its fleet (fleet/);
# a library the unit tests link.  The files of the subfolders name the
# module's headers from this folder (-I).
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
	%reldir%/fetch-record.c \
	%reldir%/fetch-record.h \
	%reldir%/fetch-stats.h \
	%reldir%/digest.c \
	%reldir%/digest.h \
	%reldir%/mapper.c \
	%reldir%/mapper.h \
	%reldir%/mapper-internal.h \
	%reldir%/dupset.c \
	%reldir%/dupset.h \
	%reldir%/map-reject.c \
	%reldir%/map-reject.h \
	%reldir%/map-sink.c \
	%reldir%/map-sink.h \
	%reldir%/curl-common.c \
	%reldir%/curl-common.h \
	%reldir%/scim/scim-fetch.c \
	%reldir%/scim/scim-fetch.h \
	%reldir%/scim/scim-page.c \
	%reldir%/scim/scim-page.h \
	%reldir%/scim/scim-spc.c \
	%reldir%/scim/scim-spc.h \
	%reldir%/scim/scim-map.c \
	%reldir%/scim/scim-map.h \
	%reldir%/scim/attr-path.c \
	%reldir%/scim/attr-path.h \
	%reldir%/files/http-automount.c \
	%reldir%/files/http-automount.h \
	%reldir%/files/http-source.c \
	%reldir%/files/http-source.h \
	%reldir%/files/http-fetch.c \
	%reldir%/files/http-fetch.h \
	%reldir%/files/map-file.c \
	%reldir%/files/map-file.h \
	%reldir%/files/s3-auth.c \
	%reldir%/files/s3-auth.h \
	%reldir%/files/s3-object.c \
	%reldir%/files/s3-object.h \
	%reldir%/fleet/manifest.c \
	%reldir%/fleet/manifest.h \
	%reldir%/fleet/map-delta.c \
	%reldir%/fleet/map-delta.h \
	%reldir%/fleet/map-export.c \
	%reldir%/fleet/map-export.h \
	%reldir%/fleet/s3-export.c \
	%reldir%/fleet/s3-export.h \
	%reldir%/ldap/ldap-fetch.c \
	%reldir%/ldap/ldap-fetch.h \
	%reldir%/ldap/ldap-map.c \
	%reldir%/ldap/ldap-map.h \
	# End of libnsscache_core_la_SOURCES
%canon_reldir%_libnsscache_core_la_CFLAGS = $(AM_CFLAGS) -I$(srcdir)/%reldir% $(CURL_CFLAGS) $(JSONC_CFLAGS) $(CRYPTO_CFLAGS) $(ZLIB_CFLAGS)
%canon_reldir%_libnsscache_core_la_LIBADD = %reldir%/libnsscache-cache.la agent/libsunkd-modutil.la agent/libsunkd-util.la $(CURL_LIBS) \
	$(JSONC_LIBS) $(CRYPTO_LIBS) $(BZ2_LIBS) $(ZLIB_LIBS) $(LDAP_LIBS) -lm

pkglib_LTLIBRARIES += %reldir%/nsscache.la
%canon_reldir%_nsscache_la_SOURCES = %reldir%/nsscache.c
%canon_reldir%_nsscache_la_CFLAGS = $(AM_CFLAGS) -I$(srcdir)/%reldir% $(CURL_CFLAGS) $(JSONC_CFLAGS) $(CRYPTO_CFLAGS)
%canon_reldir%_nsscache_la_LDFLAGS = $(MODULE_LINK_FLAGS)
%canon_reldir%_nsscache_la_LIBADD = %reldir%/libnsscache-core.la $(CURL_LIBS) $(JSONC_LIBS) $(CRYPTO_LIBS) $(BZ2_LIBS) $(ZLIB_LIBS) $(LDAP_LIBS) -lm

# End of modules/nsscache/local.mk
