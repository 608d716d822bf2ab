/// The machine (`ShardMachine`, `WorkerEvent`, `WorkerAction`, the queue's requests and replies,
/// the outcome records) and the Redis wire format (`RedisShardCommands`, `RedisStreamQueue`)
/// were this module's before each became a target of its own (issue 34): a module importing the
/// worker sees them without naming those targets.
@_exported import SwiftPushWorkerMachine
@_exported import SwiftPushWorkerRedis
