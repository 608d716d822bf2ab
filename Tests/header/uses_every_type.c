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
    return (int)(sizeof n + sizeof r) + PUSH_OK + PUSH_REASON_TABLE_COUNT + PUSH_TYPE_COUNT +
           (push_version()[0] == '0') + (push_strerror(PUSH_E_QUEUE_FULL)[0] == 's') +
           (push_reason_name(PUSH_REASON_BAD_DEVICE_TOKEN)[0] == 'B') + (int)PUSH_NUL_TERMINATED +
           (PUSH_VERSION_MAJOR * 0);
}
