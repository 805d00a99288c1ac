#!/bin/bash
# Generate the e2e cluster's CA, component certificates, service-account key pair and
# kubeconfigs with openssl only (short-lived, throw-away, ECDSA P-256). Also the aggregation
# layer's front-proxy CA and the API server's client certificate signed by it
# (front-proxy-client): extension API servers (KubeVirt's virt-api) trust the user the API server
# names in X-Remote-User only from a client with that certificate.
# usage: pki.sh STATE_DIR        env: NODE_NAMES="node1 node2" APISERVER_IP APISERVER_HOST SVC_IP
set -euo pipefail
S=${1:?state dir}
P=$S/pki
mkdir -p "$P"
cd "$P"
APISERVER_IP=${APISERVER_IP:-10.123.0.1}
SVC_IP=${SVC_IP:-10.96.0.1}
APISERVER_HOST=${APISERVER_HOST:-$APISERVER_IP}   # as a URL takes it: an IPv6 address in brackets
NODE_NAMES=${NODE_NAMES:-"node1 node2"}

# ca NAME CN: a self-signed CA
ca() {
  openssl ecparam -name prime256v1 -genkey -noout -out "$1.key" 2>/dev/null
  openssl req -x509 -new -key "$1.key" -subj "/CN=$2" -days 30 -out "$1.crt" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature"
}
ca ca cnperf-e2e-ca
ca front-proxy-ca cnperf-e2e-front-proxy-ca

# [CA=front-proxy-ca] cert NAME CN O [SAN]: signed by ca (or by $CA)
cert() {
  local name=$1 cn=$2 o=$3 san=${4:-} ca=${CA:-ca}
  local subj="/CN=$cn"; [ -n "$o" ] && subj="/O=$o/CN=$cn"
  openssl ecparam -name prime256v1 -genkey -noout -out "$name.key" 2>/dev/null
  openssl req -new -key "$name.key" -subj "$subj" -out "$name.csr"
  {
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=serverAuth,clientAuth"
    [ -n "$san" ] && echo "subjectAltName=$san"
  } > "$name.ext"
  openssl x509 -req -in "$name.csr" -CA "$ca.crt" -CAkey "$ca.key" -CAcreateserial -days 30 \
    -extfile "$name.ext" -out "$name.crt" 2>/dev/null
  rm -f "$name.csr" "$name.ext"
}

cert apiserver kube-apiserver "" \
  "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,IP:$SVC_IP,IP:$APISERVER_IP,IP:127.0.0.1"
cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters
cert admin kubernetes-admin system:masters
cert kcm system:kube-controller-manager ""
cert scheduler system:kube-scheduler ""
cert kube-proxy system:kube-proxy ""
# the API server's identity when it proxies to an aggregated API (--proxy-client-cert-file);
# its CN is the one name --requestheader-allowed-names allows
CA=front-proxy-ca cert front-proxy-client front-proxy-client ""
for n in $NODE_NAMES; do
  # kubelet serving + client cert; the IP SAN lets the apiserver verify it if asked to
  cert "$n" "system:node:$n" system:nodes "DNS:$n"
done

openssl genrsa -out sa.key 2048 2>/dev/null
openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null

# kubeconfig NAME CERT  (written directly: no kubectl needed)
b64() { base64 -w0 < "$1"; }
kc() {
  cat > "$S/$1.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: cnperf-e2e
  cluster:
    server: https://$APISERVER_HOST:6443
    certificate-authority-data: $(b64 "$P/ca.crt")
users:
- name: $1
  user:
    client-certificate-data: $(b64 "$P/$2.crt")
    client-key-data: $(b64 "$P/$2.key")
contexts:
- name: cnperf-e2e
  context: {cluster: cnperf-e2e, user: $1}
current-context: cnperf-e2e
KC
  chmod 600 "$S/$1.kubeconfig"
}
kc admin admin
kc kcm kcm
kc scheduler scheduler
kc kube-proxy kube-proxy
for n in $NODE_NAMES; do kc "$n" "$n"; done
echo "pki ok: $P"
