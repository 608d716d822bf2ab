/* Umbrella header for hiredis (Debian's libhiredis-dev) as seen from Swift. Its name is unique
 * to this project: a module map whose umbrella is a common name ("hiredis.h") collides with the
 * library's own header on the include path. Only the worker and the CLI import this module;
 * libswiftpush.so never links hiredis. */
#ifndef SWIFTPUSH_HIREDIS_H
#define SWIFTPUSH_HIREDIS_H
#include <hiredis/hiredis.h>
#endif
