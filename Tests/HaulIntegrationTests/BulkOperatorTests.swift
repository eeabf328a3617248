import Foundation
import HaulTestSupport
import Testing

/// Operator actions on many transfers at once: several ids, `--batch`, `--state`, `--host`,
/// confirmation; `list` filters; `host-limit unset`; `prune --dry-run` and `--state`.
@Suite("bulk operator actions")
struct BulkOperatorTests {
    /// A database with batch `nightly` (ids 1-4, host 127.0.0.1:9) and two loose transfers (5-6, host 127.0.0.2:9). No worker runs.
    static func seeded() throws -> TestDatabase {
        let database = try TestDatabase()
        let path = Harness.temporaryDirectory("bulk") + "/manifest.txt"
        try (1...4).map { "http://127.0.0.1:9/n\($0).bin" }.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try Run.haul(["enqueue", "--manifest", path, "--batch", "nightly"], database: database.url).status == 0)
        for name in ["a", "b"] {
            #expect(try Run.haul(["enqueue", "http://127.0.0.2:9/\(name)", "--dest", name], database: database.url).status == 0)
        }
        return database
    }

    static func states(_ database: TestDatabase) throws -> String {
        try database.scalar("SELECT string_agg(state, ',' ORDER BY id) FROM transfers")
    }

    @Test("several ids: each is acted on; refused and missing ones are reported and make the exit status 1")
    func severalIDs() throws {
        let database = try Self.seeded()
        let paused = try Run.haul(["pause", "1", "2"], database: database.url)
        #expect(paused.status == 0 && paused.stdout.contains("transfer 1: pause done") && paused.stdout.contains("transfer 2: pause done"), "\(paused.stdout)")
        let again = try Run.haul(["pause", "1", "3"], database: database.url)
        #expect(
            again.status == 0 && again.stdout.contains("transfer 1: already paused"), "pausing a paused transfer is a no-op: \(again.stdout) \(again.stderr)")
        let mixed = try Run.haul(["resume", "1", "5", "999"], database: database.url)
        #expect(mixed.status == 1, "\(mixed.stderr)")
        #expect(mixed.stdout.contains("transfer 1: resume done"), "the allowed one is done: \(mixed.stdout)")
        #expect(mixed.stderr.contains("transfer 5 is pending") && mixed.stderr.contains("no transfer 999"), "\(mixed.stderr)")
        #expect(try Self.states(database) == "pending,paused,paused,pending,pending,pending")
        let json = try Run.haul(["cancel", "5", "6", "--json"], database: database.url)
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect((object?["changed"] as? [Int]) == [5, 6], "\(json.stdout)")
    }

    @Test("a selector without a terminal refuses without --yes and changes nothing; with --yes it acts on what it may and counts the rest")
    func selectors() throws {
        let database = try Self.seeded()
        let refused = try Run.haul(["cancel", "--batch", "nightly"], database: database.url)
        #expect(refused.status == 2 && refused.stderr.contains("cancel 4 transfers") && refused.stderr.contains("--yes"), "\(refused.stderr)")
        #expect(try Self.states(database) == "pending,pending,pending,pending,pending,pending", "nothing changed")

        #expect(try Run.haul(["pause", "2", "6"], database: database.url).status == 0)
        let batch = try Run.haul(["pause", "--batch", "nightly", "--yes"], database: database.url)
        #expect(batch.status == 0 && batch.stdout.contains("3 transfers changed") && batch.stdout.contains("1 skipped"), "\(batch.stdout)")
        #expect(try Self.states(database) == "paused,paused,paused,paused,pending,paused", "only the batch")

        let byState = try Run.haul(["resume", "--state", "paused", "--host", "127.0.0.1:9", "-y"], database: database.url)
        #expect(byState.status == 0 && byState.stdout.contains("4 transfers changed"), "\(byState.stdout) \(byState.stderr)")
        #expect(try Self.states(database) == "pending,pending,pending,pending,pending,paused", "selectors combine: host 127.0.0.2 is untouched")

        let none = try Run.haul(["retry", "--state", "pending", "--yes"], database: database.url)
        #expect(none.status == 0 && none.stdout.contains("nothing to retry"), "\(none.stdout)")
        let both = try Run.haul(["cancel", "1", "--batch", "nightly"], database: database.url)
        #expect(both.status == 2, "ids and selectors are not mixed: \(both.stderr)")
        let unknown = try Run.haul(["cancel", "--batch", "nope", "--yes"], database: database.url)
        #expect(unknown.status == 1 && unknown.stderr.contains("no batch 'nope'"), "\(unknown.stderr)")
    }

    @Test("on a terminal the count is asked about; 'y' acts, anything else changes nothing")
    func confirmationOnTerminal() throws {
        let database = try Self.seeded()
        // script(1) gives haul a pseudo-terminal for stdin and stderr.
        let command = "printf 'n\\n' | script -qec \"'\(Harness.haulBinary)' cancel --state pending\" /dev/null"
        let declined = try Run.program("/bin/bash", ["-c", command], environment: ["DATABASE_URL": database.url])
        #expect(declined.stdout.contains("cancel 6 transfers (state pending)? [y/N]"), "\(declined.stdout)")
        #expect(try Self.states(database) == "pending,pending,pending,pending,pending,pending")
        let accepted = try Run.program(
            "/bin/bash", ["-c", command.replacingOccurrences(of: "'n\\n'", with: "'y\\n'")], environment: ["DATABASE_URL": database.url])
        #expect(accepted.stdout.contains("6 transfers changed"), "\(accepted.stdout)")
        #expect(try Self.states(database) == "canceled,canceled,canceled,canceled,canceled,canceled")
    }

    @Test("canceling thousands of transfers that never started is final at once: nothing left to clean up, prune takes them all")
    func cancelNeverStarted() throws {
        let database = try TestDatabase()
        try Self.enqueueUnreachable(3000, batch: "never", into: database)
        // One transfer of the batch was planned (a partial file may exist): it waits for a worker's cleanup.
        _ = try Run.psql(
            database.url,
            """
            UPDATE transfers SET state = 'downloading', size = 10, dest = coalesce(dest, 'never1.bin') WHERE id = 1;
            INSERT INTO segments (transfer_id, generation, idx, byte_offset, length, host) SELECT id, 0, 0, 0, 10, host FROM transfers WHERE id = 1;
            """)
        let statementsBefore = try Self.statements(database)
        let canceled = try Run.haul(["cancel", "--batch", "never", "--yes"], database: database.url)
        #expect(canceled.status == 0, "\(canceled.stderr)")
        #expect(try database.scalar("SELECT count(*) FROM transfers WHERE state = 'canceled'") == "3000")
        // Set-based from the selection to the follow-up: a statement per transfer (the get
        // clean-up lookup was one, 47 s for 10 000) would be thousands.
        let statements = try Self.statements(database) - statementsBefore
        #expect(statements < 100, "cancel --batch of 3000 ran \(statements) statements")
        #expect(try database.scalar("SELECT string_agg(id::text, ',') FROM transfers WHERE cleanup_pending") == "1", "only the started one awaits a cleanup")
        let pruned = try Run.haul(["prune", "--older-than", "0s"], database: database.url)
        #expect(pruned.stdout.contains("deleted 2999 finished transfers"), "\(pruned.stdout)")
        #expect(pruned.stdout.contains("kept 1 canceled transfer whose partial data a worker has not removed yet"), "\(pruned.stdout)")
        let json = try Run.haul(["prune", "--older-than", "0s", "--json"], database: database.url)
        #expect(json.stdout.contains("\"skipped_awaiting_cleanup\":1"), "\(json.stdout)")
    }

    @Test("a batch canceled before it started, retried and canceled again still never started: final at once, prune takes it all")
    func cancelRetriedNeverStarted() throws {
        let database = try TestDatabase()
        try Self.enqueueUnreachable(500, batch: "twice", into: database)
        for action in ["cancel", "retry", "cancel"] {
            let run = try Run.haul([action, "--batch", "twice", "--yes"], database: database.url)
            #expect(run.status == 0 && run.stdout.contains("500 transfers changed"), "\(action): \(run.stdout) \(run.stderr)")
        }
        #expect(try database.scalar("SELECT count(*) FROM transfers WHERE state = 'canceled' AND generation = 0 AND NOT cleanup_pending") == "500")
        let pruned = try Run.haul(["prune", "--older-than", "0s"], database: database.url)
        #expect(pruned.stdout.contains("deleted 500 finished transfers") && !pruned.stdout.contains("kept"), "\(pruned.stdout)")
    }

    @Test("pause, resume, cancel and retry of a batch of 3000 each run a handful of statements, not one per transfer")
    func batchActionsAreSetBased() throws {
        let database = try TestDatabase()
        try Self.enqueueUnreachable(3000, batch: "again", into: database)
        for (action, state) in [("pause", "paused"), ("resume", "pending"), ("cancel", "canceled"), ("retry", "pending")] {
            let before = try Self.statements(database)
            let run = try Run.haul([action, "--batch", "again", "--yes"], database: database.url)
            #expect(run.status == 0 && run.stdout.contains("3000 transfers changed"), "\(action): \(run.stdout) \(run.stderr)")
            let statements = try Self.statements(database) - before
            #expect(statements < 100, "\(action) --batch of 3000 ran \(statements) statements")
            #expect(try database.scalar("SELECT string_agg(DISTINCT state, ',') FROM transfers") == state, "\(action)")
        }
    }

    /// Enqueues `count` transfers of an origin that never answers (port 9) as batch `batch`:
    /// they stay pending, never started, with no worker running.
    static func enqueueUnreachable(_ count: Int, batch: String, into database: TestDatabase) throws {
        let path = Harness.temporaryDirectory("bulk-\(batch)") + "/manifest.txt"
        try (1...count).map { "http://127.0.0.1:9/\(batch)\($0).bin" }.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try Run.haul(["enqueue", "--manifest", path, "--batch", batch], database: database.url).status == 0)
    }

    /// Statements the server ran for `database` so far (`pg_stat_statements`, which the test
    /// services load; the first call creates the extension there).
    static func statements(_ database: TestDatabase) throws -> Int {
        _ = try Run.psql(database.url, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        let count = try database.scalar(
            "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())")
        guard let value = Int(count) else {
            throw TestFailure("pg_stat_statements is not loaded (scripts/test-services.sh loads it): \(count)")
        }
        return value
    }

    @Test("list --batch and --host; host-limit unset; prune --dry-run, --state and --older-than 0s")
    func listHostLimitPrune() throws {
        let database = try Self.seeded()
        let batch = try Run.haul(["list", "--batch", "nightly", "--json"], database: database.url)
        let items = try JSONSerialization.jsonObject(with: Data(batch.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(items.compactMap { $0["id"] as? Int } == [4, 3, 2, 1], "\(batch.stdout)")
        let host = try Run.haul(["list", "--host", "127.0.0.2:9"], database: database.url)
        #expect(host.stdout.split(separator: "\n").count == 3 && host.stdout.contains(" a") && host.stdout.contains(" b"), "\(host.stdout)")
        #expect(try Run.haul(["list", "--batch", "nope"], database: database.url).status == 1)

        #expect(try Run.haul(["host-limit", "set", "127.0.0.2:9", "3"], database: database.url).status == 0)
        let unset = try Run.haul(["host-limit", "unset", "127.0.0.2:9"], database: database.url)
        #expect(unset.status == 0 && unset.stdout.contains("back to the default"), "\(unset.stdout)")
        #expect(try database.scalar("SELECT coalesce(max_running::text, 'null') FROM origin_hosts WHERE host = '127.0.0.2:9'") == "null")
        let again = try Run.haul(["host-limit", "unset", "127.0.0.2:9"], database: database.url)
        #expect(again.status == 0 && again.stdout.contains("nothing changed"), "\(again.stdout)")

        // Finished rows: 1-2 done (by way of planning: `pending` to `done` is a batch's record,
        // which writes its own history), 3 failed, 4 canceled (already cleaned up).
        _ = try Run.psql(
            database.url,
            """
            UPDATE transfers SET state = 'planning' WHERE id <= 2;
            UPDATE transfers SET state = CASE WHEN id <= 2 THEN 'done' WHEN id = 3 THEN 'failed' ELSE 'canceled' END,
                   finished_at = now() - interval '1 second' WHERE id <= 4;
            INSERT INTO segments (transfer_id, generation, idx, byte_offset, length, bytes_done, host, state)
                SELECT id, generation, 0, 0, 10, 10, host, 'done' FROM transfers WHERE id <= 4;
            """)
        let dry = try Run.haul(["prune", "--older-than", "0s", "--dry-run"], database: database.url)
        #expect(dry.status == 0 && dry.stdout.contains("would delete 4"), "\(dry.stdout) \(dry.stderr)")
        #expect(try database.scalar("SELECT count(*) FROM transfers") == "6", "a dry run deletes nothing")
        let hour = try Run.haul(["prune", "--older-than", "1h30m", "--json"], database: database.url)
        #expect(hour.stdout.contains("\"deleted\":0"), "\(hour.stdout)")
        let failed = try Run.haul(["prune", "--older-than", "0s", "--state", "failed", "--state", "canceled"], database: database.url)
        #expect(failed.status == 0 && failed.stdout.contains("deleted 2"), "\(failed.stdout)")
        #expect(try Self.states(database) == "done,done,pending,pending")
        // The history has no foreign key to its transfer (migration 0014): pruning deletes it.
        #expect(try database.scalar("SELECT count(*) FROM transfer_events WHERE transfer_id IN (3, 4)") == "0")
        #expect(try database.scalar("SELECT count(*) FROM transfer_events WHERE transfer_id IN (1, 2)") == "4", "the kept transfers keep theirs")
        // Nor have the segments (migration 0015): they go with their transfer too.
        #expect(try database.scalar("SELECT string_agg(transfer_id::text, ',' ORDER BY transfer_id) FROM segments") == "1,2")
        let bad = try Run.haul(["prune", "--older-than", "0s", "--state", "pending"], database: database.url)
        #expect(bad.status == 2, "\(bad.stderr)")
    }

    @Test("haul batches lists batches newest first with their counts; every unknown --batch points at it")
    func batchList() throws {
        let empty = try TestDatabase()
        let none = try Run.haul(["batches"], database: empty.url)
        #expect(none.status == 0 && none.stdout.hasPrefix("no batches yet"), "\(none.stdout) \(none.stderr)")

        let database = try Self.seeded()
        let path = Harness.temporaryDirectory("bulk-later") + "/manifest.txt"
        try ["http://127.0.0.1:9/w1", "http://127.0.0.1:9/w2", "http://127.0.0.1:9/w3"].joined(separator: "\n").write(
            toFile: path, atomically: true, encoding: .utf8)
        #expect(try Run.haul(["enqueue", "--manifest", path, "--batch", "weekly\u{1b}[31m"], database: database.url).status == 0)
        #expect(try Run.haul(["pause", "7"], database: database.url).status == 0)
        #expect(try Run.haul(["cancel", "8"], database: database.url).status == 0)
        _ = try database.scalar("UPDATE transfers SET state = 'done' WHERE id IN (1, 2)")
        _ = try database.scalar("UPDATE transfers SET state = 'failed', error = 'gone' WHERE id = 3")

        let table = try Run.haul(["batches"], database: database.url)
        let lines = table.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        #expect(table.status == 0 && lines.count == 3, "\(table.stdout) \(table.stderr)")
        #expect(lines.first?.prefix(6) == ["NAME", "DONE", "FAILED", "ACTIVE", "PAUSED", "CANCELED"], "\(table.stdout)")
        // Newest first; the control characters of a name are shown as U+FFFD. Done/total, failed, active, paused, canceled.
        #expect(lines.dropFirst().first?.prefix(6) == ["weekly\u{FFFD}[31m", "0/3", "0", "1", "1", "1"], "\(table.stdout)")
        #expect(lines.dropFirst(2).first?.prefix(6) == ["nightly", "2/4", "1", "1", "0", "0"], "\(table.stdout)")
        #expect(!table.stdout.contains("\u{1b}"))

        let limited = try Run.haul(["batches", "--limit", "1", "--json"], database: database.url)
        let items = try JSONSerialization.jsonObject(with: Data(limited.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(items.count == 1 && items[0]["name"] as? String == "weekly\u{1b}[31m" && items[0]["total"] as? Int == 3, "\(limited.stdout)")
        #expect(
            (items.first?["states"] as? [String: Int]) == [
                "pending": 1, "planning": 0, "downloading": 0, "finalizing": 0, "done": 0, "failed": 0, "paused": 1, "canceled": 1,
            ])

        // A batch none of whose files was probed yet has no size to draw a bar of: its status
        // says so in words, not as a bare "0 B 0 B/s".
        let unprobed = try Run.haul(["status", "--batch", "nightly"], database: database.url)
        #expect(unprobed.status == 0 && unprobed.stdout.contains("\n  fetched: nothing yet, no size known\n"), "\(unprobed.stdout)")
        #expect(!unprobed.stdout.contains("B/s"), "\(unprobed.stdout)")

        for words in [
            ["status", "--batch", "nightlly"], ["wait", "--batch", "nightlly"], ["list", "--batch", "nightlly"], ["cancel", "--batch", "nightlly", "--yes"],
        ] {
            let unknown = try Run.haul(words, database: database.url)
            #expect(
                unknown.status != 0 && unknown.stderr.contains("there is no batch 'nightlly'") && unknown.stderr.contains("'haul batches' lists"),
                "\(words): \(unknown.stderr)")
        }
    }
}
