module swiftpush.dev/swiftpush

go 1.19
