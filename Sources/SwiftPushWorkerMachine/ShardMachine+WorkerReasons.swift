extension ShardMachine {
    /// The outcome of notification `index` of `h` for a reason the worker decides: its kind is
    /// the reason's (`Tables/worker_reasons.tsv`), so a DeadLetter cannot be recorded REJECTED.
    func outcome(_ h: HeldEntry, _ index: Int, _ reason: WorkerReason, detail: String) -> OutcomeRecord {
        outcome(h, index, kind: reason.kind, reason: reason.rawValue, detail: detail)
    }

    /// The outcome every notification of `h` shares, for a reason the worker decides.
    func outcome(_ h: HeldEntry, _ reason: WorkerReason, detail: String) -> OutcomeRecord {
        outcome(h, kind: reason.kind, reason: reason.rawValue, detail: detail)
    }
}
