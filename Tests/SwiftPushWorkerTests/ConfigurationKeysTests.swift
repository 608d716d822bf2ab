import PushCore
import Testing

/// The rule every configuration file follows: unknown keys named with their path and the
/// nearest known name; JSON errors with their line and column.
@Suite("ConfigurationKeys")
struct ConfigurationKeysTests {
    @Test("Edit distance: insertions, deletions, substitutions; case and -/_ do not count")
    func editDistance() {
        #expect(ConfigurationKeys.editDistance("max_stream", "max_streams") == 1)
        #expect(ConfigurationKeys.editDistance("max_inflight", "max_in_flight") == 1)
        #expect(ConfigurationKeys.editDistance("pasword_file", "password_file") == 1)
        #expect(ConfigurationKeys.editDistance("Max-Streams", "max_streams") == 0)
        #expect(ConfigurationKeys.editDistance("kitten", "sitting") == 3)
        #expect(ConfigurationKeys.editDistance("", "abc") == 3 && ConfigurationKeys.editDistance("abc", "") == 3)
    }

    @Test("The nearest known name when it is a plausible misspelling, none when nothing is close")
    func nearest() {
        let known = ["max_streams", "max_attempts", "connections", "min_connections"]
        #expect(ConfigurationKeys.nearest(to: "max_stream", in: known) == "max_streams")
        #expect(ConfigurationKeys.nearest(to: "conections", in: known) == "connections")
        #expect(ConfigurationKeys.nearest(to: "colour", in: known) == nil)
    }

    @Test("The message: the first unknown key in sorted order, its path, the suggestion; nil when all are known")
    func message() {
        let known = ["max_streams", "host"]
        #expect(ConfigurationKeys.unknownKey(in: ["host", "max_stream"], known: known, path: ["apps", "demo"])
                == "unknown key apps.demo.max_stream (did you mean max_streams?)")
        #expect(ConfigurationKeys.unknownKey(in: ["zz", "qq"], known: known, path: []) == "unknown key qq")
        #expect(ConfigurationKeys.unknownKey(in: ["host"], known: known, path: []) == nil)
    }

    @Test("A JSON syntax error says its line and column; valid JSON none")
    func syntax() {
        #expect(ConfigurationKeys.syntaxError(in: Array("{\"a\": 1}".utf8)) == nil)
        let text = "{\n  \"a\": 1,\n  \"b\": [1, 2,]\n}"
        let message = ConfigurationKeys.syntaxError(in: Array(text.utf8))
        #expect(message?.hasPrefix("line 3, column 14: ") == true, "\(message ?? "nil")")
        #expect(ConfigurationKeys.location(of: 0, in: Array("x".utf8)) == (1, 1))
        #expect(ConfigurationKeys.location(of: 4, in: Array("ab\ncd".utf8)) == (2, 2))
    }
}
