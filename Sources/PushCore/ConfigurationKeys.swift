/// The rules every JSON configuration file of the project follows (worker.json, its `"redis"`
/// object, `--redis-config`): an unknown key is an error naming where it is and the known key
/// it was probably meant to be, and a file that is not JSON says at which line and column.
///
/// Why refuse unknown keys: a misspelt key (`max_stream` for `max_streams`, `pasword_file`)
/// would otherwise be ignored, and the program would run with a setting other than the one
/// its operator wrote, silently.
public enum ConfigurationKeys {
    /// A message for the first key of `keys` (in sorted order, so that the message does not
    /// depend on the decoder's order) that `known` does not hold, or nil when every key is
    /// known: `unknown key apps.demo.max_stream (did you mean max_streams?)`. `path` names the
    /// object holding the keys (`["apps", "demo"]`; empty at the top level).
    public static func unknownKey(in keys: [String], known: [String], path: [String]) -> String? {
        let knownSet = Set(known)
        guard let unknown = keys.filter({ !knownSet.contains($0) }).sorted().first else { return nil }
        var message = "unknown key " + (path + [unknown]).joined(separator: ".")
        if let suggestion = nearest(to: unknown, in: known) { message += " (did you mean \(suggestion)?)" }
        return message
    }

    /// The known name closest to `name` by edit distance, if it is close enough to be a
    /// plausible misspelling: at most a third of the name's length (and at least 2) edits
    /// away. Of equally close names, the first in `known`.
    public static func nearest(to name: String, in known: [String]) -> String? {
        let limit = max(2, name.count / 3)
        var best: (name: String, distance: Int)?
        for candidate in known {
            let d = editDistance(name, candidate)
            if d <= limit, d < (best?.distance ?? Int.max) { best = (candidate, d) }
        }
        return best?.name
    }

    /// The Levenshtein distance between `a` and `b` (insertions, deletions, substitutions of
    /// one character), compared case-insensitively, with `-` and `_` the same character:
    /// `Max-Streams` is one edit from `max_stream`.
    public static func editDistance(_ a: String, _ b: String) -> Int {
        func normalized(_ s: String) -> [Character] { s.lowercased().map { $0 == "-" ? "_" : $0 } }
        let x = normalized(a), y = normalized(b)
        if x.isEmpty { return y.count }
        if y.isEmpty { return x.count }
        var previous = Array(0...y.count)
        var current = [Int](repeating: 0, count: y.count + 1)
        for i in 1...x.count {
            current[0] = i
            for j in 1...y.count {
                let substitution = previous[j - 1] + (x[i - 1] == y[j - 1] ? 0 : 1)
                current[j] = min(substitution, previous[j] + 1, current[j - 1] + 1)
            }
            swap(&previous, &current)
        }
        return previous[y.count]
    }

    /// Where `bytes` stop being one JSON value, as `line L, column C: what` (lines and columns
    /// from 1, columns in bytes), or nil when they are valid JSON. Checked before any decoder
    /// runs, so that a file with a stray comma says where, whatever Foundation's decoder says.
    public static func syntaxError(in bytes: [UInt8]) -> String? {
        guard let failure = bytes.withUnsafeBytes({ JSON.validate($0) }) else { return nil }
        let (line, column) = location(of: failure.offset, in: bytes)
        return "line \(line), column \(column): \(failure.message)"
    }

    /// The line and column (from 1) of byte `offset` in `bytes`.
    public static func location(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
        var line = 1, column = 1
        for b in bytes.prefix(max(0, min(offset, bytes.count))) {
            if b == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else {
                column += 1
            }
        }
        return (line, column)
    }
}
