import CSwiftPushABI
import FuzzSupport
import PushCore
import SwiftPush

// The C ABI's argument checks, called as a C program would call them (the @c functions,
// directly): fuzzed push_notification records through push_client_send and
// push_client_send_batch on a client opened against 127.0.0.1 port 1 (nothing listens there:
// only validation and queueing are exercised, every accepted notification fails at its 1 ms
// deadline), fuzzed option numbers and values through push_config_set_string / _int, fuzzed
// payload builder calls, and handles of the wrong kind everywhere.
//
// Strings are passed in buffers of exactly their size (plus the NUL for length 0), so ASan
// sees any read past them; "oversized" lengths, which the library must refuse before reading
// a byte, point at a small buffer too. Properties, for every call: the status returned is
// the one in `err`, one the function documents; a refusal has a message (NUL-terminated
// UTF-8), a success none; and the notification checks agree with NotificationRules.

func fuzzCABI(_ bytes: UnsafeRawBufferPointer) {
    var input = FuzzInput(bytes)
    let openAtEnd = input.byte() == 1 // the first byte: whether to open the configuration at the end
    let session = Session()
    var steps = 0
    while !input.isEmpty && steps < 24 {
        steps += 1
        switch input.choose(10) {
        case 0, 1, 2: sendOne(&input, session)
        case 3: sendBatch(&input, session)
        case 4, 5: setString(&input, session)
        case 6: setInt(&input, session)
        case 7, 8: payloadStep(&input, session)
        default: wrongHandles(&input, session)
        }
    }
    session.finish(open: openAtEnd)
    drainResults(wait: false)
}

@main enum FuzzCABIMain {
    static func main() {
        PasswordPrompts.forbid()
        FuzzMain.run(fuzzCABI)
    }
}
