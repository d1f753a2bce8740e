/// The containers the stores ship financial reports in, written without compression (stored zip entries and stored
/// deflate blocks): a client must read them as any zip or gzip. The simulator shares no code with storerecon's
/// readers, so a reader bug cannot hide behind a matching writer bug.
enum ReportArchive {
    /// A zip (PKWARE APPNOTE) holding one stored file.
    static func zip(name: String, contents: [UInt8]) -> [UInt8] {
        let nameBytes = Array(name.utf8)
        let crc = crc32(contents)
        var local: [UInt8] = []
        le32(0x0403_4B50, &local)
        le16(20, &local)  // version needed
        le16(0, &local)  // flags
        le16(0, &local)  // stored
        le16(0, &local)  // time
        le16(0x21, &local)  // date: 1980-01-01
        le32(crc, &local)
        le32(UInt32(contents.count), &local)
        le32(UInt32(contents.count), &local)
        le16(UInt16(nameBytes.count), &local)
        le16(0, &local)
        local += nameBytes + contents
        var central: [UInt8] = []
        le32(0x0201_4B50, &central)
        le16(20, &central)  // made by
        le16(20, &central)
        le16(0, &central)
        le16(0, &central)
        le16(0, &central)
        le16(0x21, &central)
        le32(crc, &central)
        le32(UInt32(contents.count), &central)
        le32(UInt32(contents.count), &central)
        le16(UInt16(nameBytes.count), &central)
        le16(0, &central)  // extra
        le16(0, &central)  // comment
        le16(0, &central)  // disk
        le16(0, &central)  // internal attributes
        le32(0, &central)  // external attributes
        le32(0, &central)  // local header offset
        central += nameBytes
        var end: [UInt8] = []
        le32(0x0605_4B50, &end)
        le16(0, &end)
        le16(0, &end)
        le16(1, &end)
        le16(1, &end)
        le32(UInt32(central.count), &end)
        le32(UInt32(local.count), &end)
        le16(0, &end)
        return local + central + end
    }

    /// A gzip (RFC 1952) of `contents` in stored deflate blocks.
    static func gzip(_ contents: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 255]
        var offset = 0
        repeat {
            let length = min(65_535, contents.count - offset)
            let final = offset + length == contents.count
            out.append(final ? 1 : 0)
            le16(UInt16(length), &out)
            le16(~UInt16(length), &out)
            out += contents[offset..<(offset + length)]
            offset += length
        } while offset < contents.count
        le32(crc32(contents), &out)
        le32(UInt32(truncatingIfNeeded: contents.count), &out)
        return out
    }

    /// CRC-32 (IEEE 802.3, reflected), as zip and gzip record it.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    private static func le16(_ value: UInt16, _ out: inout [UInt8]) {
        out.append(UInt8(value & 0xFF))
        out.append(UInt8(value >> 8))
    }

    private static func le32(_ value: UInt32, _ out: inout [UInt8]) {
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8((value >> UInt32(shift)) & 0xFF)) }
    }
}
