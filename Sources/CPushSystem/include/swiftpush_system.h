/* Linux interfaces that Swift's Glibc module does not bring in: epoll, eventfd, TCP options. */
#ifndef SWIFTPUSH_SYSTEM_H
#define SWIFTPUSH_SYSTEM_H
/* Another system gets this one sentence instead of a missing <sys/epoll.h> and a page of
 * undeclared names: the rest of the header is left out there (README, "Platforms"). */
#ifndef __linux__
#error "swiftpush supports Linux only: its event loop is built on epoll and eventfd (see README, Platforms)."
#else
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>

/* struct epoll_event is packed on x86_64; these accessors keep Swift away from its layout. */
static inline int swiftpush_epoll_ctl(int epfd, int op, int fd, uint32_t events) {
    struct epoll_event ev;
    ev.events = events;
    ev.data.u64 = 0;
    ev.data.fd = fd;
    return epoll_ctl(epfd, op, fd, &ev);
}
static inline int swiftpush_epoll_event_fd(const struct epoll_event *events, int i) { return events[i].data.fd; }
static inline uint32_t swiftpush_epoll_event_bits(const struct epoll_event *events, int i) { return events[i].events; }
static inline unsigned long swiftpush_epoll_event_size(void) { return sizeof(struct epoll_event); }

/* A size-class free-list allocator for nghttp2 sessions (pool_alloc.c). Single-threaded. */
typedef struct swiftpush_pool swiftpush_pool;
swiftpush_pool *swiftpush_pool_new(void);
void swiftpush_pool_delete(swiftpush_pool *pool);
size_t swiftpush_pool_live_blocks(const swiftpush_pool *pool);
void *swiftpush_pool_malloc(size_t size, void *pool);
void swiftpush_pool_free(void *ptr, void *pool);
void *swiftpush_pool_calloc(size_t count, size_t size, void *pool);
void *swiftpush_pool_realloc(void *ptr, size_t size, void *pool);
#endif /* __linux__ */
#endif
