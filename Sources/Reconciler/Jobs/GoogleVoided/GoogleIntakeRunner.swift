import Foundation
import Ledger
import Logging
import PlayDeveloperAPI
import Postgres
import RateLimiting

/// Does what the ``GoogleIntakeMachine`` decides for one window: its voided and Orders calls are child tasks of one
/// task group, each returning what it ended with; its pages and orders are stored on the job's connection
/// (`GoogleIntakeRunner+Ledger.swift`). What each action comes to goes back to the machine as an event, and a stop
/// request, polled between events, too. The runner decides nothing.
struct GoogleIntakeRunner {
    let sync: GoogleVoidedSync
    let window: GoogleVoidedSync.Window
    let environment: JobEnvironment
    let logger: Logger
    /// Raised by the first error to end the voided calls still waiting (at the quota gate) or travelling. A task
    /// group cancels all its children or none, and the Orders calls beside the voided ones must go on (their
    /// answers are stored), so each voided call races this signal in a small group of its own (see launch(_:prepare:)).
    let halt = ShutdownSignal()

    init(sync: GoogleVoidedSync, window: GoogleVoidedSync.Window, environment: JobEnvironment) {
        self.sync = sync
        self.window = window
        self.environment = environment
        var logger = environment.logger
        logger[metadataKey: "job"] = "\(window.job)"
        self.logger = logger
    }

    /// What performing an action comes to: nothing more, an event for the machine, or a call to start.
    enum Step {
        case done
        case event(GoogleIntakeMachine.Event)
        case call(@Sendable () async -> GoogleVoidedSync.CallEnded)
    }

    /// Pages the window and prices what it stores, until every call launched is answered and stored; returns the
    /// machine as it ended (its summary, its Orders queue for the backlog after it).
    /// - Throws: the first error of the window, or ``ReconcilerError`` (`.temporary`) when a stop left it unfinished.
    func run(_ start: GoogleIntakeMachine) async throws -> GoogleIntakeMachine {
        // A stop requested before the first call ends the run at once.
        try environment.checkShutdown()
        var machine = start
        try await withThrowingTaskGroup(of: GoogleVoidedSync.CallEnded.self) { group in
            func feed(_ event: GoogleIntakeMachine.Event) -> [GoogleIntakeMachine.Action] {
                // The signal is polled, as between pages elsewhere: the calls waiting at the gate end by themselves.
                if environment.shutdown.isRequested { _ = machine.handle(.stopRequested) }
                return machine.handle(event)
            }
            var actions = machine.start()[...]
            while true {
                while let action = actions.popFirst() {
                    switch try perform(action, machine: machine) {
                    case .done: break
                    case .event(let event): actions += feed(event)
                    case .call(let work): group.addTask(operation: work)
                    }
                }
                guard machine.isRunning, let finished = try await group.next() else { break }
                actions += feed(event(finished, machine: machine))
            }
        }
        try finish(machine)
        return machine
    }

    /// A child task's answer as the machine's event, noted in the log and the counters.
    private func event(_ finished: GoogleVoidedSync.CallEnded, machine: GoogleIntakeMachine)
        -> GoogleIntakeMachine.Event
    {
        switch finished {
        case .page(let answer):
            if case .success(let page) = answer.result { note(page, answer, machine: machine) }
            return .pageAnswered(answer, at: environment.now())
        case .orders(let answer):
            environment.counters.add("orders_calls")
            return .ordersAnswered(answer)
        case .ahead(let answer):
            note(answer)
            return .ordersAnsweredAhead(answer)
        }
    }

    /// Does one action.
    private func perform(_ action: GoogleIntakeMachine.Action, machine: GoogleIntakeMachine) throws -> Step {
        switch action {
        case .launchPage(let call, let prepare):
            return .call(launch(call, prepare: prepare))
        case .lookUpKnownOrders(let lookup):
            return .event(.knownOrdersFound(lookup, known: try known(lookup.ids)))
        case .askOrdersAhead(let call):
            return .call(askAhead(call))
        case .askOrders(let ids):
            let (amounts, purpose) = (sync.orderAmounts, window.purpose)
            return .call { .orders(await amounts.call(ids, purpose: purpose)) }
        case .storePage(let store):
            return .event(.pageStored(store, try self.store(store)))
        case .countNew(let rows):
            return .event(.newCounted(try countNew(rows)))
        case .storeOrders(let answer):
            return .event(.ordersStored(answer, try sync.orderAmounts.apply(answer, in: environment)))
        case .restart(let slice, let gap):
            try restart(slice, gap: gap)
        case .split(let kept, let added, let pagesLeft, let allPagesLeft):
            try split(kept, added, pagesLeft: pagesLeft, allPagesLeft: allPagesLeft, inFlight: machine.paging.inFlight)
        case .closeWindow(let checkpoint):
            try close(checkpoint)
        case .cancelPageCalls:
            halt.request()
        case .progress(let fraction):
            sync.showProgress(
                machine.summary, fraction: fraction, job: window.job, elapsed: window.started.duration(to: .now),
                purpose: window.purpose, in: environment)
        }
        return .done
    }

    /// The voided call, a child task of the paging's group.
    private func launch(_ call: GoogleVoidedSync.PagerStateMachine.Call, prepare: Bool)
        -> @Sendable () async -> GoogleVoidedSync.CallEnded
    {
        let (sync, halt, purpose, now, runId) = (sync, halt, window.purpose, environment.now, environment.runId)
        return {
            // The first error raises `halt`: the call is then cancelled wherever it waits. An answer that comes
            // anyway is still returned (and stored); the halt waiter ends when the call does.
            await withTaskGroup(of: GoogleVoidedSync.Answer?.self) { race in
                race.addTask {
                    await Self.call(call, sync: sync, purpose: purpose, runId: runId, prepare: prepare, now: now)
                }
                race.addTask {
                    await halt.stopped()
                    return nil
                }
                var answer = GoogleVoidedSync.Answer(
                    slice: call.slice, result: .failure(CancellationError()), seconds: 0)
                for await next in race {
                    race.cancelAll()
                    if let next { answer = next }
                }
                return .page(answer)
            }
        }
    }

    /// After the last event: the first error, or a window left unfinished by a stop, or the slices' summary.
    private func finish(_ machine: GoogleIntakeMachine) throws {
        switch machine.finish().outcome {
        case .failed(let error):
            throw error
        case .unfinished:
            try environment.checkShutdown()
            throw ReconcilerError(.temporary, "the window was left unfinished; run again to continue")
        case .drained(let slices, let typicalMillis):
            guard slices > 1 else { return }
            logger.info("\(slices) slices, typical call \(typicalMillis.map { "\($0) ms" } ?? "unmeasured")")
        }
    }
}
