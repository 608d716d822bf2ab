/// One thing nghttp2 reported on a connection while it read or wrote: a stream's end, the
/// server's SETTINGS, a GOAWAY, a PING's acknowledgement. Inside nghttp2's callbacks a
/// connection only writes the answer into its slot and records a fact (`ConnectionInput`);
/// what the facts mean is decided after nghttp2 has returned, in the order they happened.
///
/// Plain values (no references), so recording one costs a few stores.
@usableFromInline package struct ConnectionFact: Equatable, Sendable {
    /// What happened.
    @usableFromInline package enum Kind: UInt8, Sendable {
        /// A stream closed: answered (its answer is in the slot), refused or reset.
        case streamClosed
        /// A SETTINGS frame (not an ACK); `code` is the server's MAX_CONCURRENT_STREAMS now in force.
        case settings
        /// A GOAWAY; `streamID` is its last-stream-id, `code` its error code (the debug data is
        /// in `ConnectionInput.goawayReasons`, one per GOAWAY, in order).
        case goaway
        /// The acknowledgement of our PING.
        case pingAcknowledged
    }

    @usableFromInline package var kind: Kind
    /// The closed stream's slot index (`.streamClosed`).
    @usableFromInline package var slot: Int32 = -1
    /// The closed stream's id (`.streamClosed`), or the GOAWAY's last-stream-id.
    @usableFromInline package var streamID: Int32 = 0
    /// The stream's or GOAWAY's error code, or the SETTINGS' MAX_CONCURRENT_STREAMS.
    @usableFromInline package var code: UInt32 = 0

    /// A fact of `kind` (the static constructors below name what each kind carries).
    @inlinable package init(kind: Kind, slot: Int32 = -1, streamID: Int32 = 0, code: UInt32 = 0) {
        self.kind = kind
        self.slot = slot
        self.streamID = streamID
        self.code = code
    }

    /// A stream closed (`errorCode` 0: normally).
    @inlinable package static func streamClosed(slot: Int32, streamID: Int32, errorCode: UInt32) -> Self {
        Self(kind: .streamClosed, slot: slot, streamID: streamID, code: errorCode)
    }

    /// The server's SETTINGS, with its MAX_CONCURRENT_STREAMS.
    @inlinable package static func settings(maxConcurrentStreams: UInt32) -> Self { Self(kind: .settings, code: maxConcurrentStreams) }

    /// A GOAWAY.
    package static func goaway(lastStreamID: Int32, errorCode: UInt32) -> Self {
        Self(kind: .goaway, streamID: lastStreamID, code: errorCode)
    }

    /// Our PING was acknowledged.
    package static let pingAcknowledged = Self(kind: .pingAcknowledged)
}
