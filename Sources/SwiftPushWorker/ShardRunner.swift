import SwiftPushRedis
import SwiftPushWorkerMachine
import SwiftPushWorkerRedis

/// One shard as `WorkerDriver` runs it: the shard's machine, its three Redis connections (to the
/// master of its slot on a cluster), the events waiting for the machine, and what tells its
/// notifications' results apart from other shards' (`tagBase`). Owned by the driver's thread.
final class ShardRunner {
    /// Its place in the driver (0, 1, ...): the top byte of its notifications' tags.
    let index: Int
    /// The shard's keys and the wire form of its requests.
    let commands: RedisShardCommands
    /// The shard's slot (every key of a shard shares its hash tag).
    let slot: Int
    var machine: ShardMachine
    /// Reads, claims and the rest; settles (so Redis records outcomes while the other reads).
    let main: RedisLane
    let settle: RedisLane
    /// The fast lane's read, waiting for its next entry, and that entry's claim
    /// (`WorkerAction.Lane.fast`).
    let fast: RedisLane
    /// Every connection, for polling and closing.
    let lanes: [RedisLane]
    /// Events for the machine, handled in order before the driver waits again.
    var pending: [WorkerEvent] = [.tick]
    /// The machine said it stopped (`.stopped`).
    var finished = false
    var nextHeartbeatNanos: UInt64 = 0

    /// Tags carry the runner's index in their top byte, so that results taken from a client
    /// shared by every shard go back to the machine that sent them; a machine's own tags
    /// (`HeldEntry.tag`: serial and position) stay below it.
    static let tagShift: UInt64 = 56

    init(index: Int, commands: RedisShardCommands, machine: ShardMachine, wait: RedisWait?) {
        self.index = index
        self.commands = commands
        slot = RedisSlot.of(commands.keys.stream)
        self.machine = machine
        main = RedisLane(commands: commands, wait: wait)
        settle = RedisLane(commands: commands, wait: wait)
        fast = RedisLane(commands: commands, wait: wait)
        lanes = [main, settle, fast]
    }

    /// The connection of `lane`.
    func lane(_ lane: WorkerAction.Lane) -> RedisLane {
        switch lane {
        case .main: main
        case .settle: settle
        case .fast: fast
        }
    }

    /// What the runner adds to each of its machine's tags.
    var tagBase: UInt64 { UInt64(index) << Self.tagShift }

    /// The runner a client's result `tag` belongs to, and the machine's own tag.
    static func split(_ tag: UInt64) -> (runner: Int, tag: UInt64) {
        (Int(tag >> tagShift), tag & ((1 << tagShift) - 1))
    }

    /// Every connection closed (and every request on them forgotten).
    func closeLanes() {
        for l in lanes { l.close() }
    }
}
