import COpenSSL

/// The topics a client certificate may push to (apns.md, "Certificate authentication").
///
/// Apple's push certificates name the app in the subject's UID (`UID=com.example.app`) and,
/// for certificates covering several topics, list them in an extension
/// (1.2.840.113635.100.6.3.6: a SEQUENCE of UTF8String topics, each followed by a SEQUENCE of
/// its kinds). APNs uses the UID as the topic when a request has no `apns-topic` and the
/// certificate does not list several topics. A certificate carrying neither (a plain test
/// certificate) restricts nothing.
struct CertificateTopics: Sendable, Equatable {
    /// The subject's UID: the default topic.
    var subjectTopic: String?
    /// The topics of the extension.
    var listedTopics: [String] = []

    /// Every topic the certificate allows; empty: not restricted.
    var allowed: Set<String> {
        var s = Set(listedTopics)
        if let subjectTopic {
            // A single-topic certificate also covers its app's VoIP and complication pushes,
            // as pushy's mock has it.
            s.insert(subjectTopic)
            if listedTopics.isEmpty {
                s.insert(subjectTopic + ".voip")
                s.insert(subjectTopic + ".complication")
            }
        }
        return s
    }

    /// The topic used for a request without `apns-topic`, if the certificate has one.
    var defaultTopic: String? { listedTopics.count > 1 ? nil : subjectTopic ?? listedTopics.first }

    /// Reads the topics of `certificate` (an `X509*`).
    init(certificate: OpaquePointer) {
        if let name = X509_get_subject_name(certificate) {
            let index = X509_NAME_get_index_by_NID(name, NID_userId, -1)
            if index >= 0, let entry = X509_NAME_get_entry(name, index), let data = X509_NAME_ENTRY_get_data(entry) {
                subjectTopic = Self.text(data)
            }
        }
        if let oid = OBJ_txt2obj("1.2.840.113635.100.6.3.6", 1) {
            defer { ASN1_OBJECT_free(oid) }
            let index = X509_get_ext_by_OBJ(certificate, oid, -1)
            if index >= 0, let ext = X509_get_ext(certificate, index), let data = X509_EXTENSION_get_data(ext),
               let bytes = ASN1_STRING_get0_data(data) {
                listedTopics = Self.topics(inDER: UnsafeRawBufferPointer(start: bytes, count: Int(ASN1_STRING_length(data))))
            }
        }
    }

    init(subjectTopic: String?, listedTopics: [String]) {
        self.subjectTopic = subjectTopic
        self.listedTopics = listedTopics
    }

    private static func text(_ s: UnsafePointer<ASN1_STRING>) -> String? {
        guard let p = ASN1_STRING_get0_data(s) else { return nil }
        return String(decoding: UnsafeRawBufferPointer(start: p, count: Int(ASN1_STRING_length(s))), as: UTF8.self)
    }

    /// The UTF8String elements directly inside the outer SEQUENCE of `der` (X.690 §8.9).
    static func topics(inDER der: UnsafeRawBufferPointer) -> [String] {
        var p = 0
        guard let outer = element(der, &p), outer.tag == 0x30 else { return [] }
        var q = outer.body.lowerBound
        var out: [String] = []
        while q < outer.body.upperBound, let e = element(der, &q) {
            if e.tag == 0x0C { out.append(String(decoding: der[e.body], as: UTF8.self)) }
        }
        return out
    }

    /// One DER element at `p` (tag, definite length in short or long form); advances `p`.
    private static func element(_ der: UnsafeRawBufferPointer, _ p: inout Int) -> (tag: UInt8, body: Range<Int>)? {
        guard p + 2 <= der.count else { return nil }
        let tag = der[p]
        var length = Int(der[p + 1])
        p += 2
        if length & 0x80 != 0 {
            let n = length & 0x7F
            guard n >= 1, n <= 4, p + n <= der.count else { return nil }
            length = 0
            for _ in 0..<n {
                length = length << 8 | Int(der[p])
                p += 1
            }
        }
        guard length <= der.count - p else { return nil }
        defer { p += length }
        return (tag, p..<(p + length))
    }
}
