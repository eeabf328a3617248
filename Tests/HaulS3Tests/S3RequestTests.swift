import HaulCore
import HaulS3
import Testing

@Suite("S3 requests, replies and configuration")
struct S3RequestTests {
    let local = S3Config(
        endpoint: "http://127.0.0.1:8333/", region: "us-east-1", credentials: S3Credentials(accessKeyID: "AK", secretAccessKey: "s3cr3t-value"))
    let aws = S3Config(endpoint: nil, region: "eu-west-1", credentials: S3Credentials(accessKeyID: "AK", secretAccessKey: "s3cr3t-value"))

    @Test("path-style with an endpoint, virtual-hosted on AWS; sub-resources written with '='")
    func urls() {
        let create = S3Request("POST", config: local, bucket: "data", key: "a b/c+d.iso", query: [("uploads", "")])
        #expect(create.url == "http://127.0.0.1:8333/data/a%20b/c%2Bd.iso?uploads=")
        let part = S3Request("PUT", config: aws, bucket: "data", key: "x", query: [("uploadId", "u/1="), ("partNumber", "3")])
        #expect(part.url == "https://data.s3.eu-west-1.amazonaws.com/x?partNumber=3&uploadId=u%2F1%3D")
        #expect(S3Request("HEAD", config: local, bucket: "data").url == "http://127.0.0.1:8333/data")
        let forced = S3Config(endpoint: "https://minio.example", region: "r", pathStyle: false, credentials: local.credentials)
        #expect(S3Request("GET", config: forced, bucket: "b1b", key: "k").url == "https://b1b.minio.example/k")
    }

    @Test("bucket names of older AWS buckets and GCS are accepted; the rest of the rules hold")
    func bucketNames() throws {
        for name in ["My_Bucket", "UPPER", "a_b", "dots.in.name", String(repeating: "b", count: 255), "9lives"] {
            #expect(try S3Location(parsing: "s3://\(name)/k", what: "-o").bucket == name)
        }
        for name in ["ab", "-dash", ".dot", "sp ace", "ünï", "a+b", String(repeating: "b", count: 256)] {
            #expect(throws: HaulError.self, "\(name)") { try S3Location(parsing: "s3://\(name)/k", what: "-o") }
        }
    }

    @Test("virtual-hosted only for names that are host labels, never for dotted names over HTTPS, as the SDKs do")
    func addressing() {
        let credentials = local.credentials
        let virtualHTTP = S3Config(endpoint: "http://minio.example", region: "r", pathStyle: false, credentials: credentials)
        for name in ["data", "a-b-c", "x1y"] { #expect(!aws.usesPathStyle(for: name), "\(name)") }
        for name in ["My_Bucket", "a_b", "UPPER", "dots.in.name", "a..b", "a.-b", String(repeating: "b", count: 64)] {
            #expect(aws.usesPathStyle(for: name), "\(name)")
        }
        #expect(!virtualHTTP.usesPathStyle(for: "dots.in.name"))
        #expect(virtualHTTP.usesPathStyle(for: "Upper"))
        #expect(local.usesPathStyle(for: "data"))
        #expect(S3Request("GET", config: aws, bucket: "logs.example.com", key: "k").url == "https://s3.eu-west-1.amazonaws.com/logs.example.com/k")
        #expect(S3Request("GET", config: aws, bucket: "Old_Bucket", key: "k").url == "https://s3.eu-west-1.amazonaws.com/Old_Bucket/k")
        #expect(S3Request("GET", config: virtualHTTP, bucket: "logs.example.com", key: "k").url == "http://logs.example.com.minio.example/k")
    }

    @Test("s3:// locations: bucket rules, prefixes, unknown schemes refused as usage errors")
    func locations() throws {
        let location = try S3Location(parsing: "s3://my-bucket/some/prefix/", what: "--storage")
        #expect(location.bucket == "my-bucket")
        #expect(location.key(for: "f.iso") == "some/prefix/f.iso")
        #expect(try S3Location(parsing: "s3://bkt", what: "-o").key(for: "f") == "f")
        #expect(throws: HaulError.self) { try S3Location(parsing: "s3://ab/k", what: "-o") }
        #expect(throws: HaulError.self) { try S3Location(parsing: "gs://bucket/k", what: "-o") }
        #expect(S3Location.isURLLike("gs://bucket/k"))
        #expect(!S3Location.isURLLike("/tmp/a:b"))
        #expect(!S3Location.isURLLike("notes:v2.txt"))
        for slip in ["s3:/bucket/k", "s3:bucket", "S3://bucket/k", "file:/tmp/x"] {
            #expect(S3Location.isURLLike(slip), "\(slip)")
            #expect(throws: HaulError.self) { try S3Location(parsing: slip, what: "-o") }
        }
    }

    @Test(
        "a key or prefix another tool would map outside it, or S3 cannot store, is refused as a usage error",
        arguments: [
            "s3://bkt/../other/k", "s3://bkt/a/./b", "s3://bkt/a//b", "s3://bkt/a/..", "s3://bkt/x\u{7}y",
            "s3://bkt/" + String(repeating: "k", count: 1025),
        ])
    func hazardousKeys(text: String) {
        #expect {
            try S3Location(parsing: text, what: "-o")
        } throws: { error in
            (error as? HaulError)?.code == .usage && "\(error)".contains("names a key that")
        }
    }

