import SwiftPushWorkerMachine

extension WorkerConfiguration {
    /// A number of the configuration file's top level: its key, the property it sets, and the
    /// values it may take. The default is that property's initial value (`MachineSettings`,
    /// `ResultPolicy` or `WorkerConfiguration`): written once, never beside the key.
    struct NumberKey {
        /// The key in the file (`max_in_flight`).
        let key: String
        /// The property it sets.
        let path: WritableKeyPath<WorkerConfiguration, Int>
        /// The values `check()` lets through.
        let rule: NumberRule
    }

    /// Every number key of the top level, in the order `check()` tests them: the decoder reads
    /// these, `check()` applies their rules, `knownKeys` lists them. One row per setting, so
    /// that a setting cannot be decoded but not checked, or documented but not known.
    static var numberKeys: [NumberKey] {
        [NumberKey(key: "max_in_flight", path: \.machineSettings.maxInFlight, rule: .within(1...1_000_000)),
         NumberKey(key: "batch", path: \.machineSettings.batch, rule: .within(1...10_000)),
         NumberKey(key: "deadline_ms", path: \.deadlineMillis, rule: .atLeast(100)),
         NumberKey(key: "max_deliveries", path: \.machineSettings.maxDeliveries, rule: .atLeast(1)),
         NumberKey(key: "max_sends", path: \.machineSettings.policy.maxSends, rule: .atLeast(1)),
         NumberKey(key: "outcome_format", path: \.machineSettings.outcomeFormat, rule: .oneOf([1, 2, 3])),
         NumberKey(key: "reclaim_interval_ms", path: \.machineSettings.reclaimIntervalMillis, rule: .any),
         NumberKey(key: "drain_ms", path: \.machineSettings.drainMillis, rule: .any),
         NumberKey(key: "delayed_retry_ms", path: \.machineSettings.policy.delayedRetryMillis, rule: .any),
         NumberKey(key: "max_delayed_retries", path: \.machineSettings.policy.maxDelayedRetries, rule: .any),
         NumberKey(key: "guard_ttl_s", path: \.guardTTLSeconds, rule: .any),
         NumberKey(key: "fast_reserve", path: \.machineSettings.fastReserve, rule: .atLeast(0))]
    }
}

/// The values a number setting may take; its description ends the message of a value outside
/// them (`max_in_flight must be 1...1000000`).
enum NumberRule: CustomStringConvertible {
    /// Any integer.
    case any
    /// At least this.
    case atLeast(Int)
    /// In this range.
    case within(ClosedRange<Int>)
    /// One of these.
    case oneOf([Int])

    /// Whether `value` is allowed.
    func allows(_ value: Int) -> Bool {
        switch self {
        case .any: true
        case .atLeast(let least): value >= least
        case .within(let range): range.contains(value)
        case .oneOf(let values): values.contains(value)
        }
    }

    /// "at least 100", "1...10000", "1, 2 or 3".
    var description: String {
        switch self {
        case .any: "an integer"
        case .atLeast(let least): "at least \(least)"
        case .within(let range): "\(range.lowerBound)...\(range.upperBound)"
        case .oneOf(let values): values.dropLast().map(String.init).joined(separator: ", ") + " or " + String(values.last ?? 0)
        }
    }
}
