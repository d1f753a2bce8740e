import Reconciler
import Synchronization
import Testing

/// The terminal's progress block: one line per running app, redrawn in place, log events written above it.
@Suite("ProgressBoard")
struct ProgressBoardTests {
    final class Screen: Sendable {
        private let written = Mutex<[String]>([])
        func write(_ text: String) { written.withLock { $0.append(text) } }
        var writes: [String] { written.withLock { $0 } }
    }

    @Test func eachAppHasItsLineAndEventsGoAboveTheBlock() {
        let screen = Screen()
        let board = ProgressBoard(write: { screen.write($0) })
        board.update("a", "a: 10 %")
        board.update("b", "b: 1 page")
        board.update("a", "a: 20 %")
        board.print("time=t level=info app=b msg=x\n")
        board.remove("a")
        board.print("time=t level=info msg=y\n")
        #expect(
            screen.writes == [
                // Nothing drawn yet: erase the current line, draw one line.
                "\r\u{1B}[Ja: 10 %",
                // One line drawn: erase it, draw both (the cursor stays on the last).
                "\r\u{1B}[Ja: 10 %\nb: 1 page",
                // Two lines drawn: up one, erase both, draw both, a's line updated in its place.
                "\r\u{1B}[1A\u{1B}[Ja: 20 %\nb: 1 page",
                // An event: the block erased, the event on its own line, the block again below it.
                "\r\u{1B}[1A\u{1B}[Jtime=t level=info app=b msg=x\na: 20 %\nb: 1 page",
                "\r\u{1B}[1A\u{1B}[Jb: 1 page",
                "\r\u{1B}[Jtime=t level=info msg=y\nb: 1 page",
            ])
    }
}
