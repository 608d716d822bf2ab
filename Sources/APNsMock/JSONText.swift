/// Writing JSON text (RFC 8259) for the control interface and GOAWAY debug data: quoted
/// strings, and a small builder. Reading uses `PushCore.JSON`.
enum JSONText {
    /// `s` as a JSON string literal, quotes included, with the characters RFC 8259 §7 requires
    /// escaped.
    static func quoted(_ s: String) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "\"")]
        out.reserveCapacity(s.utf8.count + 2)
        for c in s.utf8 {
            switch c {
            case UInt8(ascii: "\""): out += [0x5C, 0x22]
            case UInt8(ascii: "\\"): out += [0x5C, 0x5C]
            case 0x0A: out += [0x5C, UInt8(ascii: "n")]
            case 0x0D: out += [0x5C, UInt8(ascii: "r")]
            case 0x09: out += [0x5C, UInt8(ascii: "t")]
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(c >> 4)], hex[Int(c & 0xF)]]
            default: out.append(c)
            }
        }
        out.append(UInt8(ascii: "\""))
        return out
    }

    /// Builds one JSON object: `{"a":1,"b":"x"}`.
    struct Object {
        private(set) var bytes: [UInt8] = [UInt8(ascii: "{")]

        private mutating func key(_ k: String) {
            if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
            bytes += JSONText.quoted(k)
            bytes.append(UInt8(ascii: ":"))
        }

        /// Adds a member whose value is already JSON text.
        mutating func raw(_ k: String, _ json: [UInt8]) {
            key(k)
            bytes += json
        }

        mutating func int(_ k: String, _ v: Int) { raw(k, Array(String(v).utf8)) }
        mutating func int(_ k: String, _ v: Int?) { raw(k, Array((v.map { String($0) } ?? "null").utf8)) }
        mutating func double(_ k: String, _ v: Double) { raw(k, Array((v.isFinite ? "\(v)" : "0").utf8)) }
        mutating func bool(_ k: String, _ v: Bool) { raw(k, Array((v ? "true" : "false").utf8)) }
        mutating func string(_ k: String, _ v: String) { raw(k, JSONText.quoted(v)) }

        /// The object's text, closed.
        var text: [UInt8] { bytes + [UInt8(ascii: "}")] }
    }

    /// `[ "a", "b" ]` from strings.
    static func array(_ items: [String]) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "[")]
        for (i, s) in items.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out += quoted(s)
        }
        out.append(UInt8(ascii: "]"))
        return out
    }
}
