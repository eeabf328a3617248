import Synchronization

/// The files this process's `haul get` transfers save under a name the origin gave, each held
/// by the first transfer that took it. Two URLs of one get that the origin names alike
/// (`a/x.bin` and `b/x.bin`) would otherwise write the same partial file at once and publish a
/// mix of both; the second is refused instead. A name stays held for the life of the process:
/// a file one URL saved is not another URL's to replace either.
final class OriginNames: Sendable {
    private let holders = Mutex<[String: Int64]>([:])

    /// Takes `path` for transfer `id`. - Returns: the transfer that holds it, when another does.
    func take(_ path: String, for id: Int64) -> Int64? {
        holders.withLock { holders in
            if let holder = holders[path], holder != id { return holder }
            holders[path] = id
            return nil
        }
    }
}
