// The transport's event loop is built on Linux's epoll and eventfd (CPushSystem): there is no
// kqueue or IOCP back end, so a build for another system stops here with one sentence instead
// of a page of errors about missing epoll symbols (README, "Platforms").
#if !os(Linux)
#error("swiftpush supports Linux only: its event loop is built on epoll and eventfd (see README, Platforms).")
#endif
