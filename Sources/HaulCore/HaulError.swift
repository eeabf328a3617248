import Foundation

/// An error a user of `haul` can act on: a stable machine-readable `code`, a sentence
/// saying what happened, and (when there is one) what to do about it.
///
/// Modules throw this rather than growing enums, in the style of
/// swift-service-lifecycle and postgres-nio: callers switch on `code` when they
/// must, and print `description` otherwise. Never put a secret in `message` or `hint`.
public struct HaulError: Error, CustomStringConvertible, Sendable, Equatable {
    /// A stable identifier of the error's kind, such as `bad-url` or `origin-changed`.
    public var code: Code
    /// What happened, as one sentence without a trailing full stop.
    public var message: String
    /// What the user can do about it, if anything.
    public var hint: String?
    /// Whether retrying the same operation later may succeed (network trouble, 5xx, full disk).
    public var isTransient: Bool
    /// Seconds the other side asked us to wait before retrying (`Retry-After`), if it said.
    public var retryAfter: Double?
    /// What sets this error apart within its code, for the callers that must act on that (never
    /// on its message); `nil`: nothing. Never printed.
    public var kind: Kind?

    /// Creates an error; `code` is one of the `Code` constants, stable across versions.
    public init(_ code: Code, _ message: String, hint: String? = nil, transient: Bool = false) {
        self.code = code
        self.message = message
        self.hint = hint
        self.isTransient = transient
        self.retryAfter = nil
        self.kind = nil
    }

    /// The message followed by the hint, ready to print after `haul: `.
    public var description: String {
        guard let hint else { return message }
        return "\(message); \(hint)"
    }

    /// This transient error as the final one, once `attempts` attempts failed: the message says
    /// how many were made. (Whether an error is retried is never its hint's to say: the caller
    /// retrying it says so while it does, and after the last attempt nothing promises another.)
    public func givenUp(after attempts: Int) -> HaulError {
        var final = self
        final.message += " (gave up after \(attempts) attempt\(attempts == 1 ? "" : "s"))"
        return final
    }
}

extension HaulError {
    /// A stable, machine-readable kind of error: a short kebab-case word stored in
    /// `transfers.error_code`, printed by `--json`, and matched by callers that must tell kinds
    /// apart, with the status `haul` exits with when a command fails with it. A struct with
    /// static members rather than an enum, so that modules can add their own kinds without a
    /// central switch (the swift-service-lifecycle and postgres-nio pattern). Codes are only
    /// declared as named constants beside their `///` docs, never written as bare strings.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The kebab-case word.
        public let rawValue: String
        /// The status `haul` exits with when a command fails with this code (`ExitStatus`).
        public let exitStatus: Int32

        /// Declares a code: its word and its exit status. Called once per code, by the
        /// `static let` that names it in a code table (`extension HaulError.Code`).
        public init(_ rawValue: String, exit exitStatus: Int32) {
            self.rawValue = rawValue
            self.exitStatus = exitStatus
        }

        /// A code read back from storage (`transfers.error_code`): the declared code of that word
        /// among `known`, or an undeclared one that exits with `ExitStatus.failure`.
        public init(stored rawValue: String, among known: [Code]) {
            self = known.first { $0.rawValue == rawValue } ?? Code(rawValue, exit: ExitStatus.failure)
        }

        /// The kebab-case word.
        public var description: String { rawValue }

        /// Codes are the same when their words are.
        public static func == (left: Code, right: Code) -> Bool { left.rawValue == right.rawValue }

        /// Hashes the word.
        public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }
    }

    /// Bad input from the command line or a manifest: the process exits with status 2.
    public static func usage(_ message: String, hint: String? = nil) -> HaulError {
        HaulError(.usage, message, hint: hint)
    }
}

extension HaulError {
    /// A finer kind of error than its code, declared (`static let`) by the module that throws
    /// it, for callers that treat it apart from the rest of its code.
    public struct Kind: Hashable, Sendable {
        /// A short kebab-case word naming it.
        public let rawValue: String

        /// Declares a kind; called once per kind, by the `static let` that names it.
        public init(_ rawValue: String) {
            self.rawValue = rawValue
        }
    }
}

extension HaulError {
    /// A one-line message for an error that is not a `HaulError` (one from Foundation, say),
    /// for the command line's last resort: the file it names and the system's reason, as
    /// `strerror` words it (`/tmp/x: No space left on device`), never an `Error Domain=…` dump.
    public static func describing(_ error: Error) -> String {
        let error = error as NSError
        let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError
        let posix = [error, underlying].compactMap { $0 }.first { $0.domain == NSPOSIXErrorDomain }
        let path = error.userInfo[NSFilePathErrorKey] as? String ?? (error.userInfo[NSURLErrorKey] as? URL)?.path
        let code = posix.map { Int32($0.code) } ?? (error.domain == NSCocoaErrorDomain ? cocoaFileErrors[error.code] : nil)
        let reason = code.map { String(cString: strerror($0)) } ?? error.localizedDescription
        return SafeText.cleanLine(path.map { "\($0): \(reason)" } ?? reason)
    }

    /// Foundation's file error codes that carry no POSIX error, as the `errno` they stand for.
    private static let cocoaFileErrors: [Int: Int32] = [
        NSFileNoSuchFileError: ENOENT, NSFileReadNoSuchFileError: ENOENT, NSFileReadNoPermissionError: EACCES,
        NSFileWriteNoPermissionError: EACCES, NSFileWriteOutOfSpaceError: ENOSPC, NSFileWriteVolumeReadOnlyError: EROFS,
    ]
}
