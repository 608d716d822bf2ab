extension Array where Element == UInt8 {
    /// `withUnsafeBytes` for a body with a typed error (the standard library's rethrows an
    /// untyped one).
    func withBytes<E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> Void) throws(E) {
        var failure: E?
        withUnsafeBytes { bytes in
            do throws(E) {
                try body(bytes)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }
}
