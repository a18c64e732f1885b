#!/usr/bin/env bash
# A one-node Kubernetes cluster on this machine, from registry packages only (decision 47).
#
#   scripts/k8s.sh packages  install the cluster's Debian packages (containerd, runc, etcd, gcc, …)
#   scripts/k8s.sh build   build the cluster's binaries into .infra/k8s/bin (each skipped when it is
#                          already built at its version), at nice 19; outside the heavy-work lock
#   scripts/k8s.sh up      build, then start the cluster and deploy k8s/overlays/local; idempotent;
#                          prints the `export` lines of `env` on stdout (progress goes to stderr)
#   scripts/k8s.sh env     print `export` lines: KUBECONFIG, PATH (the cluster's kubectl first),
#                          READ_URL, CRED_URL, INGEST_URL, NOTIFIER_URL, CONSOLE_URL (published on
#                          127.0.0.1)
#   scripts/k8s.sh down    stop everything `up` started: pods, containerd, the control plane; no
#                          process, mount, network namespace, bridge or iptables chain of it is left.
#                          etcd's data goes (each `up` starts a new cluster); the images in containerd,
#                          the built binaries, the certificates and the generated keys stay
#   scripts/k8s.sh status  exit 1 when the API server does not answer
#
#   out="$(scripts/k8s.sh up)" && eval "$out" && kubectl -n rsd get pods
#
# What runs (all as processes of this machine, state in .infra/k8s/run, logs in .infra/k8s/run/logs):
#   etcd                    Debian's etcd-server, on 127.0.0.1:12379 (plain HTTP, loopback only)
#   containerd              Debian's containerd with runc and the CNI plugins (bridge, host-local,
#                           portmap, loopback); its own socket, root and state, not the system's
#   kube-apiserver          :6443; the host's clients use https://127.0.0.1:6443, pods reach it as the
#                           Service kubernetes.default at the bridge's address 10.244.0.1. An iptables
#                           chain (RSD-K8S-GUARD) drops anything else that reaches its port
#   kube-controller-manager, kube-scheduler   on 127.0.0.1
#   kubelet                 node rsd-node, its InternalIP the bridge's 10.244.0.1; cgroupfs on the
#                           kernel's cgroup v1 hierarchies (failCgroupV1: false)
#   kube-proxy              iptables mode; NodePorts only on 127.0.0.0/8
#   kube-router             the NetworkPolicy engine only (iptables and ipset; no routing, no proxy)
#   in the cluster          CoreDNS (cluster.local only: no upstream resolver) and metrics-server
# Pods get network namespaces on the bridge rsd-cni0 (10.244.0.0/24); Services are 10.96.0.0/16.
# Nothing is sent anywhere but to 127.0.0.1, the bridge and the pods behind it.
#
# Kubernetes v1.34: the last minor whose kubelet starts on cgroup v1 by default; from v1.35 on,
# failCgroupV1 defaults to true and cgroup v1 is on its way out. This machine's kernel mounts the
# cgroup v1 controllers with an empty cgroup2 hierarchy beside them (no unified mode), and Debian's
# containerd is 1.6, the containerd 1.x that v1.34 still accepts.
#
# Builds (`build`, also run by `up`): every Go binary (the Kubernetes commands, CoreDNS with the
# Corefile's plugins, metrics-server, kube-router, crictl) in one `go build` of
# scripts/infra/k8s/go.mod, which requires k8s.io/kubernetes and the others and pins Kubernetes's
# staging modules with replace lines, through the Go module proxy, with Go's own caches (GOCACHE,
# GOMODCACHE), at nice 19; the pause container from the pause.c that the Kubernetes module ships,
# with gcc. Each binary has a stamp of the module's digest beside it. The images: the project's
# (scripts/containers.sh builds its bases with Podman, then the Dockerfile as scripts/ci/containers.sh
# builds it), Kafka, the MongoDB-wire server and Redis from scripts/containers.sh, and small images
# of the pause, CoreDNS and metrics-server binaries, all imported into containerd
# (`podman save | ctr images import`) when their Podman image ID changed. Run as root.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
SRC="$SCRIPT_DIR/infra/k8s"
CACHE="$ROOT/.infra/k8s"
BIN="$CACHE/bin"
RUN="$CACHE/run"
LOGS="$RUN/logs"
PKI="$RUN/pki"

K8S_VERSION=v1.34.4
# The versions scripts/infra/k8s/go.mod requires (CoreDNS v1.13 builds on client-go v0.34, the
# cri-tools of the same Kubernetes minor); read from it, so that the images' tags follow the build.
mod_version() { grep -oE "^[[:space:]]*(require )?$1 v[^ ]+" "$SRC/go.mod" | awk '{ print $NF }'; }
COREDNS_VERSION="$(mod_version github.com/coredns/coredns)"
METRICS_SERVER_VERSION="$(mod_version sigs.k8s.io/metrics-server)"
KUBE_ROUTER_VERSION="$(mod_version github.com/cloudnativelabs/kube-router/v2)"
CRICTL_VERSION="$(mod_version sigs.k8s.io/cri-tools)"
PAUSE_IMAGE=localhost/rsd-k8s-pause:3.10
COREDNS_IMAGE="localhost/rsd-k8s-coredns:$COREDNS_VERSION"
METRICS_SERVER_IMAGE="localhost/rsd-k8s-metrics-server:$METRICS_SERVER_VERSION"
# A tag of its own: the Compose flow and other checkouts on this machine tag localhost/rsd:local.
APP_IMAGE=localhost/rsd:k8s
INFRA_IMAGES=(localhost/rsd-kafka:3.9.1 localhost/rsd-ferretdb:1.24 localhost/rsd-redis:bookworm)

