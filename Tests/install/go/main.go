// A Go program built by Tests/install/run.sh (and Tests/deb/run.sh) against an installed
// libswiftpush through `#cgo pkg-config: swiftpush` only: no CGO_ flags, no in-repo paths.
// usage: go_send KEY.p8 PORT CA.pem   (sends one notification to localhost:PORT, prints "tag outcome")
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"swiftpush.dev/swiftpush"
)

func main() {
	port, _ := strconv.Atoi(os.Args[2])
	client, err := swiftpush.Open(swiftpush.Config{Host: "localhost", Port: port, CAFile: os.Args[3],
		KeyFile: os.Args[1], KeyID: "TESTKEY001", TeamID: "TEAM123456", Topic: "com.example.app"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer client.Close()
	err = client.Send(swiftpush.Notification{Token: "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0",
		Payload: []byte(`{"aps":{"alert":"installed"}}`), Tag: 7})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	results, err := client.Poll(1, 10*time.Second)
	if err != nil || len(results) != 1 {
		fmt.Fprintln(os.Stderr, results, err)
		os.Exit(1)
	}
	fmt.Println(results[0].Tag, results[0].Outcome)
}
