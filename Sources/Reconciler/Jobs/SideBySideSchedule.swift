/// Which apps' jobs start when, when one job runs for many apps side by side (``JobRunner/runSideBySide(job:apps:concurrency:paced:gates:record:_:)``).
///
/// Apps whose work waits on a per-second store quota (paced) start first and take every slot they need: each of
/// them needs the whole run to spend its quota windows, so none may start late, and the first calls of each must
/// leave early, since every later window is counted from them. The others, bounded only by the cores, fill the gaps,
/// in three steps:
/// - while a running paced app is still *cold* (it has not yet reported its first answers sent through
///   ``JobEnvironment/answersSent(_:)``, nor ended), at most ``unpacedWhileWarming`` of them run, so that the paced
///   apps' first pages and answers have the cores to themselves;
/// - once every running paced app is *warm*, its calls wait on its quota windows and leave cores idle between
///   them: up to ``unpacedWhilePaced`` unpaced apps run (more than one per core, so that one waiting on its own
///   round trips does not leave a core idle);
/// - with no paced app running, they take every free slot.
///
/// Never more than ``limit`` jobs in all (each holds a database connection).
struct SideBySideSchedule {
    /// Jobs running at once at most.
    let limit: Int
    /// Unpaced jobs running at once at most while a running paced one is still cold.
    let unpacedWhileWarming: Int
    /// Unpaced jobs running at once at most while paced ones run, all of them warm.
    let unpacedWhilePaced: Int
    private let isPaced: [Bool]
    private var waitingPaced: [Int]
    private var waitingUnpaced: [Int]
    /// Running paced apps not yet warm.
    private var cold: Set<Int> = []
    private var runningPaced = 0
    private var runningUnpaced = 0

    /// A schedule for apps in this order; `paced[i]` says whether app `i` is paced.
    init(paced: [Bool], limit: Int, unpacedWhileWarming: Int, unpacedWhilePaced: Int) {
        isPaced = paced
        self.limit = max(1, limit)
        self.unpacedWhileWarming = max(0, unpacedWhileWarming)
        self.unpacedWhilePaced = max(1, unpacedWhilePaced)
        waitingPaced = paced.indices.filter { paced[$0] }
        waitingUnpaced = paced.indices.filter { !paced[$0] }
    }

    /// How many unpaced jobs may run now (asked only when no paced app waits).
    private var unpacedBound: Int {
        if runningPaced == 0 { return limit }
        return cold.isEmpty ? unpacedWhilePaced : unpacedWhileWarming
    }

    /// The apps (their indices) to start now, in order.
    mutating func start() -> [Int] {
        var started: [Int] = []
        while runningPaced + runningUnpaced < limit {
            if !waitingPaced.isEmpty {
                let index = waitingPaced.removeFirst()
                started.append(index)
                cold.insert(index)
                runningPaced += 1
                continue
            }
            guard !waitingUnpaced.isEmpty, runningUnpaced < unpacedBound else { break }
            started.append(waitingUnpaced.removeFirst())
            runningUnpaced += 1
        }
        return started
    }

    /// The job of app `index` reported its first answers sent (nothing for an unpaced app, or one already warm).
    mutating func warm(_ index: Int) {
        cold.remove(index)
    }

    /// The job of app `index` ended.
    mutating func ended(_ index: Int) {
        cold.remove(index)
        if isPaced[index] { runningPaced -= 1 } else { runningUnpaced -= 1 }
    }
}

extension SideBySideSchedule {
    /// Answers a paced job reports sent (``JobEnvironment/answersSent(_:)``) before it is warm.
    static let warmAnswers = 32

    /// The schedule of a run on a machine with `cores` cores: no unpaced app while a paced one warms up, then
    /// ``unpacedPerCore`` per core.
    init(paced: [Bool], limit: Int, cores: Int) {
        self.init(
            paced: paced, limit: limit, unpacedWhileWarming: 0, unpacedWhilePaced: Self.unpacedPerCore * max(1, cores))
    }

    /// Unpaced jobs per core while warm paced ones run.
    static let unpacedPerCore = 2
}
