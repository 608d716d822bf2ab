extension ClientCore {
    /// What the machine reads of a client's configuration, as plain values: the driver's
    /// `ClientConfiguration` also holds credentials, a resolver and callbacks, which live in
    /// targets this one must not depend on (OpenSSL, the transport). Grouped and named as in
    /// `ClientConfiguration`, so that `configuration.pool.connections` reads the same in both.
    package struct Settings {
        /// Where connections go (the log names it; the resolver is asked for it).
        package var endpoint: Endpoint
        /// The pool's size and the streams per connection.
        package var pool: Pool
        /// Connect timeouts and health PINGs.
        package var timing: Timing
        /// Retiring bad connections and failing fast.
        package var recovery: Recovery
        /// Report the first start of each notification's request, one tag per run of tags equal
        /// above this many low bits (`ClientConfiguration.startedTagShift`; nil: no report).
        package var startedTagShift: Int?

        /// The settings, group by group.
        package init(endpoint: Endpoint, pool: Pool, timing: Timing, recovery: Recovery, startedTagShift: Int?) {
            self.endpoint = endpoint
            self.pool = pool
            self.timing = timing
            self.recovery = recovery
            self.startedTagShift = startedTagShift
        }

        /// Where connections go.
        package struct Endpoint {
            /// APNs host name.
            package var host: String
            /// TCP port.
            package var port: Int
            /// HTTP CONNECT proxy, resolved instead of `host` when set.
            package var proxy: (host: String, port: Int)?
            /// The endpoint.
            package init(host: String, port: Int, proxy: (host: String, port: Int)?) {
                self.host = host
                self.port = port
                self.proxy = proxy
            }
        }

        /// The pool's size.
        package struct Pool {
            /// Positions in the pool.
            package var connections: Int
            /// A self-sizing pool's smallest size (0: a fixed pool).
            package var minConnections: Int
            /// How long demand must stay low before a self-sized pool shrinks.
            package var shrinkWindowMillis: Int
            /// Our cap on concurrent streams per connection.
            package var maxStreamsPerConnection: Int
            /// The pool's settings.
            package init(connections: Int, minConnections: Int, shrinkWindowMillis: Int, maxStreamsPerConnection: Int) {
                self.connections = connections
                self.minConnections = minConnections
                self.shrinkWindowMillis = shrinkWindowMillis
                self.maxStreamsPerConnection = maxStreamsPerConnection
            }
        }

        /// Connect timeouts and health PINGs.
        package struct Timing {
            /// How long a connection attempt may take.
            package var connectTimeoutMillis: Int
            /// A connection idle this long gets a PING (0: never).
            package var idlePingMillis: Int
            /// A PING unanswered this long retires its connection.
            package var pingTimeoutMillis: Int
            /// The timing settings.
            package init(connectTimeoutMillis: Int, idlePingMillis: Int, pingTimeoutMillis: Int) {
                self.connectTimeoutMillis = connectTimeoutMillis
                self.idlePingMillis = idlePingMillis
                self.pingTimeoutMillis = pingTimeoutMillis
            }
        }

        /// Retiring bad connections and failing fast.
        package struct Recovery {
            /// Consecutive stream timeouts that retire a connection.
            package var retireAfterTimeouts: Int
            /// Consecutive 5xx answers that retire a connection.
            package var retireAfterServerErrors: Int
            /// How long no connection may be made before notifications fail at once (0: never).
            package var unreachableAfterMillis: Int
            /// The recovery settings.
            package init(retireAfterTimeouts: Int, retireAfterServerErrors: Int, unreachableAfterMillis: Int) {
                self.retireAfterTimeouts = retireAfterTimeouts
                self.retireAfterServerErrors = retireAfterServerErrors
                self.unreachableAfterMillis = unreachableAfterMillis
            }
        }
    }
}
