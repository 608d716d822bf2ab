/* Compiled as C99, C11 and C++ with -Wall -Wextra -pedantic -Werror by check-header.sh: the
 * public header must be self-contained and warning-free, and every type and constant usable. */
#include <string.h>

#include "swiftpush.h"

int main(void) {
    push_error err = {0, {0}};
    push_notification n;
    push_result r;
    push_config_t cfg = push_config_new();
    push_client_t client = 0;
    push_channels_t channels = 0;
    push_channel_result cr;
    push_channel_ids *ids = 0;
    char channel_id[PUSH_CHANNEL_ID_CAPACITY];
    memset(&n, 0, sizeof n);
    memset(&r, 0, sizeof r);
    n.struct_size = (uint32_t)sizeof n;
    n.push_type = PUSH_TYPE_VOIP;
    n.flags = PUSH_NOTIFICATION_HAS_EXPIRATION;
    r.outcome = PUSH_OUTCOME_REJECTED;
    r.reason = PUSH_REASON_UNREGISTERED;
    (void)push_config_set_int(cfg, PUSH_OPT_PORT, 2197, &err);
    (void)push_client_open(cfg, &client, &err);
    push_config_free(cfg);
    (void)push_client_close(client, 0);
    push_client_free(client);
    memset(&cr, 0, sizeof cr);
    cr.struct_size = (uint32_t)sizeof cr;
    n.channel_id = "dHN0LXNyY2gtY2hubA==";
    n.deadline_ms = 200;
    (void)push_channel_create(channels, "com.example.app", 0, PUSH_CHANNEL_MOST_RECENT_MESSAGE_STORED, channel_id,
                              sizeof channel_id, 0, &cr, 0, &err);
    (void)push_channel_list(channels, "com.example.app", 0, &ids, &cr, 0, &err);
    push_channel_ids_free(ids);
    push_channels_free(channels);
    return (int)PUSH_NOTIFICATION_SIZE_V1 + (int)PUSH_NOTIFICATION_SIZE_V2 + (int)sizeof(PUSH_CHANNELS_HOST_SANDBOX) + PUSH_CHANNEL_NO_MESSAGE_STORED +
           (int)sizeof(PUSH_CHANNELS_HOST_PRODUCTION) + (int)(sizeof n + sizeof r) + PUSH_OK + PUSH_REASON_TABLE_COUNT + PUSH_TYPE_COUNT +
           (push_version()[0] == '0') + (push_strerror(PUSH_E_QUEUE_FULL)[0] == 's') +
           (push_reason_name(PUSH_REASON_BAD_DEVICE_TOKEN)[0] == 'B') + (int)PUSH_NUL_TERMINATED +
           (PUSH_VERSION_MAJOR * 0);
}
