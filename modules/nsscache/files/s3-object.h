/* The maps of nsscache's s3 source: each object a JSON array of records
 *
 *   [{"Key": "alice", "Value": {"uid": 10000, "gid": 10000, ...}}, ...]
 *
 * with the attributes nsscache's s3source.py reads (passwd: uid, gid,
 * comment, home, shell, passwd; group: gid, members as names joined by
 * "\n", passwd; shadow: passwd, lstchg, min, max, warn, inact, expire;
 * sshkey: sshPublicKey) and its defaults (home /home/NAME, shell
 * /bin/bash, passwd "x", shadow passwd "*").  Where nsscache skips a record
 * it cannot read, sunkd counts it as a rejected line: a record that is not
 * an object with a string Key and an object Value, an attribute nsscache
 * does not read or of the wrong type, a uid or gid that is not an integer,
 * a passwd or group password other than "x".  The entries then go through
 * mapper_add_entry(), as a map file's lines do.  An object that is not a
 * JSON array fails the run.  The array is walked record by record, each
 * parsed alone and freed: the peak is the body and one record's tree, not
 * the json-c tree of the whole object (about 50 times its bytes).  A
 * syntax error anywhere fails the run, after the records before it were
 * handed on.  Non-logging.
 */
#pragma once
#include <stddef.h>

#include "map-file.h"
#include "cache/nss-maps.h"

/**
 * s3_object_parse() - the records of map @t in @data (@len bytes).
 * Return: 0; -EBADMSG with *ret_error "MAP: why" for an object that is not
 * a JSON array; -ENOMEM; or what a callback returned.  @on_bad gets the
 * record's index (from 1) as its line.
 */
int s3_object_parse(NssMapType t, const char *data, size_t len, map_file_entry_fn on_entry,
                    map_file_bad_fn on_bad, void *userdata, char **ret_error);
