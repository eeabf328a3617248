import HaulCore
import HaulQueue
import HaulStorage

/// The refusal of a partial file another haul process holds locked (`TransferFiles.busy`, of
/// kind `partialLocked`), as a worker that holds the transfer's lease meets it.
enum LockedPartial {
    /// `error` as a worker of `scope` treats it. On a fleet worker the lock's holder is a worker
    /// whose lease on the transfer ran out (it froze), which gives the lock up once it wakes and
    /// finds its claim lost: the refusal is transient, and the transfer is tried again later. A
    /// `haul get` (its own scope) is refused at once: another process saves that file. Any other
    /// error is returned as it is.
    static func asMet(_ error: Error, scope: WorkScope) -> Error {
        guard var refusal = error as? HaulError, refusal.kind == .partialLocked, scope == .fleet else { return error }
        refusal.isTransient = true
        return refusal
    }
}
