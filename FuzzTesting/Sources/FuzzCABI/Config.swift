#if canImport(Glibc)
import Glibc
#endif
import CSwiftPushABI
import FuzzSupport
import PushCore
import SwiftPush

private let fileOptions: Set<UInt32> = [PUSH_OPT_CA_FILE.rawValue, PUSH_OPT_TOKEN_KEY_FILE.rawValue, PUSH_OPT_CERT_FILE.rawValue,
                                        PUSH_OPT_CERT_KEY_FILE.rawValue, PUSH_OPT_P12_FILE.rawValue]

/// push_config_set_string with a fuzzed option and value. The options that name files get the
/// path of a private temporary file holding fuzzed bytes, or a path under a directory that
/// does not exist: a fuzzed path never reaches the real file system.
func setString(_ input: inout FuzzInput, _ session: Session) {
    let option = input.smallInt32(upTo: 28)
    let value: CString
    var limit = Int(PATH_MAX)
    if fileOptions.contains(UInt32(bitPattern: option)) {
        if input.bool() {
            let path = TempFiles.path(for: option)
            TempFiles.write(input.bytes(), to: path)
            value = .fuzzed(&input, limit: limit, content: Array(path.utf8))
        } else {
            value = .fuzzed(&input, limit: limit, content: Array("/nonexistent-swiftpush-fuzz/".utf8) + input.bytes(max: 64))
        }
    } else {
        if UInt32(bitPattern: option) == PUSH_OPT_TOKEN_KEY_PEM.rawValue { limit = 64 * 1024 }
        value = .fuzzed(&input, limit: limit)
    }
    var err = push_error()
    let rc = push_config_set_string(session.config, option, value.pointer, value.length, &err)
    checkStatus(rc, err, allowed: [.invalidArgument, .badOption, .key], "push_config_set_string(\(option))")
    if rc == 0 && UInt32(bitPattern: option) == PUSH_OPT_PROXY.rawValue { session.proxySet = true }
    if rc == 0 {
        fuzzRequire(value.pointer != nil && !value.oversized, "push_config_set_string(\(option)) accepted a NULL or oversized value")
    }
}

func setInt(_ input: inout FuzzInput, _ session: Session) {
    let option = input.smallInt32(upTo: 28)
    var err = push_error()
    let rc = push_config_set_int(session.config, option, input.int64(), &err)
    checkStatus(rc, err, allowed: [.invalidArgument, .badOption], "push_config_set_int(\(option))")
}

/// Handles of the wrong kind and NULL: refused with PUSH_E_INVALID_ARGUMENT, never used.
func wrongHandles(_ input: inout FuzzInput, _ session: Session) {
    let wrong: OpaquePointer? = input.pick([nil, session.payload, sharedClient])
    var err = push_error()
    let option = input.smallInt32(upTo: 28)
    checkRefused(push_config_set_string(wrong, option, "x", 0, &err), err, "push_config_set_string on a wrong handle")
    checkRefused(push_config_set_int(wrong, option, 1, &err), err, "push_config_set_int on a wrong handle")
    let notAClient: OpaquePointer? = input.pick([nil, session.payload, session.config])
    var n = push_notification()
    checkRefused(push_client_send(notAClient, &n, 0, &err), err, "push_client_send on a wrong handle")
    let notAPayload: OpaquePointer? = input.pick([nil, session.config, sharedClient])
    checkRefused(push_payload_set_int(notAPayload, Int32(PUSH_PAYLOAD_BADGE.rawValue), 1, &err), err, "push_payload_set_int on a wrong handle")
    var length = -1
    checkRefused(push_payload_build(notAPayload, nil, 0, &length, &err), err, "push_payload_build on a wrong handle")
    fuzzRequire(length == 0, "push_payload_build on a wrong handle set out_length to \(length)")
}

private func checkRefused(_ rc: Int32, _ err: push_error, _ call: String) {
    checkStatus(rc, err, allowed: [.invalidArgument], call)
    fuzzRequire(rc == PushStatus.invalidArgument.rawValue, "\(call) returned \(rc)")
}

/// Private temporary files for the options that read files.
enum TempFiles {
    static let directory: String = {
        var template = Array(((getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp") + "/swiftpush-fuzz-cabi-XXXXXX").utf8CString)
        guard let dir = mkdtemp(&template) else { fatalError("mkdtemp: \(String(cString: strerror(errno)))") }
        atexit {
            for option in fileOptions { _ = unlink(TempFiles.path(for: Int32(bitPattern: option))) }
            _ = rmdir(TempFiles.directory)
        }
        return String(cString: dir)
    }()

    static func path(for option: Int32) -> String { directory + "/option-\(option)" }

    static func write(_ bytes: [UInt8], to path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { fatalError("open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard n == bytes.count else { fatalError("write \(path)") }
    }
}
