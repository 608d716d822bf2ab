/// Notifications ended, counted by (outcome, reason) without allocating: a fixed table with a
/// row per outcome and a column per reason code, plus the list of cells touched since the last
/// drain, so merging the I/O thread's counts into the shared ones at each publish costs a few
/// additions (usually one cell: accepted), not a pass over the table.
package struct OutcomeCounts {
    /// Reason codes run from 0 to 40 today; PUSH_REASON_UNKNOWN (1000) and any code past the
    /// table share the last column.
    package static let reasonColumns = 64
    package static let cells = 3 * reasonColumns
    private var counts = [UInt64](repeating: 0, count: OutcomeCounts.cells)
    private var touched: [Int] = []

    package init() { touched.reserveCapacity(Self.cells) }

    private static func cell(outcome: Int32, reason: Int32) -> Int? {
        guard (1...3).contains(outcome) else { return nil }
        let column = reason >= 0 && reason < Int32(reasonColumns - 1) ? Int(reason) : reasonColumns - 1
        return Int(outcome - 1) * reasonColumns + column
    }

    /// Counts one notification.
    package mutating func record(outcome: Int32, reason: Int32) {
        guard let c = Self.cell(outcome: outcome, reason: reason) else { return }
        if counts[c] == 0 { touched.append(c) }
        counts[c] &+= 1
    }

    /// Adds `other`'s counts into these and zeroes `other` (only the cells it touched).
    package mutating func drain(_ other: inout OutcomeCounts) {
        for c in other.touched {
            counts[c] &+= other.counts[c]
            other.counts[c] = 0
        }
        other.touched.removeAll(keepingCapacity: true)
    }

    /// The non-zero counts by (outcome, reason); the shared last column reads as PUSH_REASON_UNKNOWN.
    package func byKey() -> [ClientMetrics.OutcomeKey: UInt64] {
        var out: [ClientMetrics.OutcomeKey: UInt64] = [:]
        for c in 0..<Self.cells where counts[c] > 0 {
            let column = c % Self.reasonColumns
            let reason = column == Self.reasonColumns - 1 ? Int32(1000) : Int32(column)
            out[ClientMetrics.OutcomeKey(outcome: Int32(c / Self.reasonColumns + 1), reason: reason)] = counts[c]
        }
        return out
    }
}
