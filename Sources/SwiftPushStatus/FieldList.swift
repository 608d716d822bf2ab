import SwiftPushRedis

/// A flat `name value name value ...` array reply (XINFO's, HGETALL's, a stream entry's),
/// looked up by name.
struct FieldList {
    /// The pairs in the order Redis gave them.
    let pairs: [(String, RedisReply)]

    /// The pairs of `reply` (an array of even length; anything else holds none).
    init(_ reply: RedisReply) {
        let items = reply.elements
        var pairs: [(String, RedisReply)] = []
        var i = 0
        while i + 1 < items.count {
            if let name = items[i].text { pairs.append((name, items[i + 1])) }
            i += 2
        }
        self.pairs = pairs
    }

    /// The value named `name`, if any.
    func value(_ name: String) -> RedisReply? { pairs.first { $0.0 == name }?.1 }

    /// The value named `name` as text.
    func text(_ name: String) -> String? { value(name)?.text }

    /// The value named `name` as an integer (an integer reply or decimal text); nil for a nil
    /// reply or anything else.
    func integer(_ name: String) -> Int? { value(name)?.integer.map { Int($0) } }

    /// Every pair whose value is text.
    var texts: [(String, String)] { pairs.compactMap { name, value in value.text.map { (name, $0) } } }
}
