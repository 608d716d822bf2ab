#include "swiftpush_system.h"
