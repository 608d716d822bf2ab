/// What a reply means for a router (pure; `RedisRouter` acts on it): the command's answer, a
/// redirect to another node (https://redis.io/docs/reference/cluster-spec/, "Redirection and
/// resharding"), or a refusal to retry after a pause (the cluster is down or failing over, a
/// slot is migrating, the node is loading its data).
public enum RedisReplyDisposition: Equatable, Sendable {
    /// The command ran (or failed for its own reasons): this is its reply.
    case answer
    /// `-MOVED slot host:port`: the slot lives on that node now; ask it, and refresh the map.
    case moved(slot: Int, node: RedisNode)
    /// `-ASK slot host:port`: the slot is being migrated and this key has gone: send `ASKING`
    /// then the command, once, to that node; the map does not change.
    case ask(slot: Int, node: RedisNode)
    /// `-CLUSTERDOWN`, `-TRYAGAIN`, `-LOADING`, `-MASTERDOWN`, `-READONLY`, `-UNBLOCKED`
    /// (`retryCodes`): not run, or a blocking command ended without its answer; try again after
    /// a pause (and a fresh map: a failover may be under way).
    case retryLater(String)

    /// The first words of the error replies that mean "not now, maybe not here": the cluster is
    /// down or failing over, a slot is migrating, the node is loading its data, is a replica (or
    /// lost its master); and UNBLOCKED, which a blocking command (XREADGROUP ... BLOCK) gets when
    /// its master is demoted to a replica during a failover ("-UNBLOCKED force unblock from
    /// blocking operation, instance state changed (master -> replica?)", or `CLIENT UNBLOCK id
    /// ERROR`'s "-UNBLOCKED client unblocked via CLIENT UNBLOCK"): the command gave no answer,
    /// and the node that had the slot may no longer serve it.
    public static let retryCodes: Set<Substring> = ["CLUSTERDOWN", "TRYAGAIN", "LOADING", "MASTERDOWN", "READONLY", "UNBLOCKED"]

    /// The disposition of `reply`, received from `answeringNode` (whose host stands in for an
    /// empty host in a redirect, as Redis 7 sends when it does not know its own address).
    public init(_ reply: RedisReply, answeringNode: RedisNode) {
        guard case .error(let text) = reply else {
            self = .answer
            return
        }
        self.init(errorText: text, answeringNode: answeringNode)
    }

    /// The disposition of an error reply's text.
    public init(errorText text: String, answeringNode: RedisNode) {
        let words = text.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: true)
        switch words.first {
        case "MOVED", "ASK":
            guard words.count >= 3, let slot = Int(words[1]), (0..<RedisSlot.count).contains(slot),
                  let node = Self.endpoint(String(words[2]), answeringNode: answeringNode) else {
                self = .answer
                return
            }
            self = words[0] == "MOVED" ? .moved(slot: slot, node: node) : .ask(slot: slot, node: node)
        case let code? where Self.retryCodes.contains(code):
            self = .retryLater(text)
        default:
            self = .answer
        }
    }

    /// Whether an error reply's text is a redirect or a refusal to retry later: anything
    /// `init(errorText:answeringNode:)` does not take as the command's own answer. A caller that
    /// keeps commands in flight on one connection (the worker) treats such a reply as the end of
    /// that connection: it reconnects to the slot's master as the refreshed map names it.
    public static func isRedirectOrRetry(errorText text: String) -> Bool {
        guard let code = text.split(separator: " ", maxSplits: 1).first else { return false }
        return code == "MOVED" || code == "ASK" || retryCodes.contains(code)
    }

    /// `host:port` of a redirect; an empty host is the answering node's.
    private static func endpoint(_ text: String, answeringNode: RedisNode) -> RedisNode? {
        if text.hasPrefix(":"), let port = Int(text.dropFirst()), (1...65535).contains(port) {
            return RedisNode(host: answeringNode.host, port: port)
        }
        return RedisNode(parsing: text) ?? {
            // Redis writes IPv6 endpoints without brackets ("::1:7000"): the port is after the last colon.
            guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
                  (1...65535).contains(port), colon > text.startIndex else { return nil }
            return RedisNode(host: String(text[..<colon]), port: port)
        }()
    }
}
