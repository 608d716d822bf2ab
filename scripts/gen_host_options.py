"""How the hosts spell the options of Tables/options.tsv (the flag, flag help, go and app key
columns), for scripts/gen_tables.py:

  Sources/SwiftPushKit/Generated/AppKeys.swift            the keys of an app in the worker's
                                                          configuration file, by option
  Sources/SwiftPushCLI/Generated/ConnectionOptions.swift  the CLI's TokenKeyOptions and
                                                          ConnectionOptions (flags, help, ranges)
  Bindings/go/config.go                                   the Go binding's Config struct

Every host hands what it read to one builder, `APNsConfiguration(options:naming:)`
(Sources/SwiftPushKit/APNsOptionValues.swift), or, for Go, to the C ABI's setters: the checks
and the defaults are the library's, in one place.
"""
import re

# The token key's options: their own group (TokenKeyOptions), shared by `jwt`.
TOKEN_KEY = ["TOKEN_KEY_FILE", "KEY_ID", "TEAM_ID"]
# The other credentials come next in --help, then the destination (ENVIRONMENT's flags first).
CERTIFICATE = ["CERT_FILE", "CERT_KEY_FILE", "P12_FILE", "P12_PASSWORD"]
# Host names the flag help may cite by the C header's macro (one place names them).
HOST_MACROS = ["PUSH_HOST_PRODUCTION", "PUSH_HOST_SANDBOX"]
COMPLETIONS = {"FILE": ".file()", "DIR": ".directory"}
SWIFT_INITIALISMS = {"id": "ID", "ca": "CA", "p12": "P12", "io": "IO"}


def swift_property(flag):
    """--key-id -> keyID, --ca-file -> caFile, --cert-key -> certKey."""
    words = flag.lstrip("-").split("-")
    return words[0] + "".join(SWIFT_INITIALISMS.get(w, w.capitalize()) for w in words[1:])


def swift_help(text):
    """The flag help as a Swift string literal, a header macro interpolated."""
    text = text.replace("\\", "\\\\").replace('"', '\\"')
    for macro in HOST_MACROS:
        text = text.replace(macro, f"\\({macro})")
    return f'"{text}"'


def flagged(options, hosts, names):
    return [(r, hosts[r[0]]) for n in names for r in options if r[0] == n and hosts[n]["flag"] != "-"]


def swift_flag(o, row, host, case):
    flag, value = host["flag"].split(" ")
    name, kind = flag[2:], row[2]
    completion = f", completion: {COMPLETIONS[value]}" if value in COMPLETIONS else ""
    swift_type = "Int" if kind == "int" else "String"
    o.append(f'    @Option(name: .customLong("{name}"), help: ArgumentHelp({swift_help(host["flag_help"])}, valueName: "{value}"){completion})')
    o.append(f"    var {swift_property(flag)}: {swift_type}?")


def swift_values(o, rows, case, extra=()):
    o.append("")
    o.append("    /// Adds the options given to `values`, by option.")
    o.append("    func add(to values: inout APNsOptionValues) {")
    o.extend(extra)
    for row, host in rows:
        prop = swift_property(host["flag"].split(" ")[0])
        table = "numbers" if row[2] == "int" else "text"
        o.append(f"        if let {prop} {{ values.{table}[.{case(row[0])}] = {prop} }}")
    o.append("    }")


