print("swiftpush")