    @Test("a prefix may end in '/', and leading slashes are dropped")
    func prefixes() throws {
        #expect(try S3Location(parsing: "s3://bkt/a/b/", what: "-o").path == "a/b/")
        #expect(try S3Location(parsing: "s3://bkt//double", what: "-o").path == "double")
        #expect(try S3Location(parsing: "s3://bkt/" + String(repeating: "k", count: 1024), what: "-o").path.utf8.count == 1024)
    }

    @Test("part size grows to keep within 10 000 parts and never goes below 5 MiB")
    func partSizes() {
        #expect(S3PartRules.partSize(fileSize: 100 << 20, requested: 1 << 20) == 5 << 20)
        #expect(S3PartRules.partSize(fileSize: 100 << 30, requested: 8 << 20) == 11 << 20)
        #expect(S3PartRules.partSize(fileSize: 1 << 30, requested: 64 << 20) == 64 << 20)
        #expect(S3PartRules.partSize(fileSize: 1 << 44, requested: 8 << 30) == 5 << 30)
    }

    @Test("replies: upload id, error code, upload listings with pages; completion body in part order")
    func replies() {
        let created =
            "<?xml version=\"1.0\"?><InitiateMultipartUploadResult><Bucket>b</Bucket><Key>k</Key><UploadId>abc&amp;1</UploadId></InitiateMultipartUploadResult>"
        #expect(S3XML.value("UploadId", in: created) == "abc&1")
        let listing = """
            <ListMultipartUploadsResult><IsTruncated>true</IsTruncated><NextKeyMarker>k2</NextKeyMarker><NextUploadIdMarker>u2</NextUploadIdMarker>
            <Upload><Key>k1</Key><UploadId>u1</UploadId><Initiated>2026-01-01T00:00:00Z</Initiated></Upload>
            <Upload><Key>k2</Key><UploadId>u2</UploadId><Initiated>2026-01-02T00:00:00Z</Initiated></Upload></ListMultipartUploadsResult>
            """
        let page = S3XML.uploads(listing)
        #expect(page.uploads.map(\.uploadID) == ["u1", "u2"])
        #expect(page.nextKey == "k2")
        #expect(
            S3XML.completion([(2, "\"b\""), (1, "\"a\"")])
                == "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>&quot;a&quot;</ETag></Part><Part><PartNumber>2</PartNumber><ETag>&quot;b&quot;</ETag></Part></CompleteMultipartUpload>"
        )
    }

    @Test("errors name the key id and endpoint, never the secret; buckets and regions are explained")
    func errors() {
        let denied = S3Failure.error(
            status: 403, code: "SignatureDoesNotMatch", message: nil, bucketRegion: nil, doing: "start an upload", bucket: "b", config: local)
        #expect(denied.code == .s3Auth)
        #expect(denied.description.contains("AK") && denied.description.contains("127.0.0.1:8333") && !denied.description.contains("s3cr3t"))
        let missing = S3Failure.error(status: 404, code: "NoSuchBucket", message: nil, bucketRegion: nil, doing: "x", bucket: "nobucket", config: local)
        #expect(missing.code == .s3NoBucket && missing.message.contains("'nobucket'"))
        let region = S3Failure.error(status: 301, code: nil, message: nil, bucketRegion: "ap-south-1", doing: "x", bucket: "b", config: aws)
        #expect(region.code == .s3Region && region.description.contains("AWS_REGION=ap-south-1"))
        #expect(S3Failure.error(status: 503, code: "SlowDown", message: nil, bucketRegion: nil, doing: "x", bucket: "b", config: local).isTransient)
    }

    @Test("credentials from the environment, else from a profile of the credentials file")
    func credentials() throws {
        let env = try S3Config.fromEnvironment([
            "AWS_ACCESS_KEY_ID": "K", "AWS_SECRET_ACCESS_KEY": "S", "AWS_DEFAULT_REGION": "eu-central-1", "AWS_ENDPOINT_URL": "http://h:1",
        ])
        #expect(env.region == "eu-central-1" && env.pathStyle && env.endpoint == "http://h:1")
        let file = "[default]\naws_access_key_id = D\naws_secret_access_key = DS\n[other]\naws_access_key_id=O\naws_secret_access_key=OS\naws_session_token=T\n"
        let other = S3Config.profileCredentials(file, profile: "other")
        #expect(other?.accessKeyID == "O" && other?.sessionToken == "T")
        #expect(S3Config.profileCredentials(file, profile: "none") == nil)
        #expect(throws: HaulError.self) { try S3Config.fromEnvironment(["HOME": "/nonexistent", "AWS_EC2_METADATA_DISABLED": "true"]) }
    }
}