NODE_NAME=rsd-node
BRIDGE=rsd-cni0
NODE_IP=10.244.0.1
POD_CIDR=10.244.0.0/24
SERVICE_CIDR=10.96.0.0/16
API_SERVICE_IP=10.96.0.1
DNS_SERVICE_IP=10.96.0.10
API_PORT=6443
ETCD_PORT=12379
ETCD_PEER_PORT=12380
GUARD_CHAIN=RSD-K8S-GUARD
CTRD_SOCK=/run/rsd-k8s/containerd.sock
CTRD_STATE=/run/rsd-k8s/containerd
CTR_NS=k8s.io
# The Services of the local overlay, published on loopback as NodePorts (kube-proxy: 127.0.0.0/8).
READ_PORT=30080
CRED_PORT=30081
INGEST_PORT=30082
NOTIFIER_PORT=30083
CONSOLE_PORT=30084

ADMIN_KUBECONFIG="$RUN/admin.kubeconfig"
OVERLAY="$ROOT/k8s/overlays/local"
ADDONS="$SRC/addons"
APT_PACKAGES=(containerd runc containernetworking-plugins etcd-server conntrack ipset iptables iproute2 procps mount openssl gcc libc6-dev binutils)

LOG_TAG=k8s
# shellcheck source=scripts/lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"
kubectl() { "$BIN/kubectl" --kubeconfig "$ADMIN_KUBECONFIG" "$@"; }
ctr() { command ctr --address "$CTRD_SOCK" -n "$CTR_NS" "$@"; }

# ---------------------------------------------------------------- packages

install_packages() {
  apt_install "${APT_PACKAGES[@]}"
}

# ---------------------------------------------------------------- builds

# Stamped once built: a second build of the same version is skipped.
built() { [[ -x "$BIN/$1" && "$(cat "$BIN/$1.stamp" 2>/dev/null)" == "$2" ]]; }
stamp() { printf '%s' "$2" >"$BIN/$1.stamp"; }

go_env() {
  command -v go >/dev/null || die "go not found (Go >= 1.24 builds the cluster)"
  # Never another Go toolchain; no VCS stamping (module copies have no .git); static binaries.
  export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false CGO_ENABLED=0
}

# The versions the commands report, as their release builds stamp them (-X of a package a binary
# does not link is ignored, so one set of flags serves all ten).
version_ldflags() {
  local v="$K8S_VERSION" minor
  minor="$(cut -d. -f2 <<<"$v")"
  local flags="-s -w" pkg
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X $pkg.gitVersion=$v -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
    flags+=" -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  flags+=" -X github.com/coredns/coredns/coremain.GitCommit=$COREDNS_VERSION"
  flags+=" -X sigs.k8s.io/metrics-server/pkg/version.gitVersion=$METRICS_SERVER_VERSION"
  flags+=" -X github.com/cloudnativelabs/kube-router/v2/pkg/version.Version=$KUBE_ROUTER_VERSION"
  flags+=" -X sigs.k8s.io/cri-tools/pkg/version.Version=$CRICTL_VERSION"
  printf '%s' "$flags"
}

# Every Go binary of the cluster from the one module, in one `go build`: they share client-go,
# apimachinery, apiserver, grpc and the rest at one version each, so Go compiles each shared package
# once and links the binaries in parallel. Built apart (`go install module@version`, each on its own
# go.sum), CoreDNS, metrics-server, kube-router and crictl compiled their own copies of those: about
# half the CPU of a cold build then (docs/contributors/measurements.md). CoreDNS is scripts/infra/k8s/coredns, with
# the Corefile's plugins.
GO_BINARIES=(
  kube-apiserver:k8s.io/kubernetes/cmd/kube-apiserver
  kube-controller-manager:k8s.io/kubernetes/cmd/kube-controller-manager
  kube-scheduler:k8s.io/kubernetes/cmd/kube-scheduler
  kubelet:k8s.io/kubernetes/cmd/kubelet
  kube-proxy:k8s.io/kubernetes/cmd/kube-proxy
  kubectl:k8s.io/kubernetes/cmd/kubectl
  coredns:./coredns
  metrics-server:sigs.k8s.io/metrics-server/cmd/metrics-server
  kube-router:github.com/cloudnativelabs/kube-router/v2/cmd/kube-router
  crictl:sigs.k8s.io/cri-tools/cmd/crictl
)

