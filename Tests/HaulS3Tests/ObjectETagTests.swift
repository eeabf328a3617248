import HaulCore
import HaulS3
import Testing

/// The ETag of a completed multipart upload, as AWS S3, MinIO and SeaweedFS compute it.
@Suite("object ETags")
struct ObjectETagTests {
    /// Two parts (5 MiB and 1234 bytes) uploaded to SeaweedFS with boto3; the completed object's ETag as it answered.
    static let parts = ["\"5dbf479c1a2e1e241f513eab76021ad1\"", "\"7b0ea1124c1d7cb5be42a9c06401a0ac\""]
    static let completed = "\"81e2b8cf95cc246a9728d065fa78e96d-2\""

    @Test("the MD5 of the parts' MD5s, then the number of parts")
    func ofParts() {
        #expect(ObjectETag.multipart(parts: Self.parts) == "81e2b8cf95cc246a9728d065fa78e96d-2")
        let bare = Self.parts.map { $0.replacingOccurrences(of: "\"", with: "").uppercased() }
        #expect(ObjectETag.multipart(parts: bare) == "81e2b8cf95cc246a9728d065fa78e96d-2")
        // One part: still the MD5 of its MD5, and "-1" (not the part's own ETag).
        #expect(ObjectETag.multipart(parts: [Self.parts[0]]) != "5dbf479c1a2e1e241f513eab76021ad1")
        #expect(ObjectETag.multipart(parts: [Self.parts[0]])?.hasSuffix("-1") == true)
    }

    @Test("only the object those parts make matches; a part order, count or ETag that differs does not")
    func matches() {
        #expect(ObjectETag.matches(Self.completed, parts: Self.parts))
        #expect(ObjectETag.matches("81E2B8CF95CC246A9728D065FA78E96D-2", parts: Self.parts))
        #expect(!ObjectETag.matches(Self.completed, parts: Self.parts.reversed()))
        #expect(!ObjectETag.matches(Self.completed, parts: [Self.parts[0]]))
        #expect(!ObjectETag.matches("\"81e2b8cf95cc246a9728d065fa78e96d-3\"", parts: Self.parts))
        // A single PutObject of other bytes has a plain MD5 for an ETag.
        #expect(!ObjectETag.matches("\"5dbf479c1a2e1e241f513eab76021ad1\"", parts: Self.parts))
    }

    static let notMD5s: [[String]] = [
        ["\"5dbf479c1a2e1e241f513eab76021ad\""], ["\"zzbf479c1a2e1e241f513eab76021ad1\""], ["\"\""], ["\"5dbf479c1a2e1e241f513eab76021ad1-1\""], [],
    ]

    @Test("parts whose ETags are not MD5s (encrypted stores) give no ETag to match", arguments: notMD5s)
    func unknowable(parts: [String]) {
        #expect(ObjectETag.multipart(parts: parts) == nil)
        #expect(!ObjectETag.matches(Self.completed, parts: parts))
    }

    @Test("two ETags are the same object but for quotes and case")
    func same() {
        #expect(ObjectETag.same("\"5dbf479c1a2e1e241f513eab76021ad1\"", "5DBF479C1A2E1E241F513EAB76021AD1"))
        #expect(!ObjectETag.same("\"5dbf479c1a2e1e241f513eab76021ad1\"", "\"5dbf479c1a2e1e241f513eab76021ad2\""))
        #expect(!ObjectETag.same("\"\"", "\"5dbf479c1a2e1e241f513eab76021ad1\""))
    }

    @Test("hex decodes in either case; odd lengths and other characters are refused")
    func hexBytes() {
        #expect(Checksum.bytes(ofHex: "00ff7A") == [0, 255, 122])
        #expect(Checksum.bytes(ofHex: "") == [])
        #expect(Checksum.bytes(ofHex: "abc") == nil)
        #expect(Checksum.bytes(ofHex: "0g") == nil)
        #expect(Checksum.bytes(ofHex: "é1") == nil)
    }
}
