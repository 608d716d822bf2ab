extension CampaignControl {
    /// The Lua text that reads every control of a shard at once: the names in
    /// `campaigns:{s}`, and each one's `campaign:{s}:<name>` hash. KEYS: the set. ARGV: the
    /// hashes' prefix. Returns {name, {field, value, ...}, name, ...}. The worker runs it as
    /// `RedisCampaignScripts.controls`; readers outside the worker (`swiftpush status`) `EVAL`
    /// it with the keys `campaigns:{s}` and the argument `campaign:{s}:`, and read the reply
    /// with `all(from:elements:text:)`.
    public static let readAllScript = """
    local names = redis.call('SMEMBERS', KEYS[1])
    local out = {}
    for _, n in ipairs(names) do
      out[#out+1] = n
      out[#out+1] = redis.call('HGETALL', ARGV[1] .. n)
    end
    return out
    """

    /// The controls of a `RedisCampaignScripts.controls` reply ({name, {field, value, ...},
    /// ...}); a name whose hash is gone (empty) is left out: it has no control. The reply is
    /// read through `elements` and `text` (`RedisReply`'s: `all(from: reply, elements: \.elements,
    /// text: \.text)`), so that this module of names and values does not depend on the Redis
    /// client and the worker's pure machine may use it (issue 34).
    public static func all<Reply>(from reply: Reply, elements: (Reply) -> [Reply], text: (Reply) -> String?) -> [String: CampaignControl] {
        let flat = elements(reply)
        var out: [String: CampaignControl] = [:]
        var i = 0
        while i + 1 < flat.count {
            defer { i += 2 }
            guard let name = text(flat[i]) else { continue }
            let f = elements(flat[i + 1])
            if f.isEmpty { continue }
            var fields: [(String, String)] = []
            var k = 0
            while k + 1 < f.count {
                fields.append((text(f[k]) ?? "", text(f[k + 1]) ?? ""))
                k += 2
            }
            out[name] = CampaignControl(fields: fields)
        }
        return out
    }
}
