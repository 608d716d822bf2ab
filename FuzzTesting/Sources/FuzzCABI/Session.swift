#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import CSwiftPushABI
import FuzzSupport
import PushCore
import SwiftPush

/// The handles one input works on: a fresh configuration and payload, and the shared client.
final class Session {
    let config = push_config_new()
    let payload = push_payload_new()
    /// The payload's push type, for the size limit its build enforces.
    var payloadType = PushType.alert
    /// Whether a proxy was accepted (then the configuration is never opened: it could dial out).
    var proxySet = false

    /// Frees the handles; with `open`, first opens a client from the fuzzed configuration,
    /// aimed at 127.0.0.1 port 1 whatever the input set, to exercise push_client_open's checks.
    func finish(open: Bool) {
        if open && !proxySet {
            var err = push_error()
            _ = push_config_set_string(config, Int32(PUSH_OPT_HOST.rawValue), "127.0.0.1", 0, &err)
            _ = push_config_set_int(config, Int32(PUSH_OPT_PORT.rawValue), 1, &err)
            var client: push_client_t?
            let rc = push_client_open(config, &client, &err)
            checkStatus(rc, err, allowed: [.invalidArgument, .key, .tls, .badOption, .internalError], "push_client_open")
            fuzzRequire((rc == 0) == (client != nil), "push_client_open: handle and status disagree")
            if let client {
                _ = push_client_close(client, 0)
                push_client_free(client)
            }
        }
        push_payload_free(payload)
        push_config_free(config)
    }
}

/// The client every send goes to, opened once against a port where nothing listens.
nonisolated(unsafe) let sharedClient: push_client_t = { // used by libFuzzer's one thread
    let config = push_config_new()
    var err = push_error()
    let pem = generatedKeyPEM()
    func must(_ rc: Int32, _ what: String) { if rc != 0 { fatalError("\(what): \(rc)") } }
    must(push_config_set_string(config, Int32(PUSH_OPT_HOST.rawValue), "127.0.0.1", 0, &err), "host")
    must(push_config_set_int(config, Int32(PUSH_OPT_PORT.rawValue), 1, &err), "port")
    must(pem.withUnsafeBufferPointer { p in
        p.withMemoryRebound(to: CChar.self) { push_config_set_string(config, Int32(PUSH_OPT_TOKEN_KEY_PEM.rawValue), $0.baseAddress, p.count, &err) }
    }, "key")
    must(push_config_set_string(config, Int32(PUSH_OPT_KEY_ID.rawValue), "FUZZKEY001", 0, &err), "key id")
    must(push_config_set_string(config, Int32(PUSH_OPT_TEAM_ID.rawValue), "FUZZTEAM01", 0, &err), "team id")
    must(push_config_set_string(config, Int32(PUSH_OPT_DEFAULT_TOPIC.rawValue), defaultTopic, 0, &err), "topic")
    must(push_config_set_int(config, Int32(PUSH_OPT_DEADLINE_MS.rawValue), 1, &err), "deadline")
    must(push_config_set_int(config, Int32(PUSH_OPT_CONNECT_TIMEOUT_MS.rawValue), 1, &err), "connect timeout")
    must(push_config_set_int(config, Int32(PUSH_OPT_QUEUE_CAPACITY.rawValue), 256, &err), "queue")
    must(push_config_set_int(config, Int32(PUSH_OPT_CONNECTIONS.rawValue), 1, &err), "connections")
    var client: push_client_t?
    must(push_client_open(config, &client, &err), "open: \(withUnsafeBytes(of: err.message) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) })")
    push_config_free(config)
    return client!
}()

let defaultTopic = "com.example.fuzz"

/// Polls what is there (or, with `wait`, until the queue has room again).
func drainResults(wait: Bool) {
    var results = [push_result](repeating: push_result(), count: 64)
    var got = 0
    repeat {
        let rc = push_client_poll(sharedClient, &results, results.count, MemoryLayout<push_result>.size, wait ? 50 : 0, &got)
        fuzzRequire(rc == 0, "push_client_poll returned \(rc)")
        for r in results.prefix(got) {
            fuzzRequire(r.outcome == Int32(PUSH_OUTCOME_FAILED.rawValue), "a notification to a closed port ended with outcome \(r.outcome)")
        }
    } while got == results.count
}

/// A fresh P-256 key as PKCS#8 PEM (no key material is kept in the repository).
private func generatedKeyPEM() -> [UInt8] {
    guard let ctx = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { fatalError("EVP_PKEY_CTX_new_from_name") }
    defer { EVP_PKEY_CTX_free(ctx) }
    var key: OpaquePointer?
    guard EVP_PKEY_keygen_init(ctx) == 1, EVP_PKEY_CTX_set_group_name(ctx, "P-256") == 1,
          EVP_PKEY_generate(ctx, &key) == 1, let key else { fatalError("EC key generation failed") }
    defer { EVP_PKEY_free(key) }
    guard let bio = BIO_new(BIO_s_mem()) else { fatalError("BIO_new") }
    defer { BIO_free(bio) }
    guard PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) == 1 else { fatalError("PEM_write_bio_PrivateKey") }
    var ptr: UnsafeMutablePointer<CChar>?
    let n = BIO_ctrl(bio, BIO_CTRL_INFO, 0, &ptr)
    return Array(UnsafeRawBufferPointer(start: ptr, count: n))
}
