import ArgumentParser
import CSwiftPushABI
import PushClientCore
import SwiftPushKit

extension ConnectionOptions {
    /// The configuration the flags say, made and checked by the one builder every host uses
    /// (`APNsConfiguration(options:naming:)`): key files are read and checked, the CA file must
    /// be readable, one kind of credentials; the .p12 password from wherever it is given
    /// (`P12PasswordSource`). A mistake is a usage error naming the flag.
    func configuration(adding extra: APNsOptionValues = APNsOptionValues()) throws(ValidationError) -> APNsConfiguration {
        var values = extra
        add(to: &values)
        if let password = try passwordSource.password(given: password) { values.text[.p12Password] = password }
        do throws(PushError) {
            return try APNsConfiguration(options: values, naming: flagName)
        } catch {
            throw ValidationError(error.message)
        }
    }

    /// The flag as given: --sandbox or --production for the environment.
    private func flagName(_ option: PushOption) -> String {
        option == .environment ? (sandbox ? "--sandbox" : "--production") : Self.flag(for: option)
    }
}

extension ConnectionOptions {
    /// Whether no connection flag was given.
    var isEmpty: Bool {
        var values = APNsOptionValues()
        add(to: &values)
        return values.text.isEmpty && values.numbers.isEmpty
    }
}
