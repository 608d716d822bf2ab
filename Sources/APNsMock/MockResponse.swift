import CNGHTTP2
import PushCore

/// Builds responses in the shape APNs sends them (apns.md, "Response"): `:status` and
/// `apns-id` headers (plus `apns-unique-id` in development mode); no body on 200;
/// `{"reason":"..."}` otherwise, with `"timestamp"` (ms since the epoch) only on 410.
///
/// Header names and status texts are static bytes and the apns-id and body live in the
/// stream, so nghttp2 is told to copy nothing (`NGHTTP2_NV_FLAG_NO_COPY_*`).
enum MockResponse {
    /// "100"..."599" as three ASCII digits each, never freed: `:status` values point into it.
    /// Written once during initialisation and read-only afterwards, hence safe to share.
    nonisolated(unsafe) private static let statusDigits: UnsafeMutablePointer<UInt8> = {
        let p = UnsafeMutablePointer<UInt8>.allocate(capacity: 500 * 3)
        for code in 100..<600 {
            let at = (code - 100) * 3
            p[at] = UInt8(48 + code / 100)
            p[at + 1] = UInt8(48 + code / 10 % 10)
            p[at + 2] = UInt8(48 + code % 10)
        }
        return p
    }()

    private static let statusName: StaticString = ":status"
    private static let apnsIdName: StaticString = "apns-id"
    private static let noCopy = UInt8(NGHTTP2_NV_FLAG_NO_COPY_NAME.rawValue | NGHTTP2_NV_FLAG_NO_COPY_VALUE.rawValue)
    /// apns-id changes per request: indexing it would only churn the HPACK table (apns.md,
    /// "HPACK").
    private static let noCopyNoIndex = noCopy | UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue)

    private static let uniqueIdName: StaticString = "apns-unique-id"

    /// Fills `stream.headers` with `:status`, `apns-id` (which must be set) and, when
    /// `uniqueId`, `apns-unique-id` (which must be set too).
    static func fillHeaders(_ stream: MockStream, status: Int32, uniqueId: Bool) {
        let code = (100..<600).contains(Int(status)) ? Int(status) : 500
        stream.headers[0] = nghttp2_nv(name: UnsafeMutablePointer(mutating: statusName.utf8Start),
                                       value: statusDigits + (code - 100) * 3,
                                       namelen: statusName.utf8CodeUnitCount, valuelen: 3, flags: noCopy)
        stream.headers[1] = nghttp2_nv(name: UnsafeMutablePointer(mutating: apnsIdName.utf8Start),
                                       value: stream.apnsId.assumingMemoryBound(to: UInt8.self),
                                       namelen: apnsIdName.utf8CodeUnitCount, valuelen: 36, flags: noCopyNoIndex)
        stream.headerCount = 2
        if uniqueId {
            stream.headers[2] = nghttp2_nv(name: UnsafeMutablePointer(mutating: uniqueIdName.utf8Start),
                                           value: stream.uniqueId.assumingMemoryBound(to: UInt8.self),
                                           namelen: uniqueIdName.utf8CodeUnitCount, valuelen: 36, flags: noCopyNoIndex)
            stream.headerCount = 3
        }
    }

    private static let requestIdName: StaticString = "apns-request-id"
    private static let channelIdName: StaticString = "apns-channel-id"

    /// A broadcast's answer headers: `:status`, `apns-request-id` (the request's, or one
    /// generated) and, when `uniqueId`, `apns-unique-id` (apns.md: a 200 carries both).
    static func fillBroadcastHeaders(_ stream: MockStream, status: Int32, uniqueId: Bool) {
        fillHeaders(stream, status: status, uniqueId: uniqueId)
        setName(requestIdName, at: 1, of: stream)
    }

    /// A channel management answer: `:status` (201 create, 200 read and list, 204 delete, or
    /// the reason's), `apns-request-id`, `apns-channel-id` on a create, and the JSON body of a
    /// read or a list (`stream.answerBody`).
    static func fillManagementAnswer(_ stream: MockStream, _ answer: BroadcastValidation.ManagementAnswer) {
        fillHeaders(stream, status: answer.reason == .none ? answer.status : answer.reason.httpStatus, uniqueId: false)
        setName(requestIdName, at: 1, of: stream)
        guard answer.reason == .none else { return }
        if !answer.channelId.isEmpty && answer.channelId.count <= MockStream.channelIdCapacity {
            // A create has no channel id of its own: its buffer holds the new one until the
            // stream closes (nghttp2 copies nothing).
            answer.channelId.withUnsafeBytes { stream.channelId.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            stream.headers[2] = nghttp2_nv(name: UnsafeMutablePointer(mutating: channelIdName.utf8Start),
                                           value: stream.channelId.assumingMemoryBound(to: UInt8.self),
                                           namelen: channelIdName.utf8CodeUnitCount, valuelen: answer.channelId.count,
                                           flags: noCopyNoIndex)
            stream.headerCount = 3
        }
        stream.answerBody = answer.body
        stream.bodyLength = answer.body.count
        stream.bodySent = 0
    }

    /// Renames header `index` (the request-id header of broadcasts and channel requests,
    /// which carries what `apns-id` carries for device notifications).
    private static func setName(_ name: StaticString, at index: Int, of stream: MockStream) {
        stream.headers[index].name = UnsafeMutablePointer(mutating: name.utf8Start)
        stream.headers[index].namelen = name.utf8CodeUnitCount
    }

    /// Writes the error body for `reason` into `stream.body`; `timestamp` (ms) is included when
    /// not negative (410 only).
    static func fillBody(_ stream: MockStream, reason: APNsReason, timestamp: Int64) {
        var w = Writer(base: stream.body.assumingMemoryBound(to: UInt8.self), capacity: MockStream.bodyCapacity)
        w.append("{\"reason\":\"")
        w.append(reason.text)
        w.append("\"")
        if timestamp >= 0 {
            w.append(",\"timestamp\":")
            w.append(String(timestamp))
        }
        w.append("}")
        stream.bodyLength = w.count
        stream.bodySent = 0
    }

    /// Appends bytes up to a fixed capacity (the longest body fits with room to spare).
    private struct Writer {
        let base: UnsafeMutablePointer<UInt8>
        let capacity: Int
        var count = 0

        mutating func append(_ s: String) {
            for byte in s.utf8 where count < capacity {
                base[count] = byte
                count += 1
            }
        }
    }
}