build_go() {
  local want entry name t0 todo=() pkgs=() out
  want="$(cat "$SRC/go.mod" "$SRC/go.sum" "$SRC/coredns/main.go" | sha256sum | cut -c1-16)"
  for entry in "${GO_BINARIES[@]}"; do
    name="${entry%%:*}"
    built "$name" "$want" && continue
    todo+=("$name")
    pkgs+=("${entry#*:}")
  done
  ((${#todo[@]} == 0)) && return 0
  t0="$(now)"
  out="$(mktemp -d "$BIN/.build.XXXXXX")"
  log "building ${todo[*]} (log in ${LOGS#"$ROOT"/}/build-go.log)"
  if ! (cd "$SRC" && nice -n 19 go build -trimpath -ldflags "$(version_ldflags)" -o "$out/" "${pkgs[@]}") \
    </dev/null >"$LOGS/build-go.log" 2>&1; then
    tail -n 30 "$LOGS/build-go.log" | sed 's/^/     /' >&2
    rm -rf "$out"
    die "go build of ${todo[*]} (scripts/infra/k8s/go.mod) failed"
  fi
  for name in "${todo[@]}"; do
    mv "$out/$name" "$BIN/$name"
    stamp "$name" "$want"
  done
  rm -rf "$out"
  log "built ${todo[*]} in $(elapsed "$t0")"
}

# The pause container's process, from the Kubernetes module's own source (static, as released).
build_pause() {
  local src want t0
  src="$(cd "$SRC" && go list -m -f '{{.Dir}}' k8s.io/kubernetes)/build/pause/linux/pause.c"
  [[ -f "$src" ]] || die "pause.c not found in the Kubernetes module ($src)"
  want="pause $(sha256sum "$src" | cut -c1-16)"
  built pause "$want" && return 0
  t0="$(now)"
  gcc -Os -Wall -Werror -static -DVERSION=3.10-rsd -o "$BIN/pause.tmp" "$src" >"$LOGS/build-pause.log" 2>&1 ||
    die "gcc of pause.c failed (log in ${LOGS#"$ROOT"/}/build-pause.log)"
  strip "$BIN/pause.tmp" 2>/dev/null || true
  mv "$BIN/pause.tmp" "$BIN/pause"
  stamp pause "$want"
  log "built pause in $(elapsed "$t0")"
}

build_all() {
  mkdir -p "$BIN" "$LOGS"
  go_env
  (
    flock -w 3600 8 || die "another build is still running (lock $CACHE/.build.lock)"
    build_go
    build_pause
  ) 8>"$CACHE/.build.lock"
}

# ---------------------------------------------------------------- processes

pidfile() { printf '%s/%s.pid' "$RUN" "$1"; }
running() { kill -0 "$1" 2>/dev/null && [[ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]]; }

# The pid of NAME if the process this script started still runs (its command line names $RUN or
# the containerd socket, so a recycled pid is never taken for it).
pid_of() {
  local f pid
  f="$(pidfile "$1")"
  [[ -f "$f" ]] || return 0
  pid="$(tr -dc '0-9' <"$f")"
  [[ -n "$pid" ]] && running "$pid" && { tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -qF -e "$RUN" -e "$CTRD_SOCK" && echo "$pid"
  return 0
}

# start NAME CMD...: start CMD in its own session unless it runs already; output to logs/NAME.log.
start() {
  local name="$1" pid i
  shift
  pid="$(pid_of "$name")"
  [[ -n "$pid" ]] && return 0
  setsid "$@" </dev/null >>"$LOGS/$name.log" 2>&1 &
  pid=$!
  echo "$pid" >"$(pidfile "$name")"
  # Until setsid has exec'd the command, its command line does not name the cluster's state, and
  # pid_of would report it gone (a readiness check right after the start then took it for a crash).
  for ((i = 0; i < 50; i++)); do
    [[ -n "$(pid_of "$name")" ]] && break
    sleep 0.1
  done
  log "started $name (pid $pid)"
}

# stop NAME: TERM, then KILL after 20 s.
stop() {
  local name="$1" pid i
  pid="$(pid_of "$name")"
  if [[ -n "$pid" ]]; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 200; i++)); do
      running "$pid" || break
      sleep 0.1
    done
    running "$pid" && kill -KILL "$pid" 2>/dev/null || true
    log "stopped $name"
  fi
  rm -f "$(pidfile "$1")"
}

# wait_for WHAT SECONDS CMD...: until CMD succeeds.
wait_for() {
  local what="$1" limit="$2" t0=$SECONDS
  shift 2
  until "$@" >/dev/null 2>&1; do
    ((SECONDS - t0 < limit)) || die "$what not ready after ${limit} s (logs in ${LOGS#"$ROOT"/})"
    sleep 1
  done
}

# write_file PATH: stdin into PATH, only when it differs (kube-proxy exits when its configuration
# file changes, even to the same content).
write_file() {
  local tmp
  tmp="$(mktemp "$1.XXXXXX")"
  cat >"$tmp"
  if [[ -f "$1" ]] && cmp -s "$tmp" "$1"; then
    rm -f "$tmp"
  else
    mv "$tmp" "$1"
  fi
}

# ---------------------------------------------------------------- network

network_up() {
  sysctl -qw net.ipv4.ip_forward=1
  # Traffic between two pods of the bridge goes through iptables, so Services work pod to pod.
  sysctl -qw net.bridge.bridge-nf-call-iptables=1
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add "$BRIDGE" type bridge
  fi
  ip addr show dev "$BRIDGE" | grep -qF " $NODE_IP/24 " || ip addr add "$NODE_IP/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  # The API server listens on every address (pods reach it on the bridge): only loopback and the
  # bridge may reach its port and the kubelet's.
  if ! iptables -w -n -L "$GUARD_CHAIN" >/dev/null 2>&1; then
    iptables -w -N "$GUARD_CHAIN"
    iptables -w -A "$GUARD_CHAIN" -i lo -j RETURN
    iptables -w -A "$GUARD_CHAIN" -i "$BRIDGE" -j RETURN
    iptables -w -A "$GUARD_CHAIN" -j DROP
  fi
  iptables -w -C INPUT -p tcp -m multiport --dports "$API_PORT,10250" -j "$GUARD_CHAIN" 2>/dev/null ||
    iptables -w -I INPUT -p tcp -m multiport --dports "$API_PORT,10250" -j "$GUARD_CHAIN"

  mkdir -p "$RUN/cni/net.d" "$RUN/cni/ipam"
  write_file "$RUN/cni/net.d/10-rsd.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "rsd-k8s",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{ "subnet": "$POD_CIDR", "gateway": "$NODE_IP" }]],
        "routes": [{ "dst": "0.0.0.0/0" }],
        "dataDir": "$RUN/cni/ipam"
      }
    },
    { "type": "portmap", "capabilities": { "portMappings": true } }
  ]
}
EOF
}

