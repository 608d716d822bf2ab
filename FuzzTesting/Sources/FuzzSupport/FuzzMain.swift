#if canImport(Glibc)
import Glibc
#endif
import PushCore
import PushTransport

/// The `main` of every harness. Built with `-DFUZZING` and libFuzzer's runtime
/// (`Tests/fuzz/run.sh`), it hands the harness to libFuzzer (`LLVMFuzzerRunDriver`: libFuzzer's
/// own `main` cannot be used, SwiftPM gives executables a `main` of their own). Built plainly
/// (`swift build`), it runs the harness once over every file named on the command line,
/// directories read file by file, so that a corpus or a saved crash replays under any build.
public enum FuzzMain {
    public static func run(_ harness: @escaping (UnsafeRawBufferPointer) -> Void) -> Never {
        #if FUZZING
        currentHarness = harness
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in
            currentHarness!(UnsafeRawBufferPointer(start: data, count: size))
            return 0
        })
        #else
        var count = 0
        for argument in CommandLine.arguments.dropFirst() where !argument.hasPrefix("-") {
            for path in files(at: argument) {
                let bytes: [UInt8]
                do throws(FileBytes.ReadError) {
                    bytes = try FileBytes.read(path: path, limit: 1 << 24)
                } catch {
                    print("\(path): \(error.description)")
                    exit(2)
                }
                bytes.withUnsafeBytes { harness($0) }
                count += 1
            }
        }
        print("replayed \(count) inputs")
        exit(0)
        #endif
    }

    /// `path` itself, or the regular files directly inside it (sorted) when it is a directory.
    private static func files(at path: String) -> [String] {
        guard let dir = opendir(path) else { return [path] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if name.hasPrefix(".") { continue }
            names.append(path + "/" + name)
        }
        return names.sorted()
    }
}

#if FUZZING
/// The harness libFuzzer calls (a C callback cannot capture it). libFuzzer runs it on one thread.
nonisolated(unsafe) private var currentHarness: ((UnsafeRawBufferPointer) -> Void)?

/// libFuzzer's entry point for programs that have their own `main` (compiler-rt, FuzzerDriver.cpp).
@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>,
                                 _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
                                 _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt
#endif
