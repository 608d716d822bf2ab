/* Compile-time checks of the public record layouts. ctypes (Bindings/python) and any other
 * binding that mirrors these structs by hand rely on exactly these sizes and offsets on LP64;
 * a change here is an ABI change and must also change the bindings. */
#include "swiftpush_types.h"

#if defined(__LP64__)
_Static_assert(sizeof(push_error) == 256, "push_error layout");
_Static_assert(sizeof(push_notification) == 136, "push_notification layout");
_Static_assert(PUSH_NOTIFICATION_SIZE_V1 == 112, "push_notification: the first version's size");
_Static_assert(PUSH_NOTIFICATION_SIZE_V2 == 128, "push_notification: the second version's size");
_Static_assert(offsetof(push_notification, channel_id_len) == 120, "push_notification layout");
_Static_assert(offsetof(push_notification, device_token) == 32, "push_notification layout");
_Static_assert(offsetof(push_notification, apns_id_len) == 104, "push_notification layout");
_Static_assert(sizeof(push_result) == 256, "push_result layout");
_Static_assert(offsetof(push_result, apns_id) == 48, "push_result layout");
_Static_assert(offsetof(push_result, reason_text) == 128, "push_result layout");
_Static_assert(sizeof(push_channel_result) == 184, "push_channel_result layout");
_Static_assert(sizeof(push_channel_ids) == 16, "push_channel_ids layout");
#endif

#if defined(__LP64__)
_Static_assert(sizeof(push_connection_stats) == 16, "push_connection_stats layout");
_Static_assert(offsetof(push_stats, latency_p50_us) == 96, "push_stats layout");
_Static_assert(offsetof(push_stats, connections) == 304, "push_stats layout");
_Static_assert(sizeof(push_stats) == 1328, "push_stats layout");
#endif
