#!/usr/bin/env bash
# Creates throwaway keys and certificates for the tests, the demo and the benchmark:
#   ca.pem / ca.key                     a test CA, trusted by the client through PUSH_OPT_CA_FILE
#   server.pem / server.key             "localhost" + 127.0.0.1 + ::1, signed by the test CA
#   untrusted-ca.pem, untrusted-server.pem / .key   the same names, signed by a CA nobody trusts
#   AuthKey_TESTKEY001.p8               an Apple-style token key (PKCS#8 PEM, P-256), key id TESTKEY001
#   AuthKey_TESTKEY001.pub.pem          its public half (what the mock verifies JWTs with)
#   AuthKey_WRONGKEY01.p8               another P-256 key (signs tokens the mock must reject)
#   rsa.key                             an RSA key (a wrong-type .p8)
#   client.pem / client.key             a client certificate from the test CA (certificate auth)
#   client.p12                          the same as PKCS#12, password "secret"
#   untrusted-client.pem / .key         a client certificate from the untrusted CA
# Usage: scripts/make-test-pki.sh DIR   (does nothing when DIR/ca.pem already exists)
set -euo pipefail
dir=${1:?usage: make-test-pki.sh DIR}
mkdir -p "$dir"
cd "$dir"
[ -f ca.pem ] && [ -f client.p12 ] && exit 0

make_ca() { # name
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1.key" -out "$1.pem" \
    -days 3650 -subj "/CN=swiftpush $1" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
}
make_server() { # name ca
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1.key" -out "$1.csr" \
    -subj "/CN=localhost" 2>/dev/null
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n' > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -out "$1.pem" -days 3650 \
    -extfile "$1.ext" 2>/dev/null
  rm -f "$1.csr" "$1.ext"
}
make_ca ca
make_server server ca
make_ca untrusted-ca
make_server untrusted-server untrusted-ca
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out AuthKey_TESTKEY001.p8 2>/dev/null
openssl pkey -in AuthKey_TESTKEY001.p8 -pubout -out AuthKey_TESTKEY001.pub.pem 2>/dev/null
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out rsa.key 2>/dev/null
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out AuthKey_WRONGKEY01.p8 2>/dev/null
make_client() { # name ca
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1.key" -out "$1.csr" \
    -subj "/CN=Apple Push Services: com.example.app/UID=com.example.app" 2>/dev/null
  printf 'extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n' > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -out "$1.pem" -days 3650 \
    -extfile "$1.ext" 2>/dev/null
  rm -f "$1.csr" "$1.ext"
}
make_client client ca
make_client untrusted-client untrusted-ca
openssl pkcs12 -export -in client.pem -inkey client.key -certfile ca.pem -out client.p12 -passout pass:secret 2>/dev/null
echo "test PKI in $dir"
