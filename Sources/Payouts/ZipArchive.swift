import Foundation

/// Reads a zip archive that holds one file, as Google's earnings reports do (PKWARE APPNOTE: end of central
/// directory, central directory, local header; stored or deflated entries).
struct ZipArchive {
    /// The one file inside.
    struct Entry {
        /// The name inside the archive (`PlayApps_202610.csv`).
        var name: String
        /// The file's bytes.
        var data: Data
    }

    /// Extracts the archive's only file.
    /// - Parameter file: the archive's name, for errors.
    /// - Throws: ``PayoutError`` (`.badFile`) when the archive is truncated, damaged, encrypted, uses an
    ///   unsupported method, or does not hold exactly one file.
    static func singleEntry(of archive: Data, file: String) throws -> Entry {
        let bytes = [UInt8](archive)
        func fail(_ problem: String) -> PayoutError { PayoutError(.badFile, problem, file: file) }
        guard bytes.count >= 22, bytes[0] == 0x50, bytes[1] == 0x4B else {
            throw fail("not a zip archive (no PK signature)")
        }
        guard let end = endOfCentralDirectory(bytes) else {
            throw fail("no end of central directory record: the zip is truncated or damaged")
        }
        let entryCount = Int(le16(bytes, end + 10))
        var cursor = Int(le32(bytes, end + 16))
        var files: [(name: String, method: UInt16, flags: UInt16, crc: UInt32, size: Int, usize: Int, local: Int)] =
            []
        for _ in 0..<entryCount {
            guard cursor + 46 <= bytes.count, le32(bytes, cursor) == 0x0201_4B50 else {
                throw fail("the central directory is damaged")
            }
            let nameLength = Int(le16(bytes, cursor + 28))
            let extraLength = Int(le16(bytes, cursor + 30))
            let commentLength = Int(le16(bytes, cursor + 32))
            guard cursor + 46 + nameLength <= bytes.count else { throw fail("the central directory is damaged") }
            let name = String(decoding: bytes[(cursor + 46)..<(cursor + 46 + nameLength)], as: UTF8.self)
            if !name.hasSuffix("/") {
                files.append(
                    (
                        name, le16(bytes, cursor + 10), le16(bytes, cursor + 8), le32(bytes, cursor + 16),
                        Int(le32(bytes, cursor + 20)), Int(le32(bytes, cursor + 24)), Int(le32(bytes, cursor + 42))
                    ))
            }
            cursor += 46 + nameLength + extraLength + commentLength
        }
        guard files.count == 1, let entry = files.first else {
            throw fail("expected one file in the zip, found \(files.count)")
        }
        guard entry.flags & 1 == 0 else { throw fail("\(entry.name) is encrypted") }
        let local = entry.local
        guard local + 30 <= bytes.count, le32(bytes, local) == 0x0403_4B50 else {
            throw fail("the local header of \(entry.name) is damaged")
        }
        let start = local + 30 + Int(le16(bytes, local + 26)) + Int(le16(bytes, local + 28))
        guard start + entry.size <= bytes.count else { throw fail("\(entry.name) is truncated") }
        let compressed = archive.subdata(
            in: (archive.startIndex + start)..<(archive.startIndex + start + entry.size))
        let data: Data
        switch entry.method {
        case 0: data = compressed
        case 8:
            data = try Inflater.inflate(
                compressed, format: .raw, expectedSize: entry.usize, file: "\(file) (\(entry.name))")
        default: throw fail("\(entry.name) uses compression method \(entry.method); only stored and deflate are read")
        }
        guard data.count == entry.usize, Inflater.crc32(data) == entry.crc else {
            throw fail("\(entry.name) does not match its recorded size and CRC-32 (damaged or truncated)")
        }
        return Entry(name: entry.name, data: data)
    }

    /// The offset of the end-of-central-directory record: searched backwards over the longest possible comment.
    private static func endOfCentralDirectory(_ bytes: [UInt8]) -> Int? {
        let lowest = max(0, bytes.count - 22 - 65_535)
        var position = bytes.count - 22
        while position >= lowest {
            if le32(bytes, position) == 0x0605_4B50 { return position }
            position -= 1
        }
        return nil
    }

    private static func le16(_ bytes: [UInt8], _ at: Int) -> UInt16 {
        UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8
    }

    private static func le32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
    }
}
