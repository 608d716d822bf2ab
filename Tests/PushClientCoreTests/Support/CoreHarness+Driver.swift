#if canImport(Glibc)
import Glibc
#endif
import PushCore
@testable import PushClientCore
@testable import PushClientMachine
@testable import PushTransport

/// The harness as `PushClient` drives its core, with no socket: the test plays the resolver,
/// the connections and nghttp2 (stream ids, answers written into slots, facts recorded in a
/// `ConnectionInput`), and reads back the actions the core asks for.
extension CoreHarness {
    /// nghttp2's error codes the tests report (RFC 9113 §7; the test target does not import
    /// CNGHTTP2).
    static let internalError: UInt32 = 2, refusedStream: UInt32 = 7

    /// An address to connect to (never used: no socket is opened).
    static let address = SocketConnect.Address(storage: sockaddr_storage(), length: 0)

    /// Every action the events reported so far returned and the test has not read, in order;
    /// the buffer is emptied.
    mutating func takeActions() -> [ClientCore.Action] {
        var out: [ClientCore.Action] = []
        swap(&out, &actions)
        return out
    }

    /// One turn of the I/O loop at `now`; returns the actions not read before and those it
    /// asked for.
    @discardableResult
    mutating func turn(closing: Bool = false, drainMillis: Int32 = 0, callersWaiting: Bool = false) -> [ClientCore.Action] {
        core.turn(now: now, closing: closing, drainMillis: drainMillis, callersWaiting: callersWaiting, actions: &actions)
        return takeActions()
    }

    /// `maintainPool` alone at `now` (a part of `turn`), as an event: its actions join `actions`.
    mutating func maintainPool(callersWaiting: Bool) {
        let now = self.now
        core.deciding(into: &actions) { $0.maintainPool(now: now, callersWaiting: callersWaiting) }
    }

    /// The resolver thread takes the name (`ticket`) and answers with `addresses` at once.
    mutating func resolve(ticket: UInt64 = 1, _ addresses: [SocketAddress] = [Self.address]) {
        core.resolutionStarted(ticket: ticket)
        core.resolutionAnswered(ticket: ticket, .success(addresses), now: now, actions: &actions)
    }

    /// Hands `count` notifications to the core as senders do (due in `deadlineMillis`); returns
    /// their slots in order.
    @discardableResult
    mutating func submit(_ count: Int, deadlineMillis: UInt64 = 10_000) -> [Int32] {
        var list = SlotList()
        var out: [Int32] = []
        for _ in 0..<count {
            let index = notification(deadlineMillis: deadlineMillis)
            list.append(index, in: slots)
            out.append(index)
        }
        core.take(&list)
        return out
    }

    /// Opens every empty pool position as the driver does (the resolver answers with one
    /// address, each connect starts), and brings each connection to ready with the server
    /// allowing `maxStreams` concurrent streams. Returns the new connections, by position.
    @discardableResult
    mutating func connect(maxStreams: UInt32 = 100) -> [ConnectionID] {
        let ids = startConnections()
        for id in ids { establish(id, maxStreams: maxStreams) }
        return ids
    }

    /// Has the pool open its empty positions as far as the TCP connects (resolved at once):
    /// the connections it asked for, none of them up yet.
    mutating func startConnections(callersWaiting: Bool = true) -> [ConnectionID] {
        var ids: [ConnectionID] = []
        // Twice: a first pass may only ask for the name (the second connects with its answer).
        for _ in 0..<2 {
            maintainPool(callersWaiting: callersWaiting)
            for action in takeActions() {
                switch action {
                case .resolve:
                    resolve()
                case .connect(let id, _):
                    core.connectStarted(id, fallback: [], now: now, actions: &actions)
                    ids.append(id)
                case .log, .backoff:
                    break
                default:
                    preconditionFailure("maintainPool asked for \(action)")
                }
            }
        }
        return ids
    }

    /// Connection `id`'s TCP connect and TLS complete and the server's first SETTINGS arrives.
    mutating func establish(_ id: ConnectionID, maxStreams: UInt32) {
        core.connectionProgressed(id, .tcpConnected(throughProxy: false))
        core.connectionProgressed(id, .handshakeCompleted)
        record([.settings(maxConcurrentStreams: maxStreams)], on: id)
    }

    /// Connection `id` reports `facts`, as after a read at `now`.
    mutating func record(_ facts: [ConnectionFact], on id: ConnectionID) {
        var input = ConnectionInput()
        for fact in facts { input.append(fact) }
        core.absorb(&input, from: id, now: now, actions: &actions)
        input.deallocate()
    }

    /// Starts the streams the core gives connection `id`, as the driver's `startStreams` does
    /// (stream ids 1, 3, 5... on each connection); returns the slots started, in order.
    @discardableResult
    mutating func startStreams(on id: ConnectionID) -> [Int32] {
        var batch = core.takeStreams(for: id, now: now)
        let started = contents(batch)
        for index in started {
            let streamID = nextStreamID[id, default: 1]
            slots[index].pointee.transmission.streamID = streamID
            nextStreamID[id] = streamID + 2
        }
        core.streamsStarted(&batch, on: id, tokenGeneration: 0, now: now, actions: &actions)
        return started
    }

