import FuzzSupport
import PushCore

// The `.apns` file reader over arbitrary file contents. Properties:
// - it reads exactly the files that are JSON objects whose "Simulator Target Bundle" members
//   (if any) are the same non-empty string, and refuses the others with a message;
// - the payload read is valid JSON, an object, without a "Simulator Target Bundle" member; it
//   is the file itself when the file has no such member, and otherwise holds the file's other
//   members in order with their values byte for byte;
// - a topic derived from the bundle id passes the send-time topic rule for that push type.

func fuzzApnsFile(_ bytes: UnsafeRawBufferPointer) {
    let contents = Array(bytes)
    let file: ApnsFile
    do throws(ApnsFile.Failure) {
        file = try ApnsFile(contents: contents)
    } catch {
        fuzzRequire(!error.message.isEmpty, "refused without a message")
        fuzzRequire(!shouldRead(contents), "refused (\(error.message)) a readable file: \(show(contents))")
        return
    }
    fuzzRequire(shouldRead(contents), "read a file it should refuse: \(show(contents))")
    guard case .success(let original) = JSON.topLevelMembers(contents),
          case .success(let kept) = JSON.topLevelMembers(file.payload) else {
        return fuzzRequire(false, "payload is not a JSON object: \(show(file.payload))")
    }
    let others = original.filter { $0.key != ApnsFile.targetBundleKey }
    fuzzRequire(!kept.contains { $0.key == ApnsFile.targetBundleKey }, "the payload still names the bundle")
    if others.count == original.count {
        fuzzRequire(file.bundleID == nil && file.payload == contents, "a file without the key was changed")
    } else {
        fuzzRequire(file.bundleID.map { !$0.isEmpty } == true, "bundle id \(String(describing: file.bundleID))")
        fuzzRequire(kept.map(\.key) == others.map(\.key), "members \(kept.map(\.key)) instead of \(others.map(\.key))")
        for (k, o) in zip(kept, others) {
            fuzzRequire(file.payload[k.value] == contents[o.value], "member \(k.key.debugDescription) not copied byte for byte")
        }
    }
    for pushType in PushType.allCases {
        guard case .success(let topic)? = file.topic(for: pushType) else { continue }
        let violation = Array(topic.utf8).withUnsafeBytes { NotificationRules.checkTopic($0, pushType: pushType) }
        fuzzRequire(violation == nil, "derived topic \(topic.debugDescription) breaks the \(pushType) topic rule: \(violation!.message)")
    }
}

/// The reader's contract, from the parts it is built on.
private func shouldRead(_ contents: [UInt8]) -> Bool {
    guard case .success(let members) = JSON.topLevelMembers(contents) else { return false }
    var names = Set<String>() // Swift's string equality, as the reader compares
    for m in members where m.key == ApnsFile.targetBundleKey {
        guard let name = contents.withUnsafeBytes({ JSON.decodeString(UnsafeRawBufferPointer(rebasing: $0[m.value])) }),
              !name.isEmpty else { return false }
        names.insert(name)
    }
    return names.count <= 1
}

@main enum FuzzApnsFileMain { static func main() { FuzzMain.run(fuzzApnsFile) } }
