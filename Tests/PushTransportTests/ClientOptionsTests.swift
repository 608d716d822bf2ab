import Testing
import PushCore
@testable import PushClientCore

/// `ClientConfiguration.set` and `PushOption` (generated from Tables/options.tsv): the defaults,
/// the range checks and their messages, the clamps, and a .p12 whose password may come before
/// or after it.
@Suite(.timeLimit(.minutes(5)))
struct ClientOptionsTests {
    let support = ClientTestSupport()

    @Test("Every int option's default is the configuration's default, and lies in its range")
    func defaultsComeFromTheTable() {
        let c = ClientConfiguration()
        var checked = 0
        for option in PushOption.allCases where option.kind == .int {
            guard let field = option.field else {
                #expect(option == .environment, "\(option.cName) sets no field: only the environment may")
                continue
            }
            #expect(Int64(c[keyPath: field]) == option.defaultValue, "\(option.cName)")
            #expect(option.range!.contains(option.defaultValue!), "\(option.cName)")
            checked += 1
        }
        #expect(checked == 16)
        #expect(PushOption.allCases.filter { $0.kind == .string }.allSatisfy { $0.range == nil && $0.field == nil })
    }

    @Test("An int option is stored within its range and refused outside it, naming the range")
    func intRanges() throws {
        var c = ClientConfiguration()
        for option in PushOption.allCases where option.kind == .int && option.field != nil {
            let range = option.range!
            try c.set(option, int: range.upperBound)
            #expect(Int64(c[keyPath: option.field!]) == range.upperBound)
            let error = #expect(throws: ClientError.self) { try c.set(option, int: range.lowerBound - 1) }
            #expect(error?.status == .badOption)
            #expect(error?.description == "\(option.label) must be in \(range.lowerBound)...\(range.upperBound), got \(range.lowerBound - 1)")
            #expect(Int64(c[keyPath: option.field!]) == range.upperBound, "a refused value leaves the option as it was")
        }
        try c.set(.environment, int: 1)
        #expect(c.endpoint.host == "api.sandbox.push.apple.com")
        #expect(throws: ClientError.self) { try c.set(.environment, int: 2) }
        #expect(throws: ClientError.self) { try c.set(.host, int: 1) }
        #expect(throws: ClientError.self) { try c.set(.port, string: UnsafeRawBufferPointer(start: nil, count: 0)) }
    }

    @Test("Values assigned directly are clamped into the option's range")
    func clamps() {
        #expect(PushOption.connections.clamped(0) == 1)
        #expect(PushOption.connections.clamped(1000) == 64)
        #expect(PushOption.queueCapacity.clamped(1) == 16)
        #expect(PushOption.ioThreads.clamped(99) == 16)
        #expect(PushOption.maxStreams.clamped(500) == 500)
    }

    @Test("A .p12 opens with its password whichever was set first; a wrong one fails at open")
    func p12InEitherOrder() throws {
        let path = support.pki + "/client.p12"
        func configured(password: String, passwordFirst: Bool) throws -> ClientConfiguration {
            var c = ClientConfiguration()
            if passwordFirst { try set(&c, .p12Password, password) }
            try set(&c, .p12File, path)
            if !passwordFirst { try set(&c, .p12Password, password) }
            return c
        }
        for passwordFirst in [true, false] {
            let resolved = try configured(password: "secret", passwordFirst: passwordFirst).resolvingCredentials()
            #expect(resolved.credentials.clientCertificate != nil && resolved.credentials.p12File == nil && resolved.credentials.p12Password == nil)
            let error = #expect(throws: ClientError.self) {
                try configured(password: "wrong", passwordFirst: passwordFirst).resolvingCredentials()
            }
            #expect(error?.status == .key)
            #expect(error?.description.hasPrefix(path + ": ") == true && error?.description.contains("wrong password") == true)
        }
        // Not a PKCS#12 at all: refused where it was given.
        var c = ClientConfiguration()
        let notP12 = support.pki + "/ca.pem"
        let error = #expect(throws: ClientError.self) {
            try set(&c, .p12File, notP12)
        }
        #expect(error?.description.contains("PKCS#12") == true)
    }

    /// Sets a string option from a Swift string, as push_config_set_string does from C.
    func set(_ c: inout ClientConfiguration, _ option: PushOption, _ text: String) throws {
        try Array(text.utf8).withUnsafeBytes { try c.set(option, string: $0) }
    }
}
