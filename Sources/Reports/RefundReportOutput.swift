import Foundation

/// Where a report is written as it is produced: standard output, a file replaced atomically when the report is
/// complete, or memory (tests). Text is buffered and written in blocks, so memory stays flat however long the report.
public final class RefundReportOutput {
    private enum Target {
        case memory
        case handle(FileHandle)
        case file(FileHandle, temporary: String, final: String)
    }

    private var target: Target
    private var buffer: [UInt8] = []
    private var collected: [UInt8] = []
    private static let blockSize = 1 << 16

    private init(_ target: Target) {
        self.target = target
        buffer.reserveCapacity(Self.blockSize)
    }

    /// Collects the report in memory (read it with ``text``).
    public static func memory() -> RefundReportOutput { RefundReportOutput(.memory) }

    /// Writes to standard output as the report is produced.
    public static func standardOutput() -> RefundReportOutput { RefundReportOutput(.handle(.standardOutput)) }

    /// Writes to a temporary file beside `path`, renamed to `path` by ``finish()``: readers never see half a report.
    /// - Throws: `ReportError` (failed) naming the path and the system's reason.
    public static func file(atomicallyAt path: String) throws -> RefundReportOutput {
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(getpid()).tmp").path
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else { throw Self.failure(path, errno) }
        return RefundReportOutput(
            .file(FileHandle(fileDescriptor: descriptor, closeOnDealloc: true), temporary: temporary, final: path))
    }

    /// The text written so far (memory output only).
    public var text: String { String(decoding: collected + buffer, as: UTF8.self) }

    /// Appends `text`, writing a block out when the buffer is full.
    /// - Throws: `ReportError` (failed) when the block cannot be written.
    public func write(_ text: String) throws {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= Self.blockSize { try flush() }
    }

    /// Writes what is buffered and, for a file, moves it into place.
    /// - Throws: `ReportError` (failed) naming the path and the system's reason.
    public func finish() throws {
        try flush()
        guard case .file(let handle, let temporary, let final) = target else { return }
        do {
            // A write error the file system reports late (a full disk, NFS quota) comes here: a short report never
            // replaces the last one.
            try handle.synchronize()
            try handle.close()
        } catch {
            unlink(temporary)
            target = .memory
            throw Self.failure(final, Self.errnoCode(error))
        }
        guard rename(temporary, final) == 0 else {
            let code = errno
            unlink(temporary)
            throw Self.failure(final, code)
        }
        target = .memory
    }

    /// Drops a file output that will not be finished (its temporary file is removed).
    public func discard() {
        guard case .file(let handle, let temporary, _) = target else { return }
        try? handle.close()
        unlink(temporary)
        target = .memory
        buffer.removeAll()
    }

    private func flush() throws {
        guard !buffer.isEmpty else { return }
        switch target {
        case .memory:
            collected.append(contentsOf: buffer)
        case .handle(let handle), .file(let handle, _, _):
            do {
                try handle.write(contentsOf: buffer)
            } catch {
                let path: String
                if case .file(_, _, let final) = target { path = final } else { path = "standard output" }
                throw Self.failure(path, Self.errnoCode(error))
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }

    private static func errnoCode(_ error: any Error) -> Int32 {
        var current = error as NSError
        while let underlying = current.userInfo[NSUnderlyingErrorKey] as? NSError { current = underlying }
        return current.domain == NSPOSIXErrorDomain ? Int32(current.code) : EIO
    }

    private static func failure(_ path: String, _ code: Int32) -> ReportError {
        let reason = String(cString: strerror(code)).lowercased()
        let name = path == "standard output" ? path : "--output \(path)"
        return ReportError("\(name): cannot write the report (\(reason))", code: .failed)
    }
}
