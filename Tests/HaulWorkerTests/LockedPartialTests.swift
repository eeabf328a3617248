import Foundation
import HaulCore
import HaulQueue
import HaulStorage
import Testing

@testable import HaulWorker

/// `LockedPartial.asMet`: the refusal of a partial file another process holds locked is told
/// apart by its kind, never its words, and is retried only on a fleet worker.
struct LockedPartialTests {
    let locked = try! TransferFiles(root: try! StorageRoot(NSTemporaryDirectory()), relative: "x.iso").busy

    @Test("a fleet worker retries a locked partial file; a haul get is refused at once")
    func byScope() {
        #expect(locked.kind == .partialLocked && !locked.isTransient)
        #expect((LockedPartial.asMet(locked, scope: .fleet) as? HaulError)?.isTransient == true)
        #expect((LockedPartial.asMet(locked, scope: .own) as? HaulError) == locked)
    }

    @Test("another destination-busy refusal, even in the same words, is not taken for it")
    func otherRefusals() {
        let worded = HaulError(.destinationBusy, locked.message, hint: locked.hint)
        #expect((LockedPartial.asMet(worded, scope: .fleet) as? HaulError) == worded)
        let other = HaulError(.destinationBusy, "'x.iso' is the file transfer 7 saves too")
        #expect((LockedPartial.asMet(other, scope: .fleet) as? HaulError)?.isTransient == false)
    }
}
