/// Helpers that hand test strings and byte arrays to the library's `UnsafeRawBufferPointer` APIs.

/// The UTF-8 bytes of `text`.
func utf8(_ text: String) -> [UInt8] { Array(text.utf8) }

/// Runs `body` over the UTF-8 bytes of `text`.
func withBytes<R>(_ text: String, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    try Array(text.utf8).withUnsafeBytes(body)
}

/// Runs `body` over `bytes`.
func withBytes<R>(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    try bytes.withUnsafeBytes(body)
}

/// `count` random bytes.
func randomBytes(_ count: Int) -> [UInt8] {
    var g = SystemRandomNumberGenerator()
    return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &g) }
}
