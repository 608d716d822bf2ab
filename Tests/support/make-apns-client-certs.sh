#!/usr/bin/env bash
# Client certificates shaped like Apple's push certificates, for the mock's certificate
# authentication tests. Signed by the test CA of scripts/make-test-pki.sh (DIR/ca.pem, ca.key):
#   apns-multi.pem / .key    UID=com.example.app and Apple's topics extension
#                            (1.2.840.113635.100.6.3.6) listing the app, .voip and .complication
#   apns-single.pem / .key   UID=com.example.single only (the subject is the default topic)
#   apns-plain.pem / .key    no UID, no topics (restricts nothing)
# Usage: Tests/support/make-apns-client-certs.sh DIR   (does nothing when they exist)
set -euo pipefail
dir=${1:?usage: make-apns-client-certs.sh DIR}
cd "$dir"
[ -f apns-plain.pem ] && exit 0
[ -f ca.pem ] && [ -f ca.key ] || { echo "no test CA in $dir (run scripts/make-test-pki.sh first)" >&2; exit 1; }

cat > apns-ext.cnf <<'CNF'
[multi]
basicConstraints = CA:FALSE
extendedKeyUsage = clientAuth
1.2.840.113635.100.6.3.6 = ASN1:SEQUENCE:topics
[topics]
t1 = UTF8:com.example.app
k1 = SEQUENCE:app
t2 = UTF8:com.example.app.voip
k2 = SEQUENCE:voip
t3 = UTF8:com.example.app.complication
k3 = SEQUENCE:complication
[app]
k = UTF8:app
[voip]
k = UTF8:voip
[complication]
k = UTF8:complication
[plain]
basicConstraints = CA:FALSE
extendedKeyUsage = clientAuth
CNF

make_client() { # name subject extension-section
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1.key" -out "$1.csr" -subj "$2" 2>/dev/null
  openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -out "$1.pem" -days 3650 \
    -extfile apns-ext.cnf -extensions "$3" 2>/dev/null
  rm -f "$1.csr"
}
make_client apns-multi "/UID=com.example.app/CN=Apple Push Services: com.example.app" multi
make_client apns-single "/UID=com.example.single/CN=Apple Push Services: com.example.single" plain
make_client apns-plain "/CN=swiftpush test client" plain
rm -f apns-ext.cnf
