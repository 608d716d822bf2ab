/* A size-class free-list allocator for nghttp2 sessions (nghttp2_mem), so that streams,
 * header copies and frame items reuse memory instead of calling malloc per notification.
 *
 * One pool per HTTP/2 session; a session is used by one thread only (its connection's I/O
 * thread), so the pool takes no locks. Blocks carry a 16-byte header naming their size class;
 * classes are powers of two from 32 bytes to 32 KiB; larger requests go straight to malloc.
 * Freed blocks are kept for reuse up to a byte budget per pool, beyond which they are returned
 * to the system, so memory stays bounded whatever the traffic did. */
#include "swiftpush_system.h"

#include <stdlib.h>
#include <string.h>

#define POOL_MIN_SHIFT 5
#define POOL_CLASSES 11 /* 32 B .. 32 KiB */
#define POOL_HEADER 16
#define POOL_DIRECT 0xFF
#define POOL_CACHE_BUDGET (8u << 20) /* bytes of free blocks kept per pool */

struct swiftpush_pool {
    void *free_lists[POOL_CLASSES];
    size_t cached_bytes;
    size_t live_blocks;
};

static int class_of(size_t size) {
    size_t need = size + POOL_HEADER;
    int c = 0;
    while (((size_t)1 << (c + POOL_MIN_SHIFT)) < need) {
        c++;
        if (c >= POOL_CLASSES) return -1;
    }
    return c;
}

swiftpush_pool *swiftpush_pool_new(void) { return calloc(1, sizeof(swiftpush_pool)); }

void swiftpush_pool_delete(swiftpush_pool *pool) {
    if (!pool) return;
    for (int c = 0; c < POOL_CLASSES; c++) {
        void *p = pool->free_lists[c];
        while (p) {
            void *next = *(void **)((char *)p + POOL_HEADER);
            free(p);
            p = next;
        }
    }
    free(pool);
}

size_t swiftpush_pool_live_blocks(const swiftpush_pool *pool) { return pool ? pool->live_blocks : 0; }

void *swiftpush_pool_malloc(size_t size, void *user) {
    swiftpush_pool *pool = user;
    int c = class_of(size);
    unsigned char *block;
    if (c < 0) {
        block = malloc(size + POOL_HEADER);
        if (!block) return NULL;
        block[0] = POOL_DIRECT;
        memcpy(block + 8, &size, sizeof size); /* its usable size, for realloc */
    } else if (pool->free_lists[c]) {
        block = pool->free_lists[c];
        pool->free_lists[c] = *(void **)(block + POOL_HEADER);
        pool->cached_bytes -= (size_t)1 << (c + POOL_MIN_SHIFT);
    } else {
        block = malloc((size_t)1 << (c + POOL_MIN_SHIFT));
        if (!block) return NULL;
        block[0] = (unsigned char)c;
    }
    pool->live_blocks++;
    return block + POOL_HEADER;
}

void swiftpush_pool_free(void *ptr, void *user) {
    if (!ptr) return;
    swiftpush_pool *pool = user;
    unsigned char *block = (unsigned char *)ptr - POOL_HEADER;
    pool->live_blocks--;
    int c = block[0];
    if (c == POOL_DIRECT) {
        free(block);
        return;
    }
    size_t bytes = (size_t)1 << (c + POOL_MIN_SHIFT);
    if (pool->cached_bytes + bytes > POOL_CACHE_BUDGET) {
        free(block);
        return;
    }
    *(void **)(block + POOL_HEADER) = pool->free_lists[c];
    pool->free_lists[c] = block;
    pool->cached_bytes += bytes;
}

void *swiftpush_pool_calloc(size_t count, size_t size, void *user) {
    if (size && count > (size_t)-1 / size) return NULL;
    void *p = swiftpush_pool_malloc(count * size, user);
    if (p) memset(p, 0, count * size);
    return p;
}

void *swiftpush_pool_realloc(void *ptr, size_t size, void *user) {
    if (!ptr) return swiftpush_pool_malloc(size, user);
    if (size == 0) {
        swiftpush_pool_free(ptr, user);
        return NULL;
    }
    unsigned char *block = (unsigned char *)ptr - POOL_HEADER;
    int c = block[0];
    if (c != POOL_DIRECT && size + POOL_HEADER <= ((size_t)1 << (c + POOL_MIN_SHIFT))) return ptr;
    void *fresh = swiftpush_pool_malloc(size, user);
    if (!fresh) return NULL;
    size_t old;
    if (c == POOL_DIRECT) memcpy(&old, block + 8, sizeof old);
    else old = ((size_t)1 << (c + POOL_MIN_SHIFT)) - POOL_HEADER;
    memcpy(fresh, ptr, old < size ? old : size);
    swiftpush_pool_free(ptr, user);
    return fresh;
}
