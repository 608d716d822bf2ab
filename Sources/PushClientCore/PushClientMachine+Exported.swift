/// The machine's public values (`ClientMetrics`, `ClientCounters`, `LogLevel`, `LogCallback`)
/// were this module's before the machine became a target of its own (issue 34), and are the
/// client's API: a module importing the client sees them without naming the machine.
@_exported import PushClientMachine
