"""The tests' independent S3 client (boto3), against the test SeaweedFS.

Usage: s3check.py mkbucket NAME | mklockbucket NAME (Object Lock, default retention) | stat BUCKET KEY | type BUCKET KEY (its Content-Type) | uploads BUCKET | keys BUCKET PREFIX | start BUCKET KEY | put BUCKET KEY TEXT
       | scramble BUCKET KEY (puts random bytes of the object's size over it)
Prints JSON on stdout. Reads HAUL_TEST_S3_ENDPOINT, HAUL_TEST_S3_KEY, HAUL_TEST_S3_SECRET.
"""
import datetime
import hashlib
import json
import os
import sys

import boto3
from botocore.exceptions import ClientError


def client():
    return boto3.client(
        "s3", endpoint_url=os.environ["HAUL_TEST_S3_ENDPOINT"], region_name="us-east-1",
        aws_access_key_id=os.environ["HAUL_TEST_S3_KEY"], aws_secret_access_key=os.environ["HAUL_TEST_S3_SECRET"])


def sweep(s3, limit=20):
    """Deletes up to `limit` test buckets (`haul-*`) made more than two hours ago, objects and
    open uploads first: tests never delete their own (a test's bucket may outlive its scope), and a
    store runs out of volumes at some hundreds of buckets. Best effort: a bucket another run is
    sweeping, or whose objects are under retention, is left."""
    old = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=2)
    stale = [b["Name"] for b in s3.list_buckets().get("Buckets", []) if b["Name"].startswith("haul-") and b["CreationDate"] < old]
    for name in stale[:limit]:
        try:
            for u in s3.list_multipart_uploads(Bucket=name).get("Uploads", []):
                s3.abort_multipart_upload(Bucket=name, Key=u["Key"], UploadId=u["UploadId"])
            for page in s3.get_paginator("list_object_versions").paginate(Bucket=name):
                for item in page.get("Versions", []) + page.get("DeleteMarkers", []):
                    s3.delete_object(Bucket=name, Key=item["Key"], VersionId=item["VersionId"], BypassGovernanceRetention=True)
            for page in s3.get_paginator("list_objects_v2").paginate(Bucket=name):
                for item in page.get("Contents", []):
                    s3.delete_object(Bucket=name, Key=item["Key"])
            s3.delete_bucket(Bucket=name)
        except ClientError:
            pass


def main(command, *args):
    s3 = client()
    if command in ("mkbucket", "mklockbucket"):
        sweep(s3)
    if command == "mkbucket":
        s3.create_bucket(Bucket=args[0])
        result = {"bucket": args[0]}
    elif command == "mklockbucket":
        # Object Lock with a default retention: every put must carry Content-MD5 or a checksum.
        s3.create_bucket(Bucket=args[0], ObjectLockEnabledForBucket=True)
        s3.put_object_lock_configuration(Bucket=args[0], ObjectLockConfiguration={
            "ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 1}}})
        result = {"bucket": args[0]}
    elif command == "stat":
        try:
            found = s3.get_object(Bucket=args[0], Key=args[1])
            body = found["Body"]
        except ClientError as error:
            if error.response["Error"]["Code"] in ("NoSuchKey", "404"):
                result = None
            else:
                raise
        else:
            digest, md5, size = hashlib.sha256(), hashlib.md5(), 0
            for chunk in iter(lambda: body.read(1 << 20), b""):
                digest.update(chunk)
                md5.update(chunk)
                size += len(chunk)
            # A single PutObject's ETag is the body's MD5; a multipart object's is not (it ends in -N).
            result = {"size": size, "sha256": digest.hexdigest(), "etag": found["ETag"].strip('"'), "md5": md5.hexdigest()}
    elif command == "type":
        try:
            result = s3.head_object(Bucket=args[0], Key=args[1])["ContentType"]
        except ClientError as error:
            if error.response["Error"]["Code"] in ("NoSuchKey", "404"):
                result = None
            else:
                raise
    elif command == "uploads":
        result = [{"key": u["Key"], "id": u["UploadId"]} for u in s3.list_multipart_uploads(Bucket=args[0]).get("Uploads", [])]
    elif command == "start":
        result = s3.create_multipart_upload(Bucket=args[0], Key=args[1])["UploadId"]
    elif command == "abort":
        uploads = [u for u in s3.list_multipart_uploads(Bucket=args[0]).get("Uploads", []) if u["Key"] == args[1]]
        for u in uploads:
            s3.abort_multipart_upload(Bucket=args[0], Key=args[1], UploadId=u["UploadId"])
        result = len(uploads)
    elif command == "put":
        with open(args[2], "rb") as body:
            result = s3.put_object(Bucket=args[0], Key=args[1], Body=body.read())["ETag"]
    elif command == "scramble":
        size = s3.head_object(Bucket=args[0], Key=args[1])["ContentLength"]
        result = s3.put_object(Bucket=args[0], Key=args[1], Body=os.urandom(size))["ETag"]
    elif command == "keys":
        pages = s3.get_paginator("list_objects_v2").paginate(Bucket=args[0], Prefix=args[1])
        result = sorted(item["Key"] for page in pages for item in page.get("Contents", []))
    else:
        raise SystemExit("unknown command " + command)
    print(json.dumps(result))


main(*sys.argv[1:])