def cli_connection_options(options, hosts, header, case):
    o = [f"// {header}", "", "// swiftlint:disable all", "", "#if canImport(Glibc)", "import Glibc", "#endif",
         "import ArgumentParser", "import CSwiftPushABI", "import PushClientCore", "import SwiftPushKit", ""]
    token = flagged(options, hosts, TOKEN_KEY)
    o.append("/// `--key FILE --key-id ID --team-id TEAM`: a token signing key (.p8) and who it belongs to.")
    o.append("/// Shared by `jwt` and, through ConnectionOptions, `send`, `channels` and `bench`.")
    o.append("struct TokenKeyOptions: ParsableArguments {")
    for row, host in token:
        swift_flag(o, row, host, case)
    swift_values(o, token, case)
    o.append("}")
    o.append("")
    rest = flagged(options, hosts, CERTIFICATE) + flagged(options, hosts, ["ENVIRONMENT"]) + [
        (r, hosts[r[0]]) for r in options
        if hosts[r[0]]["flag"] != "-" and r[0] not in TOKEN_KEY + CERTIFICATE + ["ENVIRONMENT"]]
    o.append("/// The options that say how to reach APNs and who we are: credentials (token key or client")
    o.append("/// certificate) and destination (environment or host, port, CA file, proxy), one flag per")
    o.append("/// option of `Tables/options.tsv` that has one. Shared by `send`, `channels` and `bench`")
    o.append("/// (`@OptionGroup`); what they say becomes a configuration in one place,")
    o.append("/// `APNsConfiguration(options:naming:)`, which checks them as the library does.")
    o.append("struct ConnectionOptions: ParsableArguments {")
    o.append("    @OptionGroup var token: TokenKeyOptions")
    environment = None
    for row, host in rest:
        if row[0] == "ENVIRONMENT":
            environment = host["flag"].split(" ")
            for flag, text in zip(environment, host["flag_help"].split("|")):
                o.append(f"    @Flag(name: .customLong(\"{flag[2:]}\"), help: ArgumentHelp({swift_help(text)}))")
                o.append(f"    var {swift_property(flag)} = false")
        else:
            swift_flag(o, row, host, case)
    o.append("    /// The .p12 password from a file, a variable or a prompt (P12PasswordSource.swift): what")
    o.append("    /// `configuration()` reads, so that `ps` need not show it.")
    o.append("    @OptionGroup var passwordSource: P12PasswordSource")
    o.append("")
    o.append("    /// What can be checked without reading a file: the ranges, the flags that exclude each other.")
    o.append("    func validate() throws(ValidationError) {")
    if environment:
        first, second = (swift_property(f) for f in environment)
        o.append(f'        if {first} && {second} {{ throw ValidationError("{environment[1]} and {environment[0]} exclude each other") }}')
    for row, host in rest:
        if row[2] == "int" and row[0] != "ENVIRONMENT":
            flag = host["flag"].split(" ")[0]
            o.append(f'        try checkRange({swift_property(flag)}, "{flag[2:]}", PushOption.{case(row[0])}.intRange)')
    o.append("    }")
    extra = ["        token.add(to: &values)"]
    if environment:
        first, second = (swift_property(f) for f in environment)
        o_env = case("ENVIRONMENT")
        extra += [f"        if {second} {{ values.numbers[.{o_env}] = Int(PUSH_ENV_SANDBOX.rawValue) }}",
                  f"        if {first} {{ values.numbers[.{o_env}] = Int(PUSH_ENV_PRODUCTION.rawValue) }}"]
    swift_values(o, [(r, h) for r, h in rest if r[0] != "ENVIRONMENT"], case, extra)
    o.append("")
    o.append("    /// The flag that sets `option`, for messages (\"--key\"); its C name when no flag does.")
    o.append("    static func flag(for option: PushOption) -> String {")
    o.append("        switch option {")
    for row, host in token + rest:
        flags = host["flag"].split(" ")
        spelled = "/".join(flags) if row[0] == "ENVIRONMENT" else flags[0]
        o.append(f'        case .{case(row[0])}: return "{spelled}"')
    o.append("        default: return option.cName")
    o.append("        }")
    o.append("    }")
    o.append("}")
    return "\n".join(o) + "\n"


def swift_app_keys(options, hosts, header, case):
    o = [f"// {header}", "", "// swiftlint:disable all", "", "import PushClientCore", ""]
    o.append("extension APNsOptionValues {")
    o.append("    /// The keys of an app in the worker's configuration file (docs/worker.md), each with the")
    o.append("    /// option it sets: `Tables/options.tsv`'s app key column. An int option's value is a JSON")
    o.append("    /// number (`environment`'s is \"production\" or \"sandbox\"), any other option's a string.")
    o.append("    package static let appKeys: [(key: String, option: PushOption)] = [")
    for row in options:
        key = hosts[row[0]]["app_key"]
        if key != "-":
            o.append(f'        ("{key}", .{case(row[0])}),')
    o.append("    ]")
    o.append("")
    o.append("    /// The app key that sets `option`, for messages (\"key_file\"); its C name when no key does.")
    o.append("    package static func appKey(for option: PushOption) -> String {")
    o.append("        switch option {")
    for row in options:
        key = hosts[row[0]]["app_key"]
        if key != "-":
            o.append(f'        case .{case(row[0])}: return "{key}"')
    o.append("        default: return option.cName")
    o.append("        }")
    o.append("    }")
    o.append("}")
    return "\n".join(o) + "\n"