@Suite("S3 key hazards")
struct S3KeyRuleTests {
    @Test("keys other tools would map outside the prefix, or that S3 cannot store, are named; ordinary keys pass")
    func hazards() {
        #expect(S3KeyRules.problem(with: "pre/out/a b/ü.txt") == nil)
        #expect(S3KeyRules.problem(with: String(repeating: "k", count: 1024)) == nil)
        #expect(S3KeyRules.problem(with: String(repeating: "k", count: 1025))?.contains("1025 bytes") == true)
        #expect(S3KeyRules.problem(with: String(repeating: "é", count: 513))?.contains("1026 bytes") == true, "bytes, not characters")
        #expect(S3KeyRules.problem(with: "") == "is empty")
        #expect(S3KeyRules.problem(with: "/abs") == "starts with '/'")
        // A "/" then a combining mark is one Character but two bytes a path is cut at (`PathText`).
        #expect(S3KeyRules.problem(with: "/\u{301}abs") == "starts with '/'")
        #expect(S3KeyRules.problem(with: "a/../\u{301}b") == "has a '..' segment")
        #expect(S3KeyRules.problem(with: "a//b")?.contains("empty segment") == true)
        #expect(S3KeyRules.problem(with: "a/b/")?.contains("empty segment") == true)
        #expect(S3KeyRules.problem(with: "a/../b") == "has a '..' segment")
        #expect(S3KeyRules.problem(with: "a/./b") == "has a '.' segment")
        #expect(S3KeyRules.problem(with: "a/..b/c.") == nil, "dots inside a segment are fine")
        for control in ["\u{01}", "\n", "\t", "\u{7F}", "\u{85}"] {
            #expect(S3KeyRules.problem(with: "a\(control)b") == "contains a control character")
        }
    }
}
