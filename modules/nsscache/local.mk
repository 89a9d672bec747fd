# modules/nsscache/: SCIM 2.0 users and groups to libnss-cache maps.

# End of modules/nsscache/local.mk
