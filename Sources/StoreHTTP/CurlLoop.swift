import CCurl
import Foundation

/// The thread that runs a ``CurlTransport``'s transfers on one libcurl multi handle (one connection cache, all
/// calls in flight at once). Callers hand transfers and cancellations over under a lock and wake the thread; every
/// libcurl call on the handles is made on this thread.
final class CurlLoop: @unchecked Sendable {
    private static let initialized: Bool = storerecon_curl_global_init() == CURLE_OK

    private let lock = NSLock()
    private var submitted: [CurlTransfer] = []
    private var cancelled: [CurlTransfer] = []
    private var stopping = false
    private let multi: UnsafeMutableRawPointer
    /// The transfers on the multi handle, by easy handle (loop thread only).
    private var running: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    /// Easy handles of ended transfers, reset for the next ones (loop thread only): making and freeing one per call
    /// cost more than the rest of its setup.
    private var idle: [UnsafeMutableRawPointer] = []
    /// Idle handles kept at most; more are freed.
    private static let mostIdle = 256
    /// Open connections kept at most, idle or busy: past it, libcurl closes the oldest idle one. Its default (four
    /// per transfer on the handle when one ends) closed, as a burst drained, the connections the next burst opened
    /// again: 1,000-1,200 connections for 9,400 calls in the refund-requests bench, 300 (its most calls in flight at
    /// once) with this bound.
    private static let mostConnections = 512

    init() {
        precondition(Self.initialized, "libcurl could not be initialised")
        multi = curl_multi_init()
        storerecon_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, Self.mostConnections)
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "storerecon-curl"
        thread.start()
    }

    func submit(_ transfer: CurlTransfer) {
        lock.withLock { submitted.append(transfer) }
        curl_multi_wakeup(multi)
    }

    /// Ends a transfer with `CancellationError`, whether it has started or not.
    func cancel(_ transfer: CurlTransfer) {
        lock.withLock {
            transfer.cancelRequested = true
            cancelled.append(transfer)
        }
        curl_multi_wakeup(multi)
    }

    /// Stops the thread; transfers still running end with `CancellationError`.
    func shutdown() {
        lock.withLock { stopping = true }
        curl_multi_wakeup(multi)
    }

    private func run() {
        while true {
            // `cancelRequested` is written under the lock by the cancelling task, so it is read under it too.
            let (new, gone, stop) = lock.withLock {
                defer {
                    submitted = []
                    cancelled = []
                }
                return (submitted.map { ($0, $0.cancelRequested) }, cancelled, stopping)
            }
            for (transfer, cancelRequested) in new {
                if cancelRequested || stop {
                    transfer.finish(.failure(CancellationError()))
                } else {
                    begin(transfer)
                }
            }
            for transfer in gone { end(transfer, with: .failure(CancellationError())) }
            if stop { break }
            var active: Int32 = 0
            curl_multi_perform(multi, &active)
            collectFinished()
            var ready: Int32 = 0
            curl_multi_poll(multi, nil, 0, 1000, &ready)
        }
        for transfer in Array(running.values) { end(transfer, with: .failure(CancellationError())) }
        for handle in idle { curl_easy_cleanup(handle) }
        idle = []
        curl_multi_cleanup(multi)
    }

    private func begin(_ transfer: CurlTransfer) {
        if let notAfter = transfer.request.notAfter, ContinuousClock.now > notAfter {
            let late = notAfter.duration(to: .now)
            transfer.finish(
                .failure(
                    TransportError(
                        code: .pastDeadline, request: transfer.label, message: "not sent: \(late) past its deadline")))
            return
        }
        if let leaveBy = transfer.request.leaveBy, ContinuousClock.now > leaveBy {
            let late = leaveBy.duration(to: .now)
            transfer.finish(
                .failure(
                    TransportError(code: .late, request: transfer.label, message: "not sent: \(late) past its time")))
            return
        }
        guard let handle = idle.popLast() ?? curl_easy_init() else {
            transfer.finish(
                .failure(TransportError(code: .connection, request: transfer.label, message: "curl_easy_init failed")))
            return
        }
        transfer.handle = handle
        running[handle] = transfer
        if let failure = CurlRequestSetup.configure(handle, for: transfer) {
            end(transfer, with: .failure(failure))
            return
        }
        curl_multi_add_handle(multi, handle)
    }

    private func collectFinished() {
        var queued: Int32 = 0
        while let message = curl_multi_info_read(multi, &queued) {
            guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle,
                let transfer = running[handle]
            else { continue }
            end(transfer, with: CurlRequestSetup.outcome(message.pointee.data.result, handle: handle, of: transfer))
        }
    }

    /// Takes the transfer off the multi handle, frees what libcurl held for it, and answers the caller.
    private func end(_ transfer: CurlTransfer, with result: Result<HTTPResponse, any Error>) {
        guard let handle = transfer.handle, running.removeValue(forKey: handle) != nil else { return }
        curl_multi_remove_handle(multi, handle)
        if idle.count < Self.mostIdle {
            // Every option back to its default (the header list and body copy let go); the connection stays in
            // the multi handle's cache either way.
            curl_easy_reset(handle)
            idle.append(handle)
        } else {
            curl_easy_cleanup(handle)
        }
        curl_slist_free_all(transfer.headerList)
        transfer.handle = nil
        transfer.headerList = nil
        transfer.finish(result)
    }
}
