import ArgumentParser
import Foundation
import SwiftPushRedis
import SwiftPushWorker
import SwiftPushKeys

/// `swiftpush enqueue --tokens`: one payload to many devices, as multicast entries (format 2:
/// `v 2`, `tokens_bin` packed, or `tokens` comma-separated when a token is not lowercase hex).
extension EnqueueCommand {
    /// Writes the multicast entries of the tokens in `tokensPath`; prints `enqueued N` (entries).
    func enqueueMulticast(tokensPath: String, payload: String, id: String, redis: RedisRouter, keys: StreamKeys,
                          wait: RedisWait?, pipeline: Int) throws(ValidationError) -> Int32 {
        guard let text = try? String(contentsOfFile: tokensPath, encoding: .utf8) else {
            throw ValidationError("cannot read \(tokensPath)")
        }
        let list = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if list.isEmpty { throw ValidationError("\(tokensPath) holds no token") }
        if let bad = list.first(where: { $0.contains(",") }) { throw ValidationError("a token may not contain a comma: \(bad)") }
        let body: String
        if payload.hasPrefix("@") {
            guard let file = try? String(contentsOfFile: String(payload.dropFirst()), encoding: .utf8) else {
                throw ValidationError("cannot read \(payload.dropFirst())")
            }
            body = file.trimmingCharacters(in: .whitespacesAndNewlines)
        } else {
            body = payload
        }
        guard (try? JSONSerialization.jsonObject(with: Data(body.utf8))) is [String: Any] else {
            throw ValidationError("--payload is not a JSON object")
        }
        let size = perEntry ?? 500
        let chunks = stride(from: 0, to: list.count, by: size).map { list[$0..<min($0 + size, list.count)] }
        var batches = EnqueueBatches()
        batches.sendAt = try sendAtMillis()
        for (k, chunk) in chunks.enumerated() {
            let entryID = chunks.count == 1 ? id : "\(id)#\(k)"
            let stream = lane.stream(of: shards.map { StreamKeys(shard: ShardSpread.shard(of: entryID, count: $0)) } ?? keys)
            // The packed form (`tokens_bin`, half the bytes for Redis to move) when every token
            // is lowercase hex, the text form otherwise (the worker then reads them as written).
            var args = RedisArguments(["XADD", stream, "*", "v", "2", "id", entryID])
            if let packed = PackedTokens.pack(chunk) {
                args.append("tokens_bin")
                args.append(packed)
            } else {
                args.append("tokens")
                args.append(chunk.joined(separator: ","))
            }
            args.append("payload")
            args.append(body)
            if let app { args.append("app"); args.append(app) }
            if let campaign { args.append("campaign"); args.append(campaign) }
            // A multicast entry is large: a pipeline carries at most about a megabyte of them.
            let most = max(1, min(pipeline, 1_000_000 / (chunk.count * 66 + body.utf8.count)))
            if batches.add(args, stream: stream, notifications: chunk.count, campaign: campaign) >= most
                && !batches.flush(stream, redis: redis, wait: wait) { return 1 }
        }
        for stream in batches.streams where !batches.flush(stream, redis: redis, wait: wait) { return 1 }
        return Self.summary(batches, bad: 0, wait: wait)
    }
}
