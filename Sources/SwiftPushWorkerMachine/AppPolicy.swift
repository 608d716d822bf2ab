/// What a credential set allows, as far as checking an entry goes.
public struct AppPolicy: Sendable, Equatable {
    /// Topics entries of this app may use; empty: any. The first is the default topic.
    public var topics: [String] { didSet { topicBytes = topics.map { Array($0.utf8) } } }
    /// `topics` as bytes, made once: every entry is checked against them, and making a String
    /// (or the default topic's bytes) per entry was an allocation on the worker's hot path.
    private(set) var topicBytes: [[UInt8]]

    /// A policy allowing `topics` (empty: any topic, and entries must name one).
    public init(topics: [String]) {
        self.topics = topics
        topicBytes = topics.map { Array($0.utf8) }
    }
}