# ---------------------------------------------------------------- certificates

# cert NAME CN O [SAN]: a key and a certificate signed by the cluster's CA (a year).
cert() {
  local name="$1" cn="$2" org="$3" san="${4:-}" ext
  [[ -f "$PKI/$name.crt" ]] && return 0
  ext="$PKI/$name.ext"
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    if [[ -n "$san" ]]; then
      echo "extendedKeyUsage=serverAuth,clientAuth"
      echo "subjectAltName=$san"
    else
      echo "extendedKeyUsage=clientAuth"
    fi
  } >"$ext"
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$PKI/$name.key" 2>/dev/null
  openssl req -new -key "$PKI/$name.key" -subj "/CN=$cn${org:+/O=$org}" -out "$PKI/$name.csr" 2>/dev/null
  openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
    -days 365 -sha256 -extfile "$ext" -out "$PKI/$name.crt" 2>/dev/null
  rm -f "$PKI/$name.csr" "$ext"
}

# kubeconfig NAME CERT: a kubeconfig for the API server on 127.0.0.1 with that client certificate.
kubeconfig() {
  local file="$RUN/$1.kubeconfig" crt="$2"
  [[ -f "$file" ]] && return 0
  "$BIN/kubectl" config set-cluster rsd --kubeconfig "$file" --server "https://127.0.0.1:$API_PORT" \
    --certificate-authority "$PKI/ca.crt" --embed-certs >/dev/null
  "$BIN/kubectl" config set-credentials "$1" --kubeconfig "$file" --client-certificate "$PKI/$crt.crt" \
    --client-key "$PKI/$crt.key" --embed-certs >/dev/null
  "$BIN/kubectl" config set-context rsd --kubeconfig "$file" --cluster rsd --user "$1" >/dev/null
  "$BIN/kubectl" config use-context rsd --kubeconfig "$file" >/dev/null
  chmod 600 "$file"
}

pki() {
  mkdir -p "$PKI"
  chmod 700 "$PKI"
  if [[ ! -f "$PKI/ca.crt" ]]; then
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$PKI/ca.key" 2>/dev/null
    openssl req -x509 -new -key "$PKI/ca.key" -subj "/CN=rsd-k8s-ca" -days 365 -sha256 \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
      -out "$PKI/ca.crt" 2>/dev/null
    log "made the cluster's CA and certificates in ${PKI#"$ROOT"/}"
  fi
  cert apiserver kube-apiserver "" \
    "IP:127.0.0.1,IP:$NODE_IP,IP:$API_SERVICE_IP,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters
  # The aggregation layer's client (metrics-server trusts it through requestheader-client-ca).
  cert front-proxy-client front-proxy-client ""
  cert admin rsd-admin system:masters
  cert controller-manager system:kube-controller-manager ""
  cert scheduler system:kube-scheduler ""
  cert kube-proxy system:kube-proxy ""
  cert kube-router rsd-kube-router ""
  cert kubelet "system:node:$NODE_NAME" system:nodes "IP:$NODE_IP,IP:127.0.0.1,DNS:$NODE_NAME"
  if [[ ! -f "$PKI/sa.key" ]]; then
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$PKI/sa.key" 2>/dev/null
    openssl pkey -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
  fi
  kubeconfig admin admin
  kubeconfig controller-manager controller-manager
  kubeconfig scheduler scheduler
  kubeconfig kubelet kubelet
  kubeconfig kube-proxy kube-proxy
  kubeconfig kube-router kube-router
}

# ---------------------------------------------------------------- components

start_etcd() {
  mkdir -p "$RUN/etcd"
  chmod 700 "$RUN/etcd"
  start etcd /usr/bin/etcd --name rsd --data-dir "$RUN/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "rsd=http://127.0.0.1:$ETCD_PEER_PORT" --listen-metrics-urls "" \
    --quota-backend-bytes 2147483648 --snapshot-count 10000
  wait_for etcd 60 curl -fsS "http://127.0.0.1:$ETCD_PORT/health"
}

