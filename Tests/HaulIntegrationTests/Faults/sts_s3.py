#!/usr/bin/env python3
"""A fake AWS STS in front of a real S3 store, for Haul's credential-chain tests (standard
library only). Prints `PORT <n>` once listening on 127.0.0.1.

    python3 sts_s3.py UPSTREAM KEY SECRET

    POST /  Action=AssumeRoleWithWebIdentity   answers KEY and SECRET with a session token
            or Action=AssumeRole               `sts-token-<n>` expiring in an hour (as STS does),
                                               whatever the web identity token; AssumeRole must
                                               be signed (SigV4)
    GET /container-credentials                 the ECS container endpoint: KEY, SECRET and token
                                               `container-token`, for `Authorization: secret-auth`
    GET /federation/credentials?account_id=&role_name=
                                               the SSO portal: KEY, SECRET and token `sso-session`
                                               for `x-amz-sso_bearer_token: sso-access-token`
    PUT /latest/api/token, GET /latest/meta-data/iam/security-credentials/[haul-role]
                                               IMDSv2 with role `haul-role` (token `imds-token`)
    GET /_log                                  JSON: "STS <Action> <RoleArn> <WebIdentityToken or
                                               signing key id>", "ECS <Authorization>", "SSO <account> <role> <bearer>", "IMDS
                                               <METHOD> <path> <IMDS token>" and
                                               "S3 <METHOD> <path> <x-amz-security-token>"
    anything else                              relayed to the S3 store at UPSTREAM (signatures
                                               stay valid: Host is passed on), except that a
                                               request whose session token starts with `expired-`
                                               is answered 400 ExpiredToken, as AWS does
"""
import datetime
import http.client
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

UPSTREAM = urlsplit(sys.argv[1])
KEY, SECRET = sys.argv[2], sys.argv[3]
LOG = []
LOCK = threading.Lock()
HOP = ("connection", "expect", "transfer-encoding", "keep-alive")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body, content_type="application/xml", headers=(), head=False, length=None):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", length if head and length is not None else str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if self.path == "/_log":
            with LOCK:
                return self.answer(200, json.dumps(LOG).encode(), "application/json")
        if self.command == "POST" and self.path == "/" and b"Action=" in body:
            return self.sts(parse_qs(body.decode()))
        if self.path == "/container-credentials":
            with LOCK:
                LOG.append("ECS %s" % self.headers.get("Authorization", "-"))
            if self.headers.get("Authorization") != "secret-auth":
                return self.answer(401, b'{"Message": "bad token"}', "application/json")
            return self.answer(200, self.metadata("container-token"), "application/json")
        if self.path.startswith("/federation/credentials?"):
            query = parse_qs(urlsplit(self.path).query)
            bearer = self.headers.get("x-amz-sso_bearer_token", "-")
            with LOCK:
                LOG.append("SSO %s %s %s" % (query.get("account_id", ["-"])[0], query.get("role_name", ["-"])[0], bearer))
            if bearer != "sso-access-token":
                return self.answer(401, b'{"message": "Session token not found or invalid"}', "application/json")
            expires = int((datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)).timestamp() * 1000)
            role = {"accessKeyId": KEY, "secretAccessKey": SECRET, "sessionToken": "sso-session", "expiration": expires}
            return self.answer(200, json.dumps({"roleCredentials": role}).encode(), "application/json")
        if self.path.startswith("/latest/"):
            return self.imds()
        token = self.headers.get("x-amz-security-token") or "-"
        with LOCK:
            LOG.append("S3 %s %s %s" % (self.command, urlsplit(self.path).path, token))
        if token.startswith("expired-"):
            error = (b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>ExpiredToken</Code>'
                     b"<Message>The provided token has expired.</Message></Error>")
            return self.answer(400, error, head=self.command == "HEAD")
        connection = http.client.HTTPConnection(UPSTREAM.hostname, UPSTREAM.port, timeout=60)
        headers = {name: value for name, value in self.headers.items() if name.lower() not in HOP}
        headers["Content-Length"] = str(len(body))
        connection.request(self.command, self.path, body=body, headers=headers)
        reply = connection.getresponse()
        data = reply.read()
        passed = [(n, v) for n, v in reply.getheaders() if n.lower() not in HOP + ("content-length", "content-type")]
        self.answer(reply.status, data, reply.getheader("Content-Type") or "application/xml", passed,
                    head=self.command == "HEAD", length=reply.getheader("Content-Length"))
        connection.close()

    def sts(self, form):
        action = form.get("Action", [""])[0]
        authorization = self.headers.get("Authorization", "")
        signer = authorization.split("Credential=")[1].split("/")[0] if "Credential=" in authorization else "-"
        proof = signer if action == "AssumeRole" else form.get("WebIdentityToken", ["-"])[0]
        with LOCK:
            LOG.append("STS %s %s %s" % (action, form.get("RoleArn", ["-"])[0], proof))
            number = len(LOG)
        if action not in ("AssumeRole", "AssumeRoleWithWebIdentity") or proof == "-":
            error = (b"<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code>"
                     b"<Message>not served here</Message></Error></ErrorResponse>")
            return self.answer(403, error)
        expires = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        reply = ("<%sResponse><%sResult><Credentials>"
                 "<AccessKeyId>%s</AccessKeyId><SecretAccessKey>%s</SecretAccessKey>"
                 "<SessionToken>sts-token-%d</SessionToken><Expiration>%s</Expiration>"
                 "</Credentials></%sResult></%sResponse>"
                 % (action, action, KEY, SECRET, number, expires, action, action))
        self.answer(200, reply.encode())

    def metadata(self, token):
        expires = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        return json.dumps({"Code": "Success", "AccessKeyId": KEY, "SecretAccessKey": SECRET, "Token": token,
                           "Expiration": expires}).encode()

    def imds(self):
        token = self.headers.get("X-aws-ec2-metadata-token", "-")
        with LOCK:
            LOG.append("IMDS %s %s %s" % (self.command, self.path, token))
        if self.command == "PUT" and self.path == "/latest/api/token":
            return self.answer(200, b"imds-token", "text/plain")
        if token != "imds-token":
            return self.answer(401, b"", "text/plain")
        if self.path == "/latest/meta-data/iam/security-credentials/":
            return self.answer(200, b"haul-role", "text/plain")
        if self.path == "/latest/meta-data/iam/security-credentials/haul-role":
            return self.answer(200, self.metadata("imds-session"), "application/json")
        self.answer(404, b"", "text/plain")

    do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = handle_any


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print("PORT", server.server_address[1], flush=True)
server.serve_forever()
