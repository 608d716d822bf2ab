import PushCore
import PushClientCore

extension APNsConfiguration {
    /// The client's configuration, every value set through the C ABI's setters
    /// (`ClientConfiguration.set`), so both APIs take the same checks and give the same
    /// messages.
    package func clientConfiguration() throws(PushError) -> ClientConfiguration {
        var c = ClientConfiguration()
        try c.setOption(.host, text: environment.host)
        try c.setOption(.port, int: environment.port, named: "environment.port")
        if let caFile { try c.setOption(.caFile, text: caFile) }
        try credentials.apply(to: &c)
        if let defaultTopic { try c.setOption(.defaultTopic, text: defaultTopic) }
        if let proxy { try proxy.apply(to: &c) }
        try pool.apply(to: &c)
        try timing.apply(to: &c)
        try recovery.apply(to: &c)
        return c
    }
}

extension ClientConfiguration {
    /// Sets an int option, naming the Swift property in the error.
    mutating func setOption(_ option: PushOption, int value: Int, named name: String) throws(PushError) {
        guard let range = option.range, range.contains(Int64(value)) else {
            throw PushError(.badOption, "\(name) must be in \(option.intRange.lowerBound)...\(option.intRange.upperBound), got \(value)")
        }
        try setOption(option, int: Int64(value))
    }

    /// Sets a milliseconds option from a duration (whole milliseconds: a remainder is dropped),
    /// naming the Swift property in the error.
    mutating func setOption(_ option: PushOption, milliseconds value: Duration, named name: String) throws(PushError) {
        let millis = value / .milliseconds(1)
        guard let range = option.range, millis >= Double(range.lowerBound), millis < Double(range.upperBound) + 1 else {
            throw PushError(.badOption, "\(name) must be in \(option.intRange.lowerBound)...\(option.intRange.upperBound) ms, got \(value)")
        }
        try setOption(option, int: Int64(millis))
    }

    /// Sets an int option as the C ABI does.
    private mutating func setOption(_ option: PushOption, int value: Int64) throws(PushError) {
        do throws(ClientError) {
            try set(option, int: value)
        } catch {
            throw PushError(error)
        }
    }


    /// Sets a string option from text, as the C ABI does.
    mutating func setOption(_ option: PushOption, text: String) throws(PushError) {
        try Array(text.utf8).withBytes { (bytes) throws(PushError) in try setOption(option, bytes: bytes) }
    }

    /// Sets a string option from bytes, as the C ABI does (secrets never pass through a String).
    mutating func setOption(_ option: PushOption, bytes: UnsafeRawBufferPointer) throws(PushError) {
        guard bytes.count <= option.maxValueBytes else { throw PushError(option.valueTooLong) }
        do throws(ClientError) {
            try set(option, string: bytes)
        } catch {
            throw PushError(error)
        }
    }
}
