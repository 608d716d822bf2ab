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
# For the bad-server and security tests (all from the test CA unless said otherwise):
#   expired-server.pem / .key           "localhost", valid only in 2020
#   notyet-server.pem / .key            "localhost", valid only from 2099
#   selfsigned-server.pem / .key        "localhost", self-signed (no CA)
#   otherhost-server.pem / .key         "other.example.com" only (a host-name mismatch for "localhost")
#   expired-client.pem / .key           a client certificate valid only in 2020
#   notyet-client.pem / .key            a client certificate valid only from 2099
# Usage: scripts/make-test-pki.sh DIR   (makes only what DIR lacks: a CA already there is kept,
# so tests running against DIR are not disturbed)
set -euo pipefail
dir=${1:?usage: make-test-pki.sh DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)  # absolute: later steps run from inside it
cd "$dir"
[ -f ca.pem ] && [ -f client.p12 ] && [ -f notyet-client.pem ] && exit 0

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
make_client() { # name ca
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1.key" -out "$1.csr" \
    -subj "/CN=Apple Push Services: com.example.app/UID=com.example.app" 2>/dev/null
  printf 'extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n' > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -out "$1.pem" -days 3650 \
    -extfile "$1.ext" 2>/dev/null
  rm -f "$1.csr" "$1.ext"
}
if ! { [ -f ca.pem ] && [ -f client.p12 ]; }; then
  make_ca ca
  make_server server ca
  make_ca untrusted-ca
  make_server untrusted-server untrusted-ca
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out AuthKey_TESTKEY001.p8 2>/dev/null
  openssl pkey -in AuthKey_TESTKEY001.p8 -pubout -out AuthKey_TESTKEY001.pub.pem 2>/dev/null
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out rsa.key 2>/dev/null
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out AuthKey_WRONGKEY01.p8 2>/dev/null
  make_client client ca
  make_client untrusted-client untrusted-ca
  openssl pkcs12 -export -in client.pem -inkey client.key -certfile ca.pem -out client.p12 -passout pass:secret 2>/dev/null
fi

# Certificates with chosen validity dates: `openssl x509 -req` (OpenSSL 3.0) cannot set
# notBefore, `openssl ca` can. Its database lives in a scratch directory removed afterwards.
make_dated() { # name subject start end extensions...
  local name=$1 subject=$2 start=$3 end=$4; shift 4
  local db
  db=$(mktemp -d "$dir/.ca-XXXXXX")
  touch "$db/index.txt"
  echo 1000 > "$db/serial"
  { printf '[ca]\ndefault_ca=test\n[test]\ndatabase=%s/index.txt\nnew_certs_dir=%s\nserial=%s/serial\n' "$db" "$db" "$db"
    printf 'default_md=sha256\npolicy=any\nunique_subject=no\ncopy_extensions=none\n[any]\ncommonName=supplied\n[ext]\n'
    printf '%s\n' "$@"; } > "$db/ca.cnf"
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$name.key" -out "$db/req.csr" \
    -subj "$subject" 2>/dev/null
  openssl ca -batch -config "$db/ca.cnf" -cert ca.pem -keyfile ca.key -in "$db/req.csr" -out "$name.pem" \
    -startdate "$start" -enddate "$end" -extensions ext -notext -preserveDN 2>/dev/null
  rm -rf "$db"
}
server_ext=(subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1 extendedKeyUsage=serverAuth basicConstraints=CA:FALSE)
client_subject="/CN=Apple Push Services: com.example.app/UID=com.example.app"
client_ext=(extendedKeyUsage=clientAuth basicConstraints=CA:FALSE)
[ -f expired-server.pem ] || make_dated expired-server /CN=localhost 20200101000000Z 20210101000000Z "${server_ext[@]}"
[ -f notyet-server.pem ] || make_dated notyet-server /CN=localhost 20990101000000Z 21000101000000Z "${server_ext[@]}"
[ -f otherhost-server.pem ] || make_dated otherhost-server /CN=other.example.com 20200101000000Z 20991231000000Z \
  subjectAltName=DNS:other.example.com extendedKeyUsage=serverAuth basicConstraints=CA:FALSE
[ -f expired-client.pem ] || make_dated expired-client "$client_subject" 20200101000000Z 20210101000000Z "${client_ext[@]}"
if [ ! -f selfsigned-server.pem ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout selfsigned-server.key \
    -out selfsigned-server.pem -days 3650 -subj /CN=localhost \
    -addext subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1 -addext basicConstraints=CA:FALSE 2>/dev/null
fi
# Last: its presence tells the check at the top that everything is there.
[ -f notyet-client.pem ] || make_dated notyet-client "$client_subject" 20990101000000Z 21000101000000Z "${client_ext[@]}"
echo "test PKI in $dir"
