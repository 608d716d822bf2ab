/* Internal to libswiftpush.so (not merged into Include/swiftpush.h): what every opaque handle
 * (push_config_t, push_client_t, push_payload_t) points to. A C record, so that its layout is
 * C's and not the Swift runtime's object layout: the tag is read as plain memory before any
 * Swift reference is formed, and a handle of another kind (or a freed one whose memory was not
 * reused) is refused without touching a reference count. */
#ifndef SWIFTPUSH_HANDLE_H
#define SWIFTPUSH_HANDLE_H
#include <stdint.h>

typedef struct swiftpush_handle_record {
    uint64_t tag;  /* which kind of handle this is; 0 once freed */
    void *object;  /* the handle's Swift object, retained for the handle's life */
} swiftpush_handle_record;

#endif
