import SwiftPushWorkerMachine

extension APNsIDNamer {
    /// The worker's names: version-5 UUIDs of the notification id (and a multicast's "/" and
    /// token) in the notification namespace (`NameBasedUUID`), the same on every resend.
    public static let nameBased = APNsIDNamer(single: { NameBasedUUID.id(of: $0) },
                                              multicast: { NameBasedUUID.id(of: $0, token: $1) })
}

extension EntryReader {
    /// A reader routing to `apps`, naming notifications as the worker does (`APNsIDNamer.nameBased`).
    public init(apps: [String: AppPolicy]) { self.init(apps: apps, namer: .nameBased) }
}

extension ShardMachine {
    /// A machine for one shard, with `apps`' policies, naming notifications as the worker does
    /// (`APNsIDNamer.nameBased`), not connected yet: give it `tick` to start. `seed` drives the
    /// back-off's jitter.
    public init(settings: MachineSettings, apps: [String: AppPolicy], seed: UInt64 = 0x5eed) {
        self.init(settings: settings, apps: apps, namer: .nameBased, seed: seed)
    }
}
