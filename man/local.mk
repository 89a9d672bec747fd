# man/

# End of man/local.mk
