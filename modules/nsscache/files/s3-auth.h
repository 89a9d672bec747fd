/* S3: credentials, region and object URLs, for nsscache's s3 source and
 * the producer's upload.
 *
 * Requests are signed by libcurl (CURLOPT_AWS_SIGV4, "aws:amz:REGION:s3"),
 * never here.  The credentials come from s3_credentials_file, the AWS
 * shared credentials format's [default] profile (aws_access_key_id,
 * aws_secret_access_key, aws_session_token), read like every secret file
 * (util/secret-file.h), else from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY
 * and AWS_SESSION_TOKEN.  They are read at every run, so a rotated Secret
 * is picked up.  URLs are path-style: ENDPOINT/BUCKET/OBJECT, which every
 * S3-compatible server takes.  Non-logging.
 */
#pragma once
#include <stdbool.h>

#include "http-fetch.h"
#include "nsscache-conf.h"

#define S3_CREDENTIALS_MAX (16 * 1024)
#define S3_REGION_DEFAULT "us-east-1"
#define S3_REGION_MAX 32

typedef struct S3Auth {
        char *sigv4;   /* "aws:amz:REGION:s3" */
        char *userpwd; /* "KEYID:SECRET": wiped on done */
        char *token;   /* session token or NULL: wiped on done */
        char *region;
} S3Auth;

void s3_auth_done(S3Auth *a);

/**
 * s3_auth_load() - the credentials and region this run signs with.
 * *@ret_key: the key an error is about ("s3_credentials_file", "s3_region")
 * or NULL (the environment).
 * Return: 0; -ENOKEY (none configured), -EPERM (a file others may read),
 * -EBADMSG (a file or variable that is not valid), -EINVAL (a bad region),
 * -ENOMEM; *ret_error says why, naming the file or variable.
 */
int s3_auth_load(const NsscacheConf *c, S3Auth *ret, const char **ret_key, char **ret_error);

/** s3_auth_apply() - sign the requests of a fetch made with @o as @a says. */
void s3_auth_apply(const S3Auth *a, HttpFetchOptions *o);

/** s3_region_valid() - lowercase letters, digits and '-', 1 to S3_REGION_MAX of them. */
bool s3_region_valid(const char *region);

/** s3_bucket_valid() - a bucket name S3 or GCS would take: [a-z0-9._-], 3 to 222 characters. */
bool s3_bucket_valid(const char *bucket);

/** s3_object_valid() - an object key: 1 to 1024 bytes, no control character, not starting with '/'. */
bool s3_object_valid(const char *object);

/**
 * s3_object_url() - the path-style URL of @object in s3_bucket at
 * s3_endpoint (default https://s3.@region.amazonaws.com), the key
 * percent-encoded but for its '/'.  Return: 0 or -ENOMEM.
 */
int s3_object_url(const NsscacheConf *c, const char *region, const char *object, char **ret);

/** s3_join() - @base without trailing '/', a '/', @name.  Return: 0 or -ENOMEM. */
int s3_join(const char *base, const char *name, char **ret);
