import Foundation

extension GoogleVoidedSync {
    /// One slice cut in parts: the slice keeps the first (`kept`), each of `added` is paged by a chain of its own.
    struct Cut: Equatable {
        var slice: Int
        var kept: VoidedSlice
        var added: [VoidedSlice]
        /// The cut slice's pages left, and all slices', before the cut (for the log).
        var pagesLeft: Double
        var allPagesLeft: Double
    }

    /// What the paging knows when a page of the slice at `index` is stored, for the split rule.
    struct SplitContext {
        var app: String
        var traveling: Int
        var startCount: Int
        var splits: Int
        var stored: Int
        var burst: Int?
    }

    /// The cuts to make once the page of the slice at `index` is stored, in order, each judged on the slices as the
    /// cuts before it left them (see ``splitParts(_:live:traveling:startCount:splits:stored:burst:)``): the slice
    /// itself, then, near the last quota window (``isNearEnd(_:live:burst:)``), the slice with the most pages
    /// left, as long as it is cut. A chain that waited at the quota gate through a whole window has no
    /// page of its own to be judged on when the last window nears (measured: a chain with three pages left in the
    /// last window, its last page stored 50 s before), so every stored page judges the longest chain too. A slice
    /// is judged only when no page of it is held or being stored (its row is the one the cut changes), and only
    /// once a page of it is stored (the cut starts after its last row).
    static func plannedCuts(_ states: [SliceState], after index: Int, _ context: SplitContext) -> [Cut] {
        var (states, context, cuts) = (states, context, [Cut]())
        var next: Int? = index
        while let slice = next {
            if let cut = plannedCut(states, slice, context, endOnly: slice != index) {
                cuts.append(cut)
                context.splits += cut.added.count
                states[slice].slice = cut.kept
                for part in cut.added {
                    states.append(SliceState(part, app: context.app, expectNew: true, density: states[slice].density))
                }
            } else if slice != index {
                break
            }
            next = longest(states, except: index)
        }
        return cuts
    }

    /// The slice at `index` cut, when the rule says so; `endOnly` judges it only near the last window.
    private static func plannedCut(_ states: [SliceState], _ index: Int, _ context: SplitContext, endOnly: Bool)
        -> Cut?
    {
        let state = states[index]
        guard state.held.isEmpty, !state.storing else { return nil }
        let left = states.map(\.pagesLeft)
        let live = left.filter { $0 > 0 }
        if endOnly {
            guard let burst = context.burst, let end = lastWindow(live, stored: context.stored, burst: burst),
                isNearEnd(end.before, live: live, burst: burst)
            else { return nil }
        }
        let parts = splitParts(
            left[index], live: live, traveling: context.traveling, startCount: context.startCount,
            splits: context.splits, stored: context.stored, burst: context.burst)
        let number = (states.map(\.slice.number).max() ?? 0) + 1
        guard let (kept, added) = cut(state.slice, lastSeen: state.lastSeen, into: parts, number: number) else {
            return nil
        }
        return Cut(slice: index, kept: kept, added: added, pagesLeft: left[index], allPagesLeft: left.reduce(0, +))
    }

    /// The slice other than `except` with the most pages left, of those that may be cut now.
    private static func longest(_ states: [SliceState], except: Int) -> Int? {
        states.indices.filter { index in
            let state = states[index]
            return index != except && !state.slice.drained && state.slice.token != nil && state.lastSeen != nil
                && state.held.isEmpty && !state.storing
        }.max { states[$0].pagesLeft < states[$1].pagesLeft }
    }
}
