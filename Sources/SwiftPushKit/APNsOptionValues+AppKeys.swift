import CSwiftPushABI
import PushClientCore

extension APNsOptionValues {
    /// The table's keys of an app in a configuration file (`appKeys`, generated from
    /// `Tables/options.tsv`), read from the app's JSON object: each key present, typed by its
    /// option — a number for an int option, "production" or "sandbox" for `environment`, a
    /// string for the rest. Other keys (the worker's `topics`) are the host's to read. A value
    /// of the wrong type throws `DecodingError.typeMismatch` at its key; an environment that is
    /// neither name `DecodingError.dataCorrupted` saying so.
    package init(appKeysFrom decoder: any Decoder) throws {
        self.init()
        let c = try decoder.container(keyedBy: AppKey.self)
        for (name, option) in Self.appKeys {
            let key = AppKey(stringValue: name)
            if option == .environment {
                guard let text = try c.decodeIfPresent(String.self, forKey: key) else { continue }
                switch text {
                case "production": numbers[option] = Int(PUSH_ENV_PRODUCTION.rawValue)
                case "sandbox": numbers[option] = Int(PUSH_ENV_SANDBOX.rawValue)
                default:
                    throw DecodingError.dataCorruptedError(forKey: key, in: c,
                                                           debugDescription: "\(name) must be \"production\" or \"sandbox\"")
                }
            } else if option.kind == .int {
                if let n = try c.decodeIfPresent(Int.self, forKey: key) { numbers[option] = n }
            } else if let s = try c.decodeIfPresent(String.self, forKey: key) {
                text[option] = s
            }
        }
    }

    /// The app's configuration (`APNsConfiguration(options:naming:)`), its messages naming the
    /// app's keys ("missing key_id"); the caller adds which app.
    package func appConfiguration() throws(PushError) -> APNsConfiguration {
        try APNsConfiguration(options: self, naming: Self.appKey(for:))
    }

    /// A key of an app's JSON object.
    private struct AppKey: CodingKey {
        let stringValue: String
        init(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }
}
