/// Where each notification field's value is, for one notification: found in a stream entry's
/// fields, in a batch element's members, or (a batch element's missing ones) in the entry-level
/// defaults. Fixed-size, no allocation: the reader fills one per notification.
struct NoteFieldValues {
    /// One field's value as found.
    struct Value {
        /// The bytes in the entry's storage: a stream field's value, or a JSON value as written
        /// (a string with its quotes).
        var range: Range<Int>
        /// A JSON string (its quotes are part of `range`).
        var quoted = false
        /// A JSON string holding an escape: its text must be decoded.
        var escaped = false
    }

    private var values: InlineArray<11, Value?> = .init(repeating: nil)
    /// Fields given more than once (a bit per `NoteField`).
    private(set) var repeated: UInt32 = 0

    init() {}

    subscript(_ field: NoteField) -> Value? {
        get { values[field.rawValue] }
        set { values[field.rawValue] = newValue }
    }

    /// Notes `value` for `field`; a second one marks the field repeated (the first is kept).
    mutating func add(_ field: NoteField, _ value: Value) {
        if values[field.rawValue] != nil { repeated |= 1 << UInt32(field.rawValue) } else { values[field.rawValue] = value }
    }

    /// The first repeated field, if any.
    var firstRepeated: NoteField? {
        NoteField.allCases.first { repeated & (1 << UInt32($0.rawValue)) != 0 }
    }

    /// Fills the fields this one lacks from `defaults` (a batch entry's own fields), but those
    /// of `excluded` (a bit per `NoteField`: a batch element's own, once per element, with no
    /// set to hash nor `allCases` array to make).
    mutating func fill(from defaults: NoteFieldValues, except excluded: UInt32) {
        for i in 0..<values.count where values[i] == nil && excluded & (1 << UInt32(i)) == 0 {
            values[i] = defaults.values[i]
        }
    }

    /// The fields of a stream entry (names it does not know are ignored).
    init(entry: QueueEntry) {
        entry.bytes.withUnsafeBytes { bytes in
            entry.forEachField { name, value in
                if let f = NoteField.named(UnsafeRawBufferPointer(rebasing: bytes[name])) { add(f, Value(range: value)) }
            }
        }
    }
}
