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
#include <stddef.h>

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

/* nghttp2_mem for nghttp2 sessions: a size-class free-list allocator, so that streams,
 * header copies and frame items reuse memory instead of calling malloc per notification.
 *
 * One pool per HTTP/2 session; a session is used by one thread only (its connection's I/O
 * thread), so the pool takes no locks. Blocks carry a 16-byte header naming their size class;
 * classes are powers of two from 32 bytes to 32 KiB; larger requests go straight to malloc.
 * Freed blocks are kept for reuse up to a byte budget per pool, beyond which they are returned
 * to the system, so memory stays bounded whatever the traffic did.
 *
 * Static inline in this header, not a C file: this module is a module map only (Package.swift
 * says why); Swift emits the functions it uses, nghttp2 gets their addresses. */
#include <stdlib.h>
#include <string.h>

#define SWIFTPUSH_POOL_MIN_SHIFT 5
#define SWIFTPUSH_POOL_CLASSES 11 /* 32 B .. 32 KiB */
#define SWIFTPUSH_POOL_HEADER 16
#define SWIFTPUSH_POOL_DIRECT 0xFF
#define SWIFTPUSH_POOL_CACHE_BUDGET (8u << 20) /* bytes of free blocks kept per pool */

typedef struct swiftpush_pool {
    void *free_lists[SWIFTPUSH_POOL_CLASSES];
    size_t cached_bytes;
    size_t live_blocks;
} swiftpush_pool;

static inline int swiftpush_pool_class_of(size_t size) {
    size_t need = size + SWIFTPUSH_POOL_HEADER;
    int c = 0;
    while (((size_t)1 << (c + SWIFTPUSH_POOL_MIN_SHIFT)) < need) {
        c++;
        if (c >= SWIFTPUSH_POOL_CLASSES) return -1;
    }
    return c;
}

static inline swiftpush_pool *swiftpush_pool_new(void) { return calloc(1, sizeof(swiftpush_pool)); }

static inline void swiftpush_pool_delete(swiftpush_pool *pool) {
    if (!pool) return;
    for (int c = 0; c < SWIFTPUSH_POOL_CLASSES; c++) {
        void *p = pool->free_lists[c];
        while (p) {
            void *next = *(void **)((char *)p + SWIFTPUSH_POOL_HEADER);
            free(p);
            p = next;
        }
    }
    free(pool);
}

static inline size_t swiftpush_pool_live_blocks(const swiftpush_pool *pool) { return pool ? pool->live_blocks : 0; }

static inline void *swiftpush_pool_malloc(size_t size, void *user) {
    swiftpush_pool *pool = user;
    int c = swiftpush_pool_class_of(size);
    unsigned char *block;
    if (c < 0) {
        block = malloc(size + SWIFTPUSH_POOL_HEADER);
        if (!block) return NULL;
        block[0] = SWIFTPUSH_POOL_DIRECT;
        memcpy(block + 8, &size, sizeof size); /* its usable size, for realloc */
    } else if (pool->free_lists[c]) {
        block = pool->free_lists[c];
        pool->free_lists[c] = *(void **)(block + SWIFTPUSH_POOL_HEADER);
        pool->cached_bytes -= (size_t)1 << (c + SWIFTPUSH_POOL_MIN_SHIFT);
    } else {
        block = malloc((size_t)1 << (c + SWIFTPUSH_POOL_MIN_SHIFT));
        if (!block) return NULL;
        block[0] = (unsigned char)c;
    }
    pool->live_blocks++;
    return block + SWIFTPUSH_POOL_HEADER;
}

static inline void swiftpush_pool_free(void *ptr, void *user) {
    if (!ptr) return;
    swiftpush_pool *pool = user;
    unsigned char *block = (unsigned char *)ptr - SWIFTPUSH_POOL_HEADER;
    pool->live_blocks--;
    int c = block[0];
    if (c == SWIFTPUSH_POOL_DIRECT) {
        free(block);
        return;
    }
    size_t bytes = (size_t)1 << (c + SWIFTPUSH_POOL_MIN_SHIFT);
    if (pool->cached_bytes + bytes > SWIFTPUSH_POOL_CACHE_BUDGET) {
        free(block);
        return;
    }
    *(void **)(block + SWIFTPUSH_POOL_HEADER) = pool->free_lists[c];
    pool->free_lists[c] = block;
    pool->cached_bytes += bytes;
}

static inline void *swiftpush_pool_calloc(size_t count, size_t size, void *user) {
    if (size && count > (size_t)-1 / size) return NULL;
    void *p = swiftpush_pool_malloc(count * size, user);
    if (p) memset(p, 0, count * size);
    return p;
}

static inline void *swiftpush_pool_realloc(void *ptr, size_t size, void *user) {
    if (!ptr) return swiftpush_pool_malloc(size, user);
    if (size == 0) {
        swiftpush_pool_free(ptr, user);
        return NULL;
    }
    unsigned char *block = (unsigned char *)ptr - SWIFTPUSH_POOL_HEADER;
    int c = block[0];
    if (c != SWIFTPUSH_POOL_DIRECT && size + SWIFTPUSH_POOL_HEADER <= ((size_t)1 << (c + SWIFTPUSH_POOL_MIN_SHIFT))) return ptr;
    void *fresh = swiftpush_pool_malloc(size, user);
    if (!fresh) return NULL;
    size_t old;
    if (c == SWIFTPUSH_POOL_DIRECT) memcpy(&old, block + 8, sizeof old);
    else old = ((size_t)1 << (c + SWIFTPUSH_POOL_MIN_SHIFT)) - SWIFTPUSH_POOL_HEADER;
    memcpy(fresh, ptr, old < size ? old : size);
    swiftpush_pool_free(ptr, user);
    return fresh;
}

#endif /* __linux__ */
#endif
