// The C side of Config.Log: hands the exported Go function to the library as its
// push_log_callback (a cgo preamble with //export may not define C functions itself).
#include <stdint.h>
#include "swiftpush.h"
#include "_cgo_export.h"

int32_t swiftpush_go_set_log_callback(push_config_t config, uintptr_t handle, int32_t min_level, push_error *err) {
    return push_config_set_log_callback(config, (push_log_callback)swiftpushGoLog, (void *)handle, min_level, err);
}
