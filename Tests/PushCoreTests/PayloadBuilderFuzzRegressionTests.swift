import PushCore
import Testing

/// Inputs the `payload` fuzz harness (Tests/fuzz) fails on without the fix:
/// the builder's output must always be JSON that JSON.validate (and so push_client_send)
/// accepts, or build must say why not.
@Suite("PayloadBuilder fuzz regressions", .timeLimit(.minutes(1)))
struct PayloadBuilderFuzzRegressionTests {
    /// `{"a":{"a":...1...}}`, `levels` objects deep.
    private func nested(_ levels: Int) -> String {
        String(repeating: #"{"a":"#, count: levels) + "1" + String(repeating: "}", count: levels)
    }

    /// A raw value is checked alone, where it nests two levels less deeply than inside
    /// `{"aps":{"content-state":...}}`: one JSON.maxDepth deep was accepted by its setter and
    /// built into a payload that JSON.validate refuses ("JSON nested too deeply"), which
    /// push_client_send would then refuse too. Corpus: Tests/fuzz/corpus/payload/regression-deep-content-state.
    @Test("A content-state that nests too deeply once inside aps makes build fail with .badPayload")
    func deepContentState() throws {
        var b = PayloadBuilder()
        let value = Array(nested(JSON.maxDepth - 1).utf8)
        try value.withUnsafeBytes { try b.set(.contentState, json: $0) }
        #expect(throws: PayloadBuilder.Failure.self) { try b.build() }
        do {
            _ = try b.build()
        } catch {
            #expect(error.status == .badPayload)
            #expect(error.message.contains("nested too deeply"))
        }
    }

    @Test("A custom value one level too deep for the payload makes build fail; one level less builds valid JSON")
    func deepCustomValue() throws {
        var tooDeep = PayloadBuilder()
        try tooDeep.addCustom(key: "x", value: PayloadBuilder.RawJSON(nested(JSON.maxDepth)))
        #expect(throws: PayloadBuilder.Failure.self) { try tooDeep.build() }

        var deepest = PayloadBuilder()
        try deepest.addCustom(key: "x", value: PayloadBuilder.RawJSON(nested(JSON.maxDepth - 1)))
        let out = try deepest.build()
        #expect(out.withUnsafeBytes { JSON.validate($0) } == nil)
    }
}
