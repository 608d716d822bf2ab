#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Foundation
import SwiftPushRedis
import SwiftPushWorker

/// `swiftpush enqueue`: JSON lines (one notification per line) to stream entries, XADDs
/// pipelined by the thousand.
struct EnqueueCommand: StatusCommand {
    static let configuration = CommandConfiguration(
        commandName: "enqueue",
        abstract: "Add notifications (JSON lines) to a worker's Redis stream.",
        usage: "swiftpush enqueue [--redis HOST:PORT] [--shard S] [--file FILE] [--app NAME] [--pipeline N]",
        discussion: """
        Each line is a JSON object whose keys become the entry's fields
        (docs/worker.md):
          {"id":"n-1","app":"demo","token":"00fc...","payload":{"aps":{"alert":"Hi"}}}
        Objects and arrays (the payload) are written as JSON text, numbers as
        decimal text. Prints 'enqueued N' at the end. Exit status: 0 all lines
        enqueued, 1 some line was not JSON (the others were enqueued), 2 usage error.
        """)

    @OptionGroup var redisOptions: RedisOptions
    @Option(help: ArgumentHelp("JSON lines to read (default: standard input)", valueName: "FILE"))
    var file: String?
    @Option(help: ArgumentHelp("the app of lines that name none", valueName: "NAME"))
    var app: String?
    @Option(help: ArgumentHelp("XADDs per round trip (default 1000)", valueName: "N"))
    var pipeline: Int?

    func validate() throws(ValidationError) {
        try checkRange(pipeline, "pipeline", 1...100_000)
    }

    func execute() throws(ValidationError) -> Int32 {
        let (redis, keys) = try redisOptions.connect()
        let pipeline = self.pipeline ?? 1000
        let path = self.file ?? "/dev/stdin"
        guard let file = fopen(path, "r") else { throw ValidationError("cannot read \(path): \(String(cString: strerror(errno)))") }
        defer { fclose(file) }
        let defaultApp = app
        var batch: [[[UInt8]]] = []
        var enqueued = 0, bad = 0, lineNumber = 0
        var linePointer: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(linePointer) }

        func flush() -> Bool {
            if batch.isEmpty { return true }
            do throws(RedisError) {
                for reply in try redis.pipeline(batch) {
                    if case .error(let e) = reply { Console.err("swiftpush enqueue: XADD: \(e)"); bad += 1 } else { enqueued += 1 }
                }
            } catch {
                Console.err("swiftpush enqueue: \(error.description)")
                return false
            }
            batch.removeAll(keepingCapacity: true)
            return true
        }

        while true {
            let n = getline(&linePointer, &capacity, file)
            if n < 0 { break }
            lineNumber += 1
            let data = Data(bytes: linePointer!, count: n)
            if data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { continue }
            guard let object = (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) as? [String: Any] else {
                Console.err("swiftpush enqueue: line \(lineNumber) is not a JSON object; skipped")
                bad += 1
                continue
            }
            var command: [[UInt8]] = [Array("XADD".utf8), Array(keys.stream.utf8), Array("*".utf8)]
            var hasApp = false
            for (key, value) in object.sorted(by: { $0.key < $1.key }) {
                command.append(Array(key.utf8))
                command.append(Self.fieldValue(value))
                if key == "app" { hasApp = true }
            }
            if !hasApp, let defaultApp { command += [Array("app".utf8), Array(defaultApp.utf8)] }
            batch.append(command)
            if batch.count >= pipeline && !flush() { return 1 }
        }
        if !flush() { return 1 }
        Console.out("enqueued \(enqueued)")
        return bad == 0 ? 0 : 1
    }

    /// A JSON value as an entry field: strings as they are, the rest as JSON text.
    static func fieldValue(_ value: Any) -> [UInt8] {
        if let s = value as? String { return Array(s.utf8) }
        if let b = value as? Bool, "\(type(of: value))".contains("Bool") { return Array((b ? "true" : "false").utf8) }
        if let n = value as? NSNumber { return Array(n.stringValue.utf8) }
        if value is NSNull { return Array("null".utf8) }
        if let data = try? JSONSerialization.data(withJSONObject: value, options: [.withoutEscapingSlashes]) { return Array(data) }
        return []
    }
}