    /// A loop turn, then the streams it asked for started; returns what each connection took.
    @discardableResult
    mutating func dispatch() -> [ConnectionID: [Int32]] {
        var sent: [ConnectionID: [Int32]] = [:]
        for action in turn() {
            if case .startStreams(let id) = action { sent[id, default: []] += startStreams(on: id) }
        }
        return sent
    }

    /// Plays the whole driver for `todo`: resolutions answered at once, connections started
    /// and brought up with the server allowing `maxStreams`, streams started, closes and
    /// failures reported as the connection's end (resets, flushes and PINGs need nothing).
    /// Returns what each connection took.
    @discardableResult
    mutating func carryOut(_ todo: [ClientCore.Action], maxStreams: UInt32 = 100) -> [ConnectionID: [Int32]] {
        var sent: [ConnectionID: [Int32]] = [:]
        for action in todo {
            switch action {
            case .resolve:
                resolve()
            case .connect(let id, _):
                core.connectStarted(id, fallback: [], now: now, actions: &actions)
                establish(id, maxStreams: maxStreams)
            case .startStreams(let id):
                sent[id, default: []] += startStreams(on: id)
            case .close(let id), .terminate(let id):
                core.connectionClosed(id, error: nil, now: now, actions: &actions)
            case .fail(let id, let error):
                core.connectionClosed(id, error: error, now: now, actions: &actions)
            case .cancelStream, .flush, .ping, .log, .tokenAccepted, .tokenExpired, .backoff:
                break
            }
        }
        // What reporting those ends decided (a fallback's connect) is carried out too.
        if !actions.isEmpty { for (id, more) in carryOut(takeActions(), maxStreams: maxStreams) { sent[id, default: []] += more } }
        return sent
    }

    /// The server answers notification `index` (in flight on `id`) with `status` and, for an
    /// error, the JSON body naming `reason`; the stream closes.
    mutating func answer(_ index: Int32, on id: ConnectionID, status: Int32 = 200, reason: String? = nil) {
        let slot = slots[index]
        slot.pointee.answer.status = status
        if let reason {
            let body = Array(#"{"reason":"\#(reason)"}"#.utf8)
            (slot.pointee.storage.buffer! + SlotLayout.body).copyMemory(from: body, byteCount: body.count)
            slot.pointee.answer.bodyLength = Int32(body.count)
        }
        record([.streamClosed(slot: index, streamID: slot.pointee.transmission.streamID, errorCode: 0)], on: id)
    }

    /// The server resets notification `index`'s stream on `id` with `errorCode`, unanswered.
    mutating func reset(_ index: Int32, on id: ConnectionID, errorCode: UInt32) {
        record([.streamClosed(slot: index, streamID: slots[index].pointee.transmission.streamID, errorCode: errorCode)], on: id)
    }

    /// Waits out the reconnect back-off (a connection that ended before it was of use counts as
    /// a failed attempt, `ConnectionState.ending`).
    mutating func waitOutBackoff() {
        now = max(now, core.backoff.nextAttemptNanos)
    }

    /// Every notification ended so far, published or not, in order: what the harness took out
    /// of the outbox (`publish`) and what waits there.
    var outcomes: [Int32] { published + finished }

    /// Takes the outbox's finished notifications as the driver's publish does.
    mutating func publish() {
        var list = core.outbox.takeFinished()
        while true {
            let index = list.popFirst(in: slots)
            if index < 0 { break }
            published.append(index)
        }
    }

    /// The connection in entry of `id` as the core knows it (nil: gone).
    func state(_ id: ConnectionID) -> ConnectionState? {
        core.pool.entry(id).map { core.pool.entries[$0].state }
    }
}

/// What a test asks of an action: its kind and the connection it names.
extension ClientCore.Action {
    /// `.startStreams(id)`'s connection.
    var startsStreams: ConnectionID? { if case .startStreams(let id) = self { return id } else { return nil } }
    /// `.connect(id, _)`'s connection.
    var connects: ConnectionID? { if case .connect(let id, _) = self { return id } else { return nil } }
    /// `.terminate(id)`'s connection.
    var terminates: ConnectionID? { if case .terminate(let id) = self { return id } else { return nil } }
    /// `.cancelStream`'s connection and stream.
    var cancels: (ConnectionID, Int32)? { if case .cancelStream(let id, let s) = self { return (id, s) } else { return nil } }
    /// `.fail(id, error)`'s connection and error.
    var fails: (ConnectionID, TransportError)? { if case .fail(let id, let e) = self { return (id, e) } else { return nil } }
    /// `.ping(id)`'s connection.
    var pings: ConnectionID? { if case .ping(let id) = self { return id } else { return nil } }
    /// `.close(id)`'s connection.
    var closes: ConnectionID? { if case .close(let id) = self { return id } else { return nil } }
}
