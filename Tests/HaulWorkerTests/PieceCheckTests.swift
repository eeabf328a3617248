import HaulCore
import Testing

@testable import HaulWorker

/// Pieces digested as their bytes arrive, in chunks that do not follow piece boundaries.
@Suite("piece checks")
struct PieceCheckTests {
    /// 10 bytes in pieces of 4: 0123, 4567, 89.
    static let bytes = Array("0123456789".utf8)
    static func digest(_ slice: ArraySlice<UInt8>) -> String {
        let digester = Digester(.sha256)
        Array(slice).withUnsafeBytes { digester.update($0) }
        return digester.finish().hex
    }
    static let hashes = [digest(bytes[0..<4]), digest(bytes[4..<8]), digest(bytes[8..<10])]

    static func feed(_ check: PieceCheck, _ bytes: [UInt8], chunk: Int) -> (index: Int64, offset: Int64)? {
        var start = 0
        while start < bytes.count {
            let end = min(start + chunk, bytes.count)
            if let bad = bytes[start..<end].withUnsafeBytes({ check.feed($0) }) { return bad }
            start = end
        }
        return nil
    }

    @Test("every chunking of good bytes passes, from the start or from a later piece")
    func good() {
        for chunk in 1...10 {
            let check = PieceCheck(algorithm: .sha256, pieceLength: 4, fileSize: 10, start: 0, hashes: Self.hashes)
            #expect(Self.feed(check, Self.bytes, chunk: chunk) == nil, "chunk \(chunk)")
        }
        let resumed = PieceCheck(algorithm: .sha256, pieceLength: 4, fileSize: 10, start: 4, hashes: Array(Self.hashes.dropFirst()))
        #expect(Self.feed(resumed, Array(Self.bytes[4...]), chunk: 3) == nil)
    }

    @Test("a changed byte names its piece and the piece's first byte, whatever the chunking")
    func bad() {
        var changed = Self.bytes
        changed[9] = UInt8(ascii: "x")
        for chunk in 1...10 {
            let check = PieceCheck(algorithm: .sha256, pieceLength: 4, fileSize: 10, start: 0, hashes: Self.hashes)
            let bad = Self.feed(check, changed, chunk: chunk)
            #expect(bad?.index == 2 && bad?.offset == 8, "chunk \(chunk)")
        }
        changed = Self.bytes
        changed[5] = 0
        let check = PieceCheck(algorithm: .sha256, pieceLength: 4, fileSize: 10, start: 0, hashes: Self.hashes)
        #expect(Self.feed(check, changed, chunk: 7)?.offset == 4)
    }
}