start_containerd() {
  mkdir -p "$RUN/containerd" "$CACHE/containerd" "$CTRD_STATE"
  write_file "$RUN/containerd/config.toml" <<EOF
version = 2
root = "$CACHE/containerd"
state = "$CTRD_STATE"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "$CTRD_SOCK"

[ttrpc]
  address = "$CTRD_SOCK.ttrpc"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  enable_selinux = false
  # This machine withholds CAP_SYS_RESOURCE even from root: no process may lower its oom_score_adj
  # (runc fails every pod with "failed to update /proc/self/oom_score_adj: Permission denied"), so
  # the kubelet's negative scores are raised to containerd's own.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "/usr/sbin/runc"
        Root = "$CTRD_STATE/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$RUN/cni/net.d"
    max_conf_num = 1
EOF
  start containerd /usr/bin/containerd --config "$RUN/containerd/config.toml"
  wait_for containerd 60 command ctr --address "$CTRD_SOCK" version
}

start_apiserver() {
  start kube-apiserver "$BIN/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address 0.0.0.0 --secure-port "$API_PORT" --advertise-address "$NODE_IP" \
    --service-cluster-ip-range "$SERVICE_CIDR" \
    --client-ca-file "$PKI/ca.crt" --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
    --kubelet-client-certificate "$PKI/apiserver-kubelet-client.crt" --kubelet-client-key "$PKI/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority "$PKI/ca.crt" --kubelet-preferred-address-types InternalIP \
    --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
    --requestheader-client-ca-file "$PKI/ca.crt" --requestheader-allowed-names front-proxy-client \
    --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
    --requestheader-extra-headers-prefix X-Remote-Extra- \
    --proxy-client-cert-file "$PKI/front-proxy-client.crt" --proxy-client-key-file "$PKI/front-proxy-client.key" \
    --enable-aggregator-routing=true --profiling=false --v=1
  wait_for kube-apiserver 120 kubectl get --raw /readyz
}

start_control_plane() {
  start kube-controller-manager "$BIN/kube-controller-manager" \
    --kubeconfig "$RUN/controller-manager.kubeconfig" \
    --authentication-kubeconfig "$RUN/controller-manager.kubeconfig" \
    --authorization-kubeconfig "$RUN/controller-manager.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false --use-service-account-credentials=true \
    --service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
    --service-cluster-ip-range "$SERVICE_CIDR" --profiling=false --v=1
  start kube-scheduler "$BIN/kube-scheduler" \
    --kubeconfig "$RUN/scheduler.kubeconfig" \
    --authentication-kubeconfig "$RUN/scheduler.kubeconfig" \
    --authorization-kubeconfig "$RUN/scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false --profiling=false --v=1
}

start_node() {
  mkdir -p "$RUN/kubelet"
  write_file "$RUN/kubelet-config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: $PKI/ca.crt
authorization:
  mode: Webhook
tlsCertFile: $PKI/kubelet.crt
tlsPrivateKeyFile: $PKI/kubelet.key
# This kernel mounts cgroup v1 controllers, and there is no systemd: cgroupfs, and cgroup v1 allowed.
cgroupDriver: cgroupfs
failCgroupV1: false
containerRuntimeEndpoint: unix://$CTRD_SOCK
clusterDNS: [$DNS_SERVICE_IP]
clusterDomain: cluster.local
# No upstream resolver: pods resolve cluster names only.
resolvConf: ""
failSwapOn: false
serializeImagePulls: false
# A shared machine: evict only when it is really short.
evictionHard:
  memory.available: 200Mi
  nodefs.available: 5%
  imagefs.available: 5%
  nodefs.inodesFree: 5%
imageGCHighThresholdPercent: 95
imageGCLowThresholdPercent: 90
maxPods: 60
rotateCertificates: false
EOF
  start kubelet "$BIN/kubelet" --config "$RUN/kubelet-config.yaml" --kubeconfig "$RUN/kubelet.kubeconfig" \
    --root-dir "$RUN/kubelet" --hostname-override "$NODE_NAME" --node-ip "$NODE_IP" --v=1
  write_file "$RUN/kube-proxy-config.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: $RUN/kube-proxy.kubeconfig
mode: iptables
hostnameOverride: $NODE_NAME
clusterCIDR: $POD_CIDR
bindAddress: 127.0.0.1
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
# NodePorts on loopback only: the local overlay publishes the Services there.
nodePortAddresses: [127.0.0.0/8]
iptables:
  localhostNodePorts: true
# Leave the kernel's conntrack table size alone.
conntrack:
  maxPerCore: 0
EOF
  start kube-proxy "$BIN/kube-proxy" --config "$RUN/kube-proxy-config.yaml" --v=1
  wait_for "the node $NODE_NAME" 180 kubectl wait --for=condition=Ready "node/$NODE_NAME" --timeout=5s
  kubectl apply --server-side --force-conflicts -f "$ADDONS/kube-router.yaml" >&2
  # The NetworkPolicy engine only: kube-router's firewall (iptables, ipset); routing and the
  # service proxy stay off (the bridge routes, kube-proxy proxies). It needs the Node object, so it
  # starts once the kubelet has registered it, and is ready when its chains are in place.
  start kube-router "$BIN/kube-router" --kubeconfig "$RUN/kube-router.kubeconfig" \
    --hostname-override "$NODE_NAME" --run-firewall=true --run-router=false --run-service-proxy=false \
    --service-cluster-ip-range "$SERVICE_CIDR" --health-port 0 --metrics-port 0 --v=1
  wait_for kube-router 60 kube_router_ready
}

