/* Umbrella header for nghttp2 (Debian 12: 1.52, so mem_send/mem_recv and nghttp2_data_provider). */
#ifndef SWIFTPUSH_NGHTTP2_H
#define SWIFTPUSH_NGHTTP2_H
#include <nghttp2/nghttp2.h>
#endif
