#if canImport(Glibc)
import Glibc
#endif

/// Makes any attempt by OpenSSL to ask the user for a password a crash: its default UI method
/// (what PEM_def_callback uses to prompt on the terminal when a loader passes no password
/// callback) is replaced by one whose reader stops the process. Without this, a prompt would go
/// unnoticed under libFuzzer, which has no terminal. The UI functions are looked up because the
/// COpenSSL module does not declare them.
public enum PasswordPrompts {
    private typealias Reader = @convention(c) (OpaquePointer?, OpaquePointer?) -> Int32

    public static func forbid() {
        let process = dlopen(nil, RTLD_NOW)
        func symbol(_ name: String) -> UnsafeMutableRawPointer {
            guard let s = dlsym(process, name) else { fatalError("\(name) not found") }
            return s
        }
        let create = unsafeBitCast(symbol("UI_create_method"), to: (@convention(c) (UnsafePointer<CChar>?) -> OpaquePointer?).self)
        let setReader = unsafeBitCast(symbol("UI_method_set_reader"), to: (@convention(c) (OpaquePointer?, Reader?) -> Int32).self)
        let setDefault = unsafeBitCast(symbol("UI_set_default_method"), to: (@convention(c) (OpaquePointer?) -> Void).self)
        guard let method = create("fuzz: no prompts") else { fatalError("UI_create_method") }
        _ = setReader(method) { _, _ in fatalError("fuzz property violated: OpenSSL asked the terminal for a password") }
        setDefault(method) // kept for the life of the process
    }
}