# The Config fields that are not options, kept here so that the struct is one declaration.
GO_OTHER_FIELDS = """
	// Options sets any other option of the C ABI: an int, int64 or uint value for an integer
	// option, a string or []byte for a string option (see Option.IsString). Applied after the
	// fields above.
	Options map[Option]interface{}

	// Log receives the library's log events of LogLevel and above (default LogInfo); nil
	// leaves the library silent. See LogFunc.
	Log      LogFunc
	LogLevel LogLevel

	// SendTimeout is how long Send and SendBatch wait for room when the queue is full:
	// 0 waits without limit, a negative value not at all (ErrQueueFull at once).
	SendTimeout time.Duration
	// DrainTimeout is how long Close lets notifications in flight finish: 0 means 5 seconds,
	// a negative value not at all.
	DrainTimeout time.Duration
"""


def go_wrap(text, indent, width=100):
    words, lines, line = text.split(), [], ""
    for w in words:
        if line and len(indent) + 3 + len(line) + 1 + len(w) > width:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}" if line else w
    lines.append(line)
    return [f"{indent}// {l}" for l in lines]


def go_config(options, hosts, header, go_name):
    fields = {r[0]: hosts[r[0]]["go"] for r in options if hosts[r[0]]["go"] != "-"}

    def go_type(row):
        if row[0] == "TOKEN_KEY_PEM":
            return "[]byte"
        if row[2] == "string":
            return "string"
        return "time.Duration" if row[0].endswith("_MS") else "int"

    def go_doc(row):
        name, kind, default, doc = row[0], row[2], row[5], row[7]
        doc = re.sub(r"PUSH_OPT_([A-Z0-9_]+)", lambda m: fields.get(m.group(1), "Option" + m.group(1)), doc)
        doc = doc.replace("PUSH_E_QUEUE_FULL", "ErrQueueFull").replace("(see README, ", "(README, ")
        if row[0].endswith("_MS"):
            doc += " Counted in whole milliseconds."
        if default != "-":
            shown = f"{int(default) // 1000} s" if name.endswith("_MS") and int(default) % 1000 == 0 else default
            doc += f" Default {shown}."
        return f"{fields[name]}: {doc}"

    o = [f"// {header}", "", "package swiftpush", "", "import \"time\"", ""]
    o.append("// Config configures a Client. Zero values leave the library's defaults (see Option* and")
    o.append("// Include/swiftpush.h). Token authentication needs KeyFile (or KeyPEM), KeyID and TeamID;")
    o.append("// certificate authentication CertFile (and CertKeyFile) or P12File (and P12Password). The")
    o.append("// option fields come from Tables/options.tsv (its go column), in its order.")
    o.append("type Config struct {")
    rows = [r for r in options if r[0] in fields]
    for i, row in enumerate(rows):
        if i:
            o.append("")
        o.extend(go_wrap(go_doc(row), "\t"))
        o.append(f"\t{fields[row[0]]} {go_type(row)}")
    o.append(GO_OTHER_FIELDS.rstrip("\n"))
    o.append("}")
    o.append("")
    o.append("// eachField hands every option field that is not zero to setString or setInt, in the")
    o.append("// table's order: the C ABI's setters check them.")
    o.append("func (cfg *Config) eachField(setString func(Option, []byte) error, setInt func(Option, int64) error) error {")
    for row in rows:
        f, t, opt = fields[row[0]], go_type(row), "Option" + go_name(row[0])
        if t == "string":
            o.append(f'\tif cfg.{f} != "" {{')
            o.append(f"\t\tif err := setString({opt}, []byte(cfg.{f})); err != nil {{")
        elif t == "[]byte":
            o.append(f"\tif len(cfg.{f}) > 0 {{")
            o.append(f"\t\tif err := setString({opt}, cfg.{f}); err != nil {{")
        elif t == "time.Duration":
            o.append(f"\tif cfg.{f} != 0 {{")
            o.append(f"\t\tif err := setInt({opt}, cfg.{f}.Milliseconds()); err != nil {{")
        else:
            o.append(f"\tif cfg.{f} != 0 {{")
            o.append(f"\t\tif err := setInt({opt}, int64(cfg.{f})); err != nil {{")
        o.append("\t\t\treturn err")
        o.append("\t\t}")
        o.append("\t}")
    o.append("\treturn nil")
    o.append("}")
    return "\n".join(o) + "\n"


def outputs(options, hosts, header, case, swift_api_option, go=True):
    out = {
        "Sources/SwiftPushKit/Generated/AppKeys.swift": swift_app_keys(options, hosts, header, case),
        "Sources/SwiftPushCLI/Generated/ConnectionOptions.swift": cli_connection_options(options, hosts, header, case),
    }
    if go:
        import gen_bindings_tables  # noqa: E402  (the Go names of the options)
        out["Bindings/go/config.go"] = go_config(options, hosts, header, gen_bindings_tables.go_camel_from_snake)
    return out
