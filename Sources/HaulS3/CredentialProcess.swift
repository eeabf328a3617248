import Foundation
import HaulCore

/// A profile's `credential_process`: a command run with `/bin/sh -c` that prints credentials
/// as JSON (`Version` 1, `AccessKeyId`, `SecretAccessKey`, optional `SessionToken` and
/// `Expiration`). Its standard error goes to Haul's; its output is never shown.
public enum CredentialProcess {
    /// The credentials in the command's `output`.
    public static func parse(_ output: Data, command: String) throws -> S3Credentials {
        let shown = "credential_process '\(program(command))'"
        guard let object = try? JSONSerialization.jsonObject(with: output) as? [String: Any] else {
            throw HaulError(
                .s3Credentials, "\(shown) printed no JSON object", hint: "it must print {\"Version\": 1, \"AccessKeyId\": …, \"SecretAccessKey\": …}")
        }
        guard (object["Version"] as? NSNumber)?.intValue == 1 else {
            throw HaulError(.s3Credentials, "\(shown) printed JSON without \"Version\": 1", hint: "Haul reads version 1 of the credential_process output")
        }
        guard let key = object["AccessKeyId"] as? String, !key.isEmpty, let secret = object["SecretAccessKey"] as? String, !secret.isEmpty else {
            throw HaulError(.s3Credentials, "\(shown) printed no AccessKeyId and SecretAccessKey", hint: "check the command's output format")
        }
        var expiration: Date?
        if let text = object["Expiration"] as? String {
            guard let date = AWSTime.parse(text) else {
                throw HaulError(.s3Credentials, "\(shown) printed an Expiration '\(SafeText.cleanLine(text))' that is no ISO 8601 time")
            }
            expiration = date
        }
        let token = (object["SessionToken"] as? String).flatMap { $0.isEmpty ? nil : $0 }
        return S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: token, expiration: expiration)
    }

    /// Runs `command` and reads its output.
    public static func run(_ command: String) throws -> S3Credentials {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch {
            throw HaulError(.s3Credentials, "cannot run credential_process '\(program(command))': \(error)")
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw HaulError(
                .s3Credentials, "credential_process '\(program(command))' exited with status \(process.terminationStatus)",
                hint: "run the command by hand to see why")
        }
        return try parse(data, command: command)
    }

    /// The command's program, for messages: its arguments may hold a secret.
    static func program(_ command: String) -> String {
        SafeText.cleanLine(command.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init) ?? "")
    }
}

/// The times AWS writes (`2026-12-06T03:00:00Z`, with or without fractions or an offset).
public enum AWSTime {
    /// The time in `text`, `nil` when it is none.
    public static func parse(_ text: String) -> Date? {
        let plain = ISO8601DateFormatter()
        if let date = plain.date(from: text) { return date }
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return fractional.date(from: text)
    }
}
