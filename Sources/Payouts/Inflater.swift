import CZlib
import Foundation

/// Decompresses deflate data with zlib: raw deflate (inside a zip) or a gzip stream.
enum Inflater {
    /// The container around the deflate stream.
    enum Format {
        /// Raw deflate, as a zip entry holds it.
        case raw
        /// A gzip member (RFC 1952).
        case gzip

        var windowBits: Int32 { self == .raw ? -15 : 15 + 16 }
    }

    /// Inflates `input` whole.
    /// - Parameter expectedSize: a size hint for the output (a zip's uncompressed size), or `nil`.
    /// - Throws: ``PayoutError`` (`.badFile`) naming `file` when the stream is damaged or ends early.
    static func inflate(_ input: Data, format: Format, expectedSize: Int? = nil, file: String) throws -> Data {
        var stream = z_stream()
        guard inflateInit2_(&stream, format.windowBits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else {
            throw PayoutError(.badFile, "zlib could not start", file: file)
        }
        defer { inflateEnd(&stream) }
        var output = Data()
        output.reserveCapacity(expectedSize ?? input.count * 4)
        let chunkSize = 1 << 20
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        var status: Int32 = Z_OK
        input.withUnsafeBytes { (source: UnsafeRawBufferPointer) in
            stream.next_in = UnsafeMutablePointer(
                mutating: source.bindMemory(to: Bytef.self).baseAddress ?? UnsafePointer(bitPattern: 1)!)
            stream.avail_in = uInt(source.count)
            repeat {
                let produced = chunk.withUnsafeMutableBufferPointer { buffer -> Int in
                    stream.next_out = buffer.baseAddress
                    stream.avail_out = uInt(chunkSize)
                    status = CZlib.inflate(&stream, Z_NO_FLUSH)
                    return chunkSize - Int(stream.avail_out)
                }
                output.append(contentsOf: chunk[0..<produced])
                if status == Z_BUF_ERROR && stream.avail_in == 0 { break }
            } while status == Z_OK
        }
        switch status {
        case Z_STREAM_END:
            return output
        case Z_OK, Z_BUF_ERROR:
            throw PayoutError(.badFile, "the compressed data ends early (truncated file)", file: file)
        default:
            let reason = stream.msg.map { String(cString: $0) } ?? "error \(status)"
            throw PayoutError(.badFile, "the compressed data is damaged (\(reason))", file: file)
        }
    }

    /// The CRC-32 of `data`, as zip and gzip record it.
    static func crc32(_ data: Data) -> UInt32 {
        data.withUnsafeBytes { bytes in
            UInt32(
                CZlib.crc32(0, bytes.bindMemory(to: Bytef.self).baseAddress, uInt(bytes.count)))
        }
    }
}