# Not `die` here: wait_for silences its condition's output, so a message would be lost and the run
# would end without a word; a kube-router that exited is never ready, and wait_for names its log.
kube_router_ready() {
  [[ -n "$(pid_of kube-router)" ]] && iptables -w -n -L KUBE-ROUTER-FORWARD >/dev/null 2>&1
}

# ---------------------------------------------------------------- images

# A one-binary image FROM scratch, built with Podman.
binary_image() {
  local image="$1" binary="$2" user="$3" ctx
  ctx="$(mktemp -d)"
  cp "$BIN/$binary" "$ctx/$binary"
  printf 'FROM scratch\nCOPY %s /%s\nUSER %s\nENTRYPOINT ["/%s"]\n' "$binary" "$binary" "$user" "$binary" >"$ctx/Containerfile"
  nice -n 10 podman build -q --format docker -t "$image" -f "$ctx/Containerfile" "$ctx" >/dev/null ||
    die "podman build of $image failed"
  rm -rf "$ctx"
}

# import IMAGE: podman save | ctr images import, unless containerd has it at the same Podman ID.
import_image() {
  local image="$1" id stampfile
  id="$(podman image inspect --format '{{.Id}}' "$image")"
  stampfile="$CACHE/containerd-images/$(tr '/:' '__' <<<"$image")"
  if [[ "$(cat "$stampfile" 2>/dev/null)" == "$id" ]] && ctr images ls -q | grep -qxF "$image"; then
    return 0
  fi
  local t0
  t0="$(now)"
  mkdir -p "$CACHE/containerd-images"
  podman save --format docker-archive "$image" | ctr images import --snapshotter overlayfs - >/dev/null ||
    die "ctr images import of $image failed"
  printf '%s' "$id" >"$stampfile"
  log "imported $image into containerd in $(elapsed "$t0")"
}

