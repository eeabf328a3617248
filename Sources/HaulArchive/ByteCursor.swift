import HaulCore

/// Reads little-endian fields from a byte buffer, throwing `corrupt-archive` instead of trapping on overrun.
struct ByteCursor {
    let bytes: [UInt8]
    private(set) var position: Int
    let context: String

    init(_ bytes: [UInt8], at position: Int = 0, context: String) {
        self.bytes = bytes
        self.position = position
        self.context = context
    }

    var remaining: Int { bytes.count - position }

    mutating func u16() throws -> UInt16 {
        try need(2)
        defer { position += 2 }
        return UInt16(bytes[position]) | UInt16(bytes[position + 1]) << 8
    }

    mutating func u32() throws -> UInt32 {
        try need(4)
        defer { position += 4 }
        var value: UInt32 = 0
        for index in (0..<4).reversed() { value = value << 8 | UInt32(bytes[position + index]) }
        return value
    }

    mutating func u64() throws -> UInt64 {
        let low = UInt64(try u32())
        return UInt64(try u32()) << 32 | low
    }

    mutating func take(_ count: Int) throws -> [UInt8] {
        try need(count)
        defer { position += count }
        return Array(bytes[position..<position + count])
    }

    mutating func skip(_ count: Int) throws {
        try need(count)
        position += count
    }

    private func need(_ count: Int) throws {
        guard count >= 0, remaining >= count else { throw HaulError.corrupt("\(context) is truncated") }
    }
}

/// Appends little-endian fields to a byte buffer.
struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    mutating func u16(_ value: UInt16) { bytes += [UInt8(value & 0xFF), UInt8(value >> 8)] }
    mutating func u32(_ value: UInt32) { for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(value >> UInt32(shift) & 0xFF)) } }
    mutating func u64(_ value: UInt64) { for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(value >> UInt64(shift) & 0xFF)) } }
    mutating func append(_ data: [UInt8]) { bytes += data }
}
