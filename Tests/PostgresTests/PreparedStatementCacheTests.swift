import Testing

@testable import Postgres

@Suite("PreparedStatementCache (no server)")
struct PreparedStatementCacheTests {
    @Test func aTextIsPreparedOnItsSecondUseThenRunByName() {
        var cache = PreparedStatementCache()
        #expect(cache.step(for: "SELECT $1") == .unnamed)
        #expect(cache.step(for: "SELECT $1") == .prepare("storerecon_1"))
        cache.prepared("SELECT $1", name: "storerecon_1")
        #expect(cache.step(for: "SELECT $1") == .execute("storerecon_1"))
        #expect(cache.step(for: "SELECT $1") == .execute("storerecon_1"))
        #expect(cache.count == 1)
    }

    @Test func aPrepareThatFailedIsTriedAgainUnderANewName() {
        var cache = PreparedStatementCache()
        _ = cache.step(for: "SELEC 1")
        #expect(cache.step(for: "SELEC 1") == .prepare("storerecon_1"))
        #expect(cache.step(for: "SELEC 1") == .prepare("storerecon_2"))
        #expect(cache.count == 0)
        #expect(cache.unneeded.isEmpty)
    }

    @Test func theLeastRecentlyUsedTextGoesWhenFull() {
        var cache = PreparedStatementCache(capacity: 2)
        for sql in ["A", "B"] {
            _ = cache.step(for: sql)
            guard case .prepare(let name) = cache.step(for: sql) else { Issue.record("not prepared"); return }
            cache.prepared(sql, name: name)
        }
        #expect(cache.step(for: "A") == .execute("storerecon_1"))  // B is now the least recently used
        _ = cache.step(for: "C")
        #expect(cache.step(for: "C") == .prepare("storerecon_3"))
        cache.prepared("C", name: "storerecon_3")
        #expect(cache.count == 2)
        #expect(cache.name(of: "B") == nil)
        #expect(cache.name(of: "A") == "storerecon_1")
        #expect(cache.takeUnneeded() == ["storerecon_2"])
        #expect(cache.unneeded.isEmpty)
    }

    @Test func forgettingATextHandsItsNameToDeallocateAndRemoveAllForgetsEverything() {
        var cache = PreparedStatementCache()
        cache.prepared("A", name: "storerecon_7")
        cache.prepared("B", name: "storerecon_8")
        cache.forget("A")
        #expect(cache.unneeded == ["storerecon_7"])
        #expect(cache.name(of: "A") == nil)
        #expect(cache.step(for: "B") == .execute("storerecon_8"))
        cache.removeAll()
        #expect(cache.count == 0)
        #expect(cache.unneeded.isEmpty)
    }

    @Test(arguments: [
        "COPY t FROM STDIN", "  discard all", "DEALLOCATE storerecon_1", "PREPARE p AS SELECT 1", "EXECUTE p",
        "-- why\n  Copy t TO STDOUT",
    ])
    func sessionCommandsAndCopyAreNeverPrepared(_ sql: String) {
        var cache = PreparedStatementCache()
        #expect(cache.step(for: sql) == .unnamed)
        #expect(cache.step(for: sql) == .unnamed)
        #expect(cache.step(for: sql) == .unnamed)
    }

    @Test func onlyDiscardAllAndDeallocateAllDropTheSessionsStatements() {
        #expect(PreparedStatementCache.dropsPreparedStatements("DISCARD ALL"))
        #expect(PreparedStatementCache.dropsPreparedStatements("  deallocate all;"))
        #expect(PreparedStatementCache.dropsPreparedStatements("DEALLOCATE PREPARE ALL"))
        #expect(!PreparedStatementCache.dropsPreparedStatements("DISCARD PLANS"))
        #expect(!PreparedStatementCache.dropsPreparedStatements("DEALLOCATE storerecon_1"))
        #expect(!PreparedStatementCache.dropsPreparedStatements("SELECT 'DISCARD ALL'"))
    }

    @Test func aScriptDropsThemOnlyWithDiscardAllOrADeallocate() {
        #expect(PreparedStatementCache.scriptMayDropPreparedStatements("SET a = 1; discard  all;"))
        #expect(PreparedStatementCache.scriptMayDropPreparedStatements("SELECT 1; DEALLOCATE storerecon_1"))
        #expect(!PreparedStatementCache.scriptMayDropPreparedStatements("RESET ALL; DISCARD TEMP"))
        #expect(!PreparedStatementCache.scriptMayDropPreparedStatements("CLOSE ALL; DISCARD PLANS"))
    }
}
