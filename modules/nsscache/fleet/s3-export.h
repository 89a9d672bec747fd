/* export_s3_url: the producer's export_dir, uploaded to a bucket.
 *
 * After map_export() the manifest in export_dir is compared with the one
 * uploaded last (a copy kept in the state directory as s3-export); when it
 * differs, each file it names is uploaded unless a HEAD finds it there
 * already (the names are content-addressed: same name, same bytes), and
 * the manifest last, so a node that reads the bucket's manifest finds
 * every file it names.  PUT and HEAD are signed by libcurl (SigV4, as the
 * s3 source's requests); the credentials are the s3 source's
 * (s3_credentials_file or the AWS_* environment, s3_region).  A failed
 * upload keeps no copy, so the next run tries again.  Runs on the worker;
 * non-logging.
 */
#pragma once
#include <stdint.h>

#include "cache/cache-publish.h"
#include "nsscache-conf.h"
#include "sunkd/module.h"

#define S3_EXPORT_COPY "s3-export"

/**
 * s3_export() - upload what export_dir holds to export_s3_url, if it has not been.
 * *@ret_uploaded: the objects PUT (0 when the bucket was up to date).
 * Return: 0, or negative errno with *ret_error naming the URL or file.
 */
int s3_export(const NsscacheConf *c, const CacheOptions *opts, const sunkd_cancel *cancel,
              uint64_t *ret_uploaded, char **ret_error);
