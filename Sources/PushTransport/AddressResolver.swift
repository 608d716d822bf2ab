#if canImport(Glibc)
import Glibc
#endif
import PushCore

/// Turns a host name into addresses. The seam between the client and name resolution: the
/// client calls it on a resolver thread of its own (`ResolverThread`), never on its I/O thread,
/// and tests substitute a slow or failing one.
public protocol AddressResolver: Sendable {
    /// The addresses of `host` for TCP `port`, in the resolver's order (may block).
    func resolve(host: String, port: Int) throws(TransportError) -> [SocketConnect.Address]
}

/// The system's resolver: `getaddrinfo`, afresh for every connection (no cache: Apple asks
/// providers to resolve for each new connection and spread connections over the addresses).
public struct SystemResolver: AddressResolver {
    public init() {}

    public func resolve(host: String, port: Int) throws(TransportError) -> [SocketConnect.Address] {
        try SocketConnect.resolve(host: host, port: port)
    }
}

/// A thread that resolves names for one client, so a slow resolver (seconds, when a nameserver
/// is down) never stalls the I/O thread's reads, writes and deadlines. The I/O thread posts a
/// request and goes on; the answer comes back through `take()`, and `onAnswer` wakes the I/O
/// thread. A request the I/O thread gave up on (its connect timeout passed) is simply not
/// taken: its ticket no longer matches.
package final class ResolverThread: @unchecked Sendable {
    /// An answer: the request's ticket and its addresses or error.
    package typealias Answer = (ticket: UInt64, result: Result<[SocketConnect.Address], TransportError>)

    private let resolver: any AddressResolver
    private let onAnswer: @Sendable () -> Void
    private let lock = PThreadMutex()
    private var requests: [(ticket: UInt64, host: String, port: Int)] = []
    private var answers: [Answer] = []
    private var nextTicket: UInt64 = 0
    private var stopping = false
    /// A lookup is in progress (it may take as long as the system's resolver likes).
    private var resolving = false
    private var thread: pthread_t?

    package init(resolver: any AddressResolver, onAnswer: @escaping @Sendable () -> Void) {
        self.resolver = resolver
        self.onAnswer = onAnswer
    }

    /// Asks for `host`'s addresses; returns the ticket its answer will carry. Starts the thread
    /// on first use (a client that never reconnects never has one).
    package func request(host: String, port: Int) -> UInt64 {
        lock.lock()
        nextTicket += 1
        let ticket = nextTicket
        requests.append((ticket, host, port))
        let start = thread == nil && !stopping // after stop(), nothing starts (and nothing answers)
        lock.broadcast()
        lock.unlock()
        if start { startThread() }
        return ticket
    }

    /// The answers that arrived since the last call.
    package func take() -> [Answer] {
        lock.withLock {
            let out = answers
            answers.removeAll()
            return out
        }
    }

    /// Stops the thread. An idle thread is joined (it only has to wake and return), so that
    /// nothing of it, such as the C library's per-thread resolver state, outlives the client; a
    /// thread in the middle of a lookup is not waited for (it may take seconds, and close must
    /// not): it is detached, holds its own reference, and ends after the lookup without reporting.
    package func stop() {
        let (t, idle): (pthread_t?, Bool) = lock.withLock {
            stopping = true
            lock.broadcast()
            let t = thread
            thread = nil
            return (t, !resolving)
        }
        guard let t else { return }
        if idle { pthread_join(t, nil) } else { pthread_detach(t) }
    }

    private func startThread() {
        let context = Unmanaged.passRetained(self).toOpaque()
        var t = pthread_t()
        let rc = pthread_create(&t, nil, { arg in
            let me = Unmanaged<ResolverThread>.fromOpaque(arg!).takeRetainedValue()
            me.run()
            return nil
        }, context)
        if rc != 0 {
            Unmanaged<ResolverThread>.fromOpaque(context).release()
            // No thread: answer every request with the error (the attempt fails and backs off).
            lock.withLock {
                for r in requests { answers.append((r.ticket, .failure(TransportError.system("pthread_create (resolver)", rc)))) }
                requests.removeAll()
            }
            onAnswer()
            return
        }
        // Joined or detached by stop(), whichever its state then allows.
        lock.withLock { thread = t }
    }

    private func run() {
        IOThread.blockSIGPIPE()
        while true {
            lock.lock()
            while requests.isEmpty && !stopping { _ = lock.wait(untilMonotonicNanos: nil) }
            if stopping { lock.unlock(); return }
            let r = requests.removeFirst()
            resolving = true
            lock.unlock()
            let result: Result<[SocketConnect.Address], TransportError>
            do throws(TransportError) {
                let addresses = try resolver.resolve(host: r.host, port: r.port)
                result = addresses.isEmpty ? .failure(TransportError(.connect, "\(r.host) has no addresses")) : .success(addresses)
            } catch {
                result = .failure(error)
            }
            let report: Bool = lock.withLock {
                resolving = false
                answers.append((r.ticket, result))
                return !stopping
            }
            if report { onAnswer() }
        }
    }
}
