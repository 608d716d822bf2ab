import COpenSSL
import PushCore
import PushCrypto

extension RedisConnection {
    /// The first exchange on a new connection: `AUTH [username] password`, or `PING` when there
    /// are no credentials (a server that wants some answers NOAUTH, and the caller learns it
    /// now rather than at its first real command). Its failures are classified: refused
    /// credentials are permanent (`.authentication`); so is a server that closes the connection
    /// at the first command without a word, or answers bytes that are not RESP — a Redis does
    /// neither, a TLS port spoken to in the clear does, and so does a TLS server that wants a
    /// client certificate (TLS 1.3 checks it after the client's handshake has returned, and
    /// refuses at the first exchange). A timeout, or a server still loading, is a lost
    /// connection (retry).
    func greet(_ connector: RedisConnector, deadline: UInt64) throws(RedisError) {
        let reply: RedisReply
        do throws(RedisError) {
            if let password = connector.password {
                try sendAuth(username: connector.username, password: password, deadline: deadline)
                reply = try receive()
            } else {
                reply = try command("PING")
            }
        } catch {
            guard error.kind == .connection && !error.timedOut else { throw error }
            if connector.tls == nil {
                throw RedisError(.tls, "Redis at \(endpoint) closed the connection without answering the first command (\(error.description)): is it a TLS port (set tls)?")
            }
            throw RedisError(.tls, "TLS with Redis at \(endpoint): the server ended the session without answering the first command (\(error.description)): does it require a client certificate (tls.cert_file, tls.key_file)?")
        }
        guard case .error(let text) = reply else { return }
        close()
        throw Self.greetingError(text, endpoint: endpoint, username: connector.username, withPassword: connector.password != nil)
    }

    /// What an error reply to AUTH or PING means for the caller.
    static func greetingError(_ text: String, endpoint: String, username: String?, withPassword: Bool) -> RedisError {
        let code = text.prefix { $0 != " " }
        switch code {
        case "LOADING", "BUSY", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN":
            return RedisError(.connection, "Redis at \(endpoint) is not ready: \(text)")
        case "ERR" where text.contains("max number of clients"):
            return RedisError(.connection, "Redis at \(endpoint) is full: \(text)")
        case "NOAUTH":
            return RedisError(.authentication, "Redis at \(endpoint) requires credentials (\(text)): set password, password_file or password_env")
        default:
            guard withPassword else { return RedisError(.configuration, "Redis at \(endpoint) refused PING: \(text)") }
            let who = username.map { "user \"\($0)\"" } ?? "the default user"
            return RedisError(.authentication, "Redis at \(endpoint) refused the credentials of \(who): \(text)")
        }
    }

    /// Writes `AUTH [username] password` straight to the socket from a buffer that is cleared
    /// afterwards: the password never enters the output buffer (which is reused and grows).
    private func sendAuth(username: String?, password: SecretBytes, deadline: UInt64) throws(RedisError) {
        guard let socket else { throw RedisError(.connection, "Redis at \(endpoint): not connected") }
        var head = RedisArguments()
        head.append("AUTH")
        if let username { head.append(username) }
        // The array header counts the password too; it follows the arguments before it.
        var prefix: [UInt8] = []
        RedisArguments.writeArrayHeader(count: head.count + 1, into: &prefix)
        head.writeRESPElements(into: &prefix)
        var passwordHeader: [UInt8] = [UInt8(ascii: "$")]
        RedisArguments.appendDecimal(password.count, to: &passwordHeader)
        passwordHeader += RedisArguments.crlf
        let total = prefix.count + passwordHeader.count + password.count + 2
        let message = SecretBytes.writing(capacity: total) { out in
            var at = 0
            for part in [prefix, passwordHeader] {
                part.withUnsafeBytes { (out.baseAddress! + at).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
                at += part.count
            }
            password.withUnsafeBytes { p in
                if p.count > 0 { (out.baseAddress! + at).copyMemory(from: p.baseAddress!, byteCount: p.count) }
            }
            at += password.count
            out[at] = 13
            out[at + 1] = 10
            return total
        }
        do throws(RedisError) {
            try message.withUnsafeBytes { bytes throws(RedisError) in try socket.write(bytes, deadline: deadline) }
        } catch {
            throw lost(error)
        }
        pendingReplies += 1
    }
}
