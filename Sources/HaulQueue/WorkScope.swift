/// Which transfers a worker takes on. The fleet's workers share every transfer that no
/// `haul get` owns; the worker inside `haul get` takes only the transfers it owns
/// (`transfers.owner`), so that on a fleet's database it never fetches, finalizes or cleans up
/// a fleet transfer into the get's own folder or bucket.
public enum WorkScope: Sendable, Equatable {
    /// A `haul worker`: transfers nobody owns (and any it owns itself).
    case fleet
    /// `haul get`'s in-process worker: only its own transfers.
    case own

    /// The SQL condition on the owner column `column` for the worker id in parameter `worker` (`$2`).
    /// The SQL condition that the transfer's storage column `column` is the claiming worker's,
    /// in parameter `storage` (text): a transfer not planned yet (`NULL`) is anybody's, and a
    /// `NULL` parameter takes any.
    static func onStorage(_ column: String, storage: String) -> String {
        "(\(storage)::text IS NULL OR \(column) IS NULL OR \(column) = \(storage)::text)"
    }

    func owns(_ column: String, worker: String) -> String {
        switch self {
        case .fleet: "(\(column) IS NULL OR \(column) = \(worker))"
        case .own: "\(column) = \(worker)"
        }
    }
}