images() {
  local image missing=()
  for image in "${INFRA_IMAGES[@]}" localhost/rsd-node:bookworm; do
    podman image exists "$image" || missing+=("$image")
  done
  if ((${#missing[@]} > 0)); then
    log "building the local images (${missing[*]}) with scripts/containers.sh setup"
    bash "$SCRIPT_DIR/containers.sh" setup >&2
  fi
  local t0
  t0="$(now)"
  # As scripts/ci/containers.sh builds it: the Dockerfile on the local Node base (cached layers).
  nice -n 10 podman build --format docker --build-arg NODE_IMAGE=localhost/rsd-node:bookworm \
    --target runtime -t "$APP_IMAGE" "$ROOT" >"$LOGS/image-build.log" 2>&1 ||
    {
      tail -n 30 "$LOGS/image-build.log" >&2
      die "the image did not build from the Dockerfile"
    }
  log "$APP_IMAGE built in $(elapsed "$t0")"
  binary_image "$PAUSE_IMAGE" pause 65535:65535
  binary_image "$COREDNS_IMAGE" coredns 0:0
  binary_image "$METRICS_SERVER_IMAGE" metrics-server 65534:65534
  for image in "$PAUSE_IMAGE" "$COREDNS_IMAGE" "$METRICS_SERVER_IMAGE" "$APP_IMAGE" "${INFRA_IMAGES[@]}"; do
    import_image "$image"
  done
}

# ---------------------------------------------------------------- in the cluster

addons() {
  kubectl apply --server-side --force-conflicts -f "$ADDONS/coredns.yaml" -f "$ADDONS/metrics-server.yaml" >&2
  kubectl -n kube-system rollout status deployment/coredns --timeout=180s >&2
  kubectl -n kube-system rollout status deployment/metrics-server --timeout=180s >&2
}

# The Secret the overlay reads: the three keys from the environment when it has them, generated
# once otherwise (and kept in .infra/k8s/run/secrets.env, so a second `up` keeps the same keys).
# The engines' (decision 53): a certificate authority, the engines' certificate and a password per
# engine from scripts/engine-secrets.sh k8s (kept in .infra/k8s/run/engines), as three Secrets: in
# rsd-infra, rsd-infra-engines for the engines themselves; in rsd, the engines' URLs and passwords in
# rsd-secrets beside the keys, and the authority's certificate alone in rsd-engines-ca.
secrets() {
  local file="$RUN/secrets.env"
  if [[ ! -f "$file" ]]; then
    local jwt="${JWT_HS256_SECRET:-}" signing="${RESPONSE_SIGNING_KEYS:-}" webhook="${WEBHOOK_SECRET_KEY:-}"
    [[ -n "$jwt" ]] || jwt="$(openssl rand -hex 32)"
    [[ -n "$webhook" ]] || webhook="$(openssl rand -base64 32)"
    [[ -n "$signing" ]] || signing="$(cd "$ROOT" && npx rsd signing-key --kid k8s-local)" ||
      die "npx rsd signing-key failed (run npm ci and npx tsc -b first)"
    (
      umask 077
      {
        printf 'jwt-hs256-secret=%s\n' "$jwt"
        printf 'response-signing-keys=%s\n' "$signing"
        printf 'webhook-secret-key=%s\n' "$webhook"
      } >"$file"
    )
  fi
  local engines="$RUN/engines"
  bash "$ROOT/scripts/engine-secrets.sh" k8s "$engines"
  kubectl -n rsd-infra create secret generic rsd-infra-engines \
    --from-file="$engines/ca.crt" --from-file="$engines/engines.pem" --from-file="$engines/engines.crt" \
    --from-file="$engines/engines.key" --from-file="$engines/kafka-password" --from-file="$engines/mongo-password" \
    --from-file="$engines/redis-password" --from-file="$engines/redis-users.acl" \
    --dry-run=client -o yaml | kubectl apply -f - >&2
  # The console's own keys (decision 51), also into a file made before the console had its own service.
  if ! grep -q '^console-signing-key=' "$file"; then
    (
      umask 077
      printf 'console-signing-key=%s\n' "$(openssl genpkey -algorithm ed25519 -outform DER | openssl base64 -A | tr '+/' '-_' | tr -d '=')" >>"$file"
      printf 'console-session-key=%s\n' "$(openssl rand 32 | openssl base64 -A | tr '+/' '-_' | tr -d '=')" >>"$file"
    )
  fi
  # Decision 56's master key of the subjects' keys, also into a file made before it existed.
  if ! grep -q '^subject-keys-master-key=' "$file"; then
    (
      umask 077
      printf 'subject-keys-master-key=%s\n' "${SUBJECT_KEYS_MASTER_KEY:-$(openssl rand -base64 32)}" >>"$file"
    )
  fi
  # The base's own namespace (its Pod Security labels), before the Secrets that go in it.
  kubectl apply -f "$ROOT/k8s/base/namespace.yaml" >&2
  kubectl -n rsd create secret generic rsd-engines-ca --from-file="$engines/ca.crt" \
    --dry-run=client -o yaml | kubectl apply -f - >&2
  # The engines' URLs (MongoDB's with its user and password in it) and passwords beside the keys:
  # one env file, never on a command line.
  kubectl -n rsd create secret generic rsd-secrets --from-env-file=<(
    cat "$file"
    printf 'mongo-url=%s\n' "$(cat "$engines/mongo-url-ferretdb")"
    printf 'redis-url=rediss://redis.rsd-infra.svc.cluster.local:6379\n'
    printf 'kafka-sasl-password=%s\n' "$(cat "$engines/kafka-password")"
    printf 'redis-password=%s\n' "$(cat "$engines/redis-password")"
  ) --dry-run=client -o yaml | kubectl apply -f - >&2
}

deploy() {
  [[ -f "$OVERLAY/kustomization.yaml" ]] || die "no overlay at ${OVERLAY#"$ROOT"/}"
  kubectl apply -f "$ADDONS/infrastructure.yaml" >&2
  secrets
  kubectl apply -k "$OVERLAY" >&2
  local d
  for d in kafka mongo redis; do
    kubectl -n rsd-infra rollout status "deployment/$d" --timeout=300s >&2 || die "deployment $d (rsd-infra) not ready"
  done
  for d in rsd-credentials rsd-score-ingest rsd-notifier rsd-read-api rsd-console; do
    kubectl -n rsd rollout status "deployment/$d" --timeout=300s >&2 || die "deployment $d not ready"
  done
}

# ---------------------------------------------------------------- commands

print_env() {
  printf 'export KUBECONFIG=%q\n' "$ADMIN_KUBECONFIG"
  # shellcheck disable=SC2016 # the printed line expands $PATH where it is evaluated, not here
  printf 'export PATH=%q:"$PATH"\n' "$BIN"
  printf 'export READ_URL=%q\n' "http://127.0.0.1:$READ_PORT/v1"
  printf 'export CRED_URL=%q\n' "http://127.0.0.1:$CRED_PORT/v1"
  printf 'export INGEST_URL=%q\n' "http://127.0.0.1:$INGEST_PORT/v1"
  printf 'export NOTIFIER_URL=%q\n' "http://127.0.0.1:$NOTIFIER_PORT/v1"
  printf 'export CONSOLE_URL=%q\n' "http://127.0.0.1:$CONSOLE_PORT"
}

cmd_up() {
  [[ "$(id -u)" == 0 ]] || die "run as root (containerd, the kubelet and the network need it)"
  local t0 step
  t0="$(now)"
  mkdir -p "$RUN" "$LOGS"
  install_packages
  step="$(now)"
  build_all
  log "binaries ready in $(elapsed "$step")"
  network_up
  pki
  start_etcd
  start_containerd
  step="$(now)"
  images
  log "images ready in $(elapsed "$step")"
  start_apiserver
  start_control_plane
  start_node
  log "node $NODE_NAME ready after $(elapsed "$t0")"
  addons
  if [[ "${K8S_DEPLOY:-true}" == true ]]; then
    deploy
  fi
  log "cluster up in $(elapsed "$t0")"
  print_env
}

# Every mount under the run's directories, deepest first.
our_mounts() { awk -v a="$RUN/" -v b="$CTRD_STATE/" -v c="$CACHE/containerd/" '{ m = $5; gsub(/\\040/, " ", m); if (index(m, a) == 1 || index(m, b) == 1 || index(m, c) == 1) print m }' /proc/self/mountinfo | sort -r; }

# containerd-shim processes serving our socket (left when containerd stops before its tasks).
our_shims() {
  local p
  for p in /proc/[0-9]*; do
    { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -qF -- "-address $CTRD_SOCK " && echo "${p#/proc/}"
  done
  return 0
}

# The kubelet's own chains (KUBE-FIREWALL, KUBE-KUBELET-CANARY) and any KUBE-* chain left by
# kube-proxy or kube-router: the jumps to them first, then the chains.
remove_kube_chains() {
  local tool table rule chain
  for tool in iptables ip6tables; do
    command -v "$tool" >/dev/null || continue
    for table in filter nat mangle; do
      while read -r rule; do
        [[ -n "$rule" ]] && eval "$tool -w -t $table ${rule/-A /-D }" 2>/dev/null || true
      done < <("$tool" -w -t "$table" -S 2>/dev/null | grep -E '^-A (INPUT|OUTPUT|FORWARD|PREROUTING|POSTROUTING) .*-j KUBE-')
      for chain in $("$tool" -w -t "$table" -S 2>/dev/null | awk '$1 == "-N" && $2 ~ /^KUBE-/ { print $2 }'); do
        "$tool" -w -t "$table" -F "$chain" 2>/dev/null || true
      done
      for chain in $("$tool" -w -t "$table" -S 2>/dev/null | awk '$1 == "-N" && $2 ~ /^KUBE-/ { print $2 }'); do
        "$tool" -w -t "$table" -X "$chain" 2>/dev/null || true
      done
    done
  done
}

cmd_down() {
  local t0 m pid ns
  t0="$(now)"
  stop kube-router
  stop kube-proxy
  stop kubelet
  # Every pod sandbox removed through the CRI: containerd tears its network down (CNI DEL) and
  # removes its network namespace.
  if [[ -n "$(pid_of containerd)" ]]; then
    if [[ -x "$BIN/crictl" ]]; then
      local crictl=("$BIN/crictl" --runtime-endpoint "unix://$CTRD_SOCK" --timeout 60s)
      "${crictl[@]}" rmp -a -f >/dev/null 2>&1 || true
    fi
    # Whatever the CRI did not remove: its tasks killed, its containers deleted.
    local task
    for task in $(ctr tasks ls -q 2>/dev/null); do
      ctr tasks kill -s KILL "$task" >/dev/null 2>&1 || true
    done
    for task in $(ctr tasks ls -q 2>/dev/null); do
      ctr tasks delete -f "$task" >/dev/null 2>&1 || true
    done
    # A loop, not xargs: xargs would run the ctr binary without this script's --address and namespace.
    local container
    for container in $(ctr containers ls -q 2>/dev/null); do
      ctr containers delete "$container" >/dev/null 2>&1 || true
    done
  fi
  stop kube-scheduler
  stop kube-controller-manager
  stop kube-apiserver
  stop etcd
  stop containerd
  for pid in $(our_shims); do
    kill -KILL "$pid" 2>/dev/null || true
  done
  while read -r m; do
    [[ -n "$m" ]] && umount -l "$m" 2>/dev/null || true
  done < <(our_mounts)
  # Network namespaces of pods containerd could not remove (named cni-*, with no process left).
  for ns in $(ip netns list 2>/dev/null | awk '/^cni-/ {print $1}'); do
    [[ -z "$(ip netns pids "$ns" 2>/dev/null)" ]] && ip netns delete "$ns" 2>/dev/null || true
  done
  # The rules kube-proxy and kube-router made, the bridge, the guard.
  [[ -x "$BIN/kube-proxy" ]] && "$BIN/kube-proxy" --cleanup >/dev/null 2>&1 || true
  [[ -x "$BIN/kube-router" ]] && "$BIN/kube-router" --cleanup-config >/dev/null 2>&1 || true
  remove_kube_chains
  ip link show "$BRIDGE" >/dev/null 2>&1 && ip link delete "$BRIDGE"
  while iptables -w -D INPUT -p tcp -m multiport --dports "$API_PORT,10250" -j "$GUARD_CHAIN" 2>/dev/null; do :; done
  if iptables -w -n -L "$GUARD_CHAIN" >/dev/null 2>&1; then
    iptables -w -F "$GUARD_CHAIN"
    iptables -w -X "$GUARD_CHAIN"
  fi
  # The next `up` starts a new cluster (etcd's data goes); the binaries, the images in containerd,
  # the certificates and the generated keys stay.
  rm -rf "$RUN/cni/ipam" "$RUN/kubelet" "$RUN/etcd" "$CTRD_STATE" "$(dirname "$CTRD_SOCK")"
  # The kubelet's cgroups, empty once its pods are gone (deepest first; a busy one stays).
  find /sys/fs/cgroup/*/kubepods -depth -type d -exec rmdir {} \; 2>/dev/null || true
  local left
  left="$(our_mounts)"
  [[ -z "$left" ]] || die "mounts left: $left"
  log "down in $(elapsed "$t0")"
}

cmd_status() {
  [[ -f "$ADMIN_KUBECONFIG" ]] || die "no cluster (scripts/k8s.sh up)"
  kubectl get --raw /readyz >/dev/null 2>&1 || die "the API server does not answer"
  kubectl get nodes >&2
}

case "${1:-}" in
  packages) install_packages ;;
  build)
    mkdir -p "$LOGS"
    install_packages
    build_all
    ;;
  up) cmd_up ;;
  env) print_env ;;
  down) cmd_down ;;
  status) cmd_status ;;
  *)
    sed -n '2,16p' "$0" >&2
    exit 2
    ;;
esac
