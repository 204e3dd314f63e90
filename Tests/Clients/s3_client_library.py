"""Drives the S3 mock with AWS's own Python SDK (boto3), as a user pointing their client at `llvs-mock s3` would:
with its defaults (payload checksums, aws-chunked bodies where boto3 sends them), then: list buckets, create one, put
and get objects (ranges, a key with spaces and non-ASCII), head, a conditional put refused, list with a delimiter and
continuation tokens, a multipart upload through boto3's own transfer manager (parts, completion, an md5-of-md5s ETag),
a part listing, delete and batch delete, and the errors boto3 reads (NoSuchKey, NoSuchBucket, InvalidAccessKeyId).
Where boto3 and the mock disagree, the mock is wrong.

usage: python s3_client_library.py ENDPOINT ACCESS_KEY_ID SECRET     (prints "ok" and exits 0 when every step held)
"""
import hashlib
import io
import os
import sys

import boto3
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import ClientError


def check(condition, what):
    if not condition:
        raise SystemExit(f"failed: {what}")


def code(error):
    return error.response.get("Error", {}).get("Code")


def main():
    endpoint, key_id, secret = sys.argv[1], sys.argv[2], sys.argv[3]
    s3 = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=key_id, aws_secret_access_key=secret,
                      region_name="us-east-1", config=Config(s3={"addressing_style": "path"}))
    check("llvs" in [b["Name"] for b in s3.list_buckets()["Buckets"]], "list_buckets shows llvs")
    s3.create_bucket(Bucket="sdk")

    data = os.urandom(70_000)
    put = s3.put_object(Bucket="sdk", Key="dir/ünï cødé.bin", Body=data)
    check(put["ETag"].strip('"') == hashlib.md5(data).hexdigest(), f"put_object ETag is the MD5: {put['ETag']}")
    got = s3.get_object(Bucket="sdk", Key="dir/ünï cødé.bin")["Body"].read()
    check(got == data, "get_object gives the bytes back")
    part = s3.get_object(Bucket="sdk", Key="dir/ünï cødé.bin", Range="bytes=100-199")
    check(part["Body"].read() == data[100:200] and part["ResponseMetadata"]["HTTPStatusCode"] == 206, "a range")
    head = s3.head_object(Bucket="sdk", Key="dir/ünï cødé.bin")
    check(head["ContentLength"] == len(data), f"head_object: {head['ContentLength']}")
    try:
        s3.put_object(Bucket="sdk", Key="dir/ünï cødé.bin", Body=b"again", IfNoneMatch="*")
        check(False, "a conditional put over an existing key should be refused")
    except ClientError as error:
        check(code(error) == "PreconditionFailed", f"412 PreconditionFailed: {error}")

    for index in range(7):
        s3.put_object(Bucket="sdk", Key=f"many/file-{index}", Body=b"x" * index)
    s3.put_object(Bucket="sdk", Key="many/sub/inside", Body=b"in")
    keys, prefixes, token, pages = [], [], None, 0
    while True:
        args = {"Bucket": "sdk", "Prefix": "many/", "Delimiter": "/", "MaxKeys": 3}
        if token:
            args["ContinuationToken"] = token
        page = s3.list_objects_v2(**args)
        pages += 1
        keys += [entry["Key"] for entry in page.get("Contents", [])]
        prefixes += [entry["Prefix"] for entry in page.get("CommonPrefixes", [])]
        if not page["IsTruncated"]:
            break
        token = page["NextContinuationToken"]
    check(keys == [f"many/file-{i}" for i in range(7)] and prefixes == ["many/sub/"] and pages == 3,
          f"list_objects_v2 pages: {keys} {prefixes} {pages}")

    big = os.urandom(12 * 1024 * 1024 + 5)
    transfer = TransferConfig(multipart_threshold=5 * 1024 * 1024, multipart_chunksize=5 * 1024 * 1024)
    s3.upload_fileobj(io.BytesIO(big), "sdk", "big.bin", Config=transfer)
    check(s3.get_object(Bucket="sdk", Key="big.bin")["Body"].read() == big, "the multipart upload reads back")
    digests = b"".join(hashlib.md5(big[i:i + 5 * 1024 * 1024]).digest() for i in range(0, len(big), 5 * 1024 * 1024))
    etag = s3.head_object(Bucket="sdk", Key="big.bin")["ETag"].strip('"')
    check(etag == hashlib.md5(digests).hexdigest() + "-3", f"the multipart ETag is the MD5 of the parts' MD5s: {etag}")

    upload = s3.create_multipart_upload(Bucket="sdk", Key="parts.bin")["UploadId"]
    s3.upload_part(Bucket="sdk", Key="parts.bin", UploadId=upload, PartNumber=1, Body=b"p" * (5 * 1024 * 1024))
    listed = s3.list_parts(Bucket="sdk", Key="parts.bin", UploadId=upload)["Parts"]
    check([p["PartNumber"] for p in listed] == [1] and listed[0]["Size"] == 5 * 1024 * 1024, f"list_parts: {listed}")
    s3.abort_multipart_upload(Bucket="sdk", Key="parts.bin", UploadId=upload)
    try:
        s3.list_parts(Bucket="sdk", Key="parts.bin", UploadId=upload)
        check(False, "an aborted upload should be gone")
    except ClientError as error:
        check(code(error) == "NoSuchUpload", f"NoSuchUpload: {error}")

    s3.delete_object(Bucket="sdk", Key="big.bin")
    deleted = s3.delete_objects(Bucket="sdk", Delete={"Objects": [{"Key": k} for k in keys]})
    check(len(deleted.get("Deleted", [])) == 7, f"delete_objects: {deleted}")
    left = [entry["Key"] for entry in s3.list_objects_v2(Bucket="sdk").get("Contents", [])]
    check(left == ["dir/ünï cødé.bin", "many/sub/inside"], f"what is left: {left}")
    try:
        s3.get_object(Bucket="sdk", Key="big.bin")
        check(False, "a deleted key should not be found")
    except ClientError as error:
        check(code(error) == "NoSuchKey", f"NoSuchKey: {error}")
    try:
        s3.list_objects_v2(Bucket="missing")
        check(False, "a missing bucket should be refused")
    except ClientError as error:
        check(code(error) == "NoSuchBucket", f"NoSuchBucket: {error}")
    stranger = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="SOMEONEELSE", aws_secret_access_key=secret,
                            region_name="us-east-1", config=Config(s3={"addressing_style": "path"}))
    try:
        stranger.list_objects_v2(Bucket="sdk")
        check(False, "an unknown key should be refused")
    except ClientError as error:
        check(code(error) == "InvalidAccessKeyId", f"InvalidAccessKeyId: {error}")
    print("ok")


main()
