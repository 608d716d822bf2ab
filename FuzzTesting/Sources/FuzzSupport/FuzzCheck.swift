/// Stops the process with `message` when a property does not hold: libFuzzer reports the trap
/// as a crash and saves the input, so a broken property is found like a crash is.
public func fuzzRequire(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
                        file: StaticString = #fileID, line: UInt = #line) {
    if !condition() { fatalError("fuzz property violated: \(message())", file: file, line: line) }
}

/// The bytes of `b` as text for a failure message (invalid UTF-8 shown as U+FFFD).
public func show(_ b: some Collection<UInt8>) -> String {
    let text = String(decoding: Array(b.prefix(200)), as: UTF8.self)
    return b.count > 200 ? "\(text.debugDescription)... (\(b.count) bytes)" : text.debugDescription
}
