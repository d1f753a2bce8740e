/// Which apps' jobs start when, when one job runs for many apps side by side (``JobRunner/runSideBySide(job:apps:concurrency:paced:gates:record:_:)``).
///
/// Apps whose work waits on a per-second store quota (paced) start first and take every slot they need: each of
/// them needs the whole run to spend its quota windows, so none may start late. The others, bounded only by the
/// cores, fill the gaps: while any paced app runs, at most ``unpacedWhilePaced`` of them run at once, so that they
/// do not take the cores from the paced ones' first pages and answers; then they take every free slot.
struct SideBySideSchedule {
    /// Jobs running at once at most.
    let limit: Int
    /// Unpaced jobs running at once at most while a paced one runs.
    let unpacedWhilePaced: Int
    private let isPaced: [Bool]
    private var waitingPaced: [Int]
    private var waitingUnpaced: [Int]
    private var runningPaced = 0
    private var runningUnpaced = 0

    /// A schedule for apps in this order; `paced[i]` says whether app `i` is paced.
    init(paced: [Bool], limit: Int, unpacedWhilePaced: Int) {
        isPaced = paced
        self.limit = max(1, limit)
        self.unpacedWhilePaced = max(1, unpacedWhilePaced)
        waitingPaced = paced.indices.filter { paced[$0] }
        waitingUnpaced = paced.indices.filter { !paced[$0] }
    }

    /// The apps (their indices) to start now, in order.
    mutating func start() -> [Int] {
        var started: [Int] = []
        while runningPaced + runningUnpaced < limit {
            if !waitingPaced.isEmpty {
                started.append(waitingPaced.removeFirst())
                runningPaced += 1
                continue
            }
            guard !waitingUnpaced.isEmpty, runningPaced == 0 || runningUnpaced < unpacedWhilePaced else { break }
            started.append(waitingUnpaced.removeFirst())
            runningUnpaced += 1
        }
        return started
    }

    /// The job of app `index` ended.
    mutating func ended(_ index: Int) {
        if isPaced[index] { runningPaced -= 1 } else { runningUnpaced -= 1 }
    }
}
