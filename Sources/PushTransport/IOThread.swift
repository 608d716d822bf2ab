#if canImport(Glibc)
import Glibc
#endif

/// Set-up shared by the library's own I/O threads (client and mock server).
public enum IOThread {
    /// Blocks SIGPIPE on the calling thread.
    ///
    /// A write to a socket whose peer has gone raises SIGPIPE, whose default action kills the
    /// whole process: the host's, since this is a library. The signal is directed at the thread
    /// that wrote, so blocking it here (the I/O thread does every socket write) keeps it away
    /// without touching the host's signal dispositions; the write still fails with EPIPE and
    /// the connection is handled as lost.
    public static func blockSIGPIPE() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }
}
