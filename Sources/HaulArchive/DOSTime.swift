import Glibc

/// MS-DOS date and time fields, which zip headers carry in local time with two-second resolution.
enum DOSTime {
    /// Seconds since 1970 for a DOS date and time read as local time, as Info-ZIP does.
    static func unixTime(date: UInt16, time: UInt16) -> Int64 {
        var parts = tm()
        parts.tm_year = Int32(date >> 9) + 80
        parts.tm_mon = Int32(date >> 5 & 0xF) - 1
        parts.tm_mday = Int32(date & 0x1F)
        parts.tm_hour = Int32(time >> 11)
        parts.tm_min = Int32(time >> 5 & 0x3F)
        parts.tm_sec = Int32(time & 0x1F) * 2
        parts.tm_isdst = -1
        return Int64(mktime(&parts))
    }

    /// The DOS (date, time) of `seconds` since 1970 in local time, clamped to 1980...2107.
    static func encode(_ seconds: Int64) -> (date: UInt16, time: UInt16) {
        var value = time_t(seconds)
        var parts = tm()
        localtime_r(&value, &parts)
        let year = min(max(Int(parts.tm_year) - 80, 0), 127)
        if Int(parts.tm_year) < 80 { return (date: 0x21, time: 0) }
        let date = UInt16(year << 9 | Int(parts.tm_mon + 1) << 5 | Int(parts.tm_mday))
        let time = UInt16(Int(parts.tm_hour) << 11 | Int(parts.tm_min) << 5 | Int(parts.tm_sec) / 2)
        return (date, time)
    }
}
